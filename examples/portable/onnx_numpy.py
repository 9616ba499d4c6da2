"""Run a graphflow ONNX export with numpy and onnxruntime only (no graphflow, no DGL).

Run it in a folder holding the export and the data it is applied to::

    python examples/portable/onnx_numpy.py      # reads model.onnx, edges.tsv, features.npy

and it writes ``predictions.npy`` (the class id of every node) and ``logits.npy`` there.
docs/inference.md ("Running an ONNX export with numpy only") explains the inputs.
"""

import numpy as np
import onnxruntime as ort

# edges.tsv: one "src<TAB>dst" line per directed edge, as the training graph held them
# (for an undirected edge list, append the reverse edges, as directed = false did).
edges = np.loadtxt("edges.tsv", dtype=np.int64, ndmin=2)   # (E, 2)
x = np.load("features.npy").astype(np.float32)             # (N, F), transformed features
src = np.ascontiguousarray(edges[:, 0])
dst = np.ascontiguousarray(edges[:, 1])
weight = np.ones(len(src), dtype=np.float32)               # no edge values in training

model = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
(logits,) = model.run(None, {"x": x, "src": src, "dst": dst, "weight": weight})
prediction = logits.argmax(axis=1)                         # (N,) class ids
np.save("logits.npy", logits)
np.save("predictions.npy", prediction)
print(f"{len(prediction)} predictions written to predictions.npy")
