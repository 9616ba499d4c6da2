"""Score a collection of graphs with a graphflow ONNX export of a graph model
(graph_classification, graph_regression), with numpy and onnxruntime only.

Run it in a folder holding the export and the collection it is applied to::

    python examples/portable/onnx_graphs_numpy.py
    # reads model.onnx, edges.tsv, features.npy, graph.npy (and edge_features.npy for gine)

and it writes ``logits.npy`` (one row of scores per graph) and ``predictions.npy`` (the
class id of every graph) there. The collection is one graph whose edges never join two
graphs: node rows ``0..N-1`` across all graphs, ``graph.npy`` the graph position of each.
docs/inference.md ("Which models export") explains the inputs.
"""

import numpy as np
import onnxruntime as ort

# edges.tsv: one "src<TAB>dst" line per directed edge (both directions of an undirected one)
edges = np.loadtxt("edges.tsv", dtype=np.int64, ndmin=2)   # (E, 2)
x = np.load("features.npy").astype(np.float32)             # (N, F), transformed features
graph = np.load("graph.npy").astype(np.int64)              # (N,) graph position of each node
feeds = {"x": x, "src": np.ascontiguousarray(edges[:, 0]),
         "dst": np.ascontiguousarray(edges[:, 1]),
         "weight": np.ones(len(edges), dtype=np.float32),   # no edge values in training
         "graph": graph, "num_graphs": np.array(graph.max() + 1, dtype=np.int64)}

model = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
if "edge_feat" in {i.name for i in model.get_inputs()}:    # gine: one row per edge
    feeds["edge_feat"] = np.load("edge_features.npy").astype(np.float32)
(logits,) = model.run(None, feeds)
prediction = logits.argmax(axis=1)                         # (G,) class ids
np.save("logits.npy", logits)
np.save("predictions.npy", prediction)
print(f"{len(prediction)} graph predictions written to predictions.npy")
