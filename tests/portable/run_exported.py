"""Run exported models the way a service without graphflow would: plain torch for
TorchScript, onnxruntime for ONNX. Imports neither graphflow nor DGL, and checks it.

    python -I run_exported.py CASES.pt OUT.pt

CASES.pt (``torch.load(weights_only=True)``): a list of ``{"file", "format" ("onnx" |
"torchscript"), "form" ("full" | "block" | "typed"), "inputs": [x, src, dst, weight] or [x,
src_0, dst_0, weight_0, num_dst_0, ...]}``; a typed model's case has ``"xs"`` (one tensor
per node type), ``"rels"`` (one [src, dst, weight] per relation) and ``"names"`` (the ONNX
input names of ``xs`` then of the relations' tensors, flat). OUT.pt: the list of outputs, in order (a list of
tensors for a model with several outputs: a link model's embeddings and scores).
"""

import sys

import numpy as np
import torch


def run_torchscript(case):
    module = torch.jit.load(case["file"])
    with torch.no_grad():
        if case["form"] == "typed":
            return module(list(case["xs"]), [tuple(r) for r in case["rels"]])
    inputs = case["inputs"]
    with torch.no_grad():
        if case["form"] == "full":
            out = module(*inputs)
            return list(out) if isinstance(out, tuple) else out
        rest = inputs[1:]
        blocks = [tuple(rest[i:i + 4]) for i in range(0, len(rest), 4)]
        return module(inputs[0], blocks)


def run_onnx(case):
    import onnxruntime as ort

    session = ort.InferenceSession(case["file"], providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    if case["form"] == "typed":  # by name: the graph takes the inputs its output depends on
        flat = list(case["xs"]) + [t for rel in case["rels"] for t in rel]
        given = dict(zip(case["names"], flat))
        feeds = {name: given[name].numpy() for name in names}
    else:
        feeds = {name: t.numpy() for name, t in zip(names, case["inputs"])}
    outs = [torch.from_numpy(np.asarray(o)) for o in session.run(None, feeds)]
    return outs[0] if len(outs) == 1 else outs


def main(cases_path, out_path):
    cases = torch.load(cases_path, weights_only=True)
    outs = [run_onnx(c) if c["format"] == "onnx" else run_torchscript(c) for c in cases]
    assert "graphflow" not in sys.modules and "graphflow_plugins" not in sys.modules, \
        sorted(m for m in sys.modules if m.startswith("graphflow"))
    assert "dgl" not in sys.modules
    torch.save(outs, out_path)
    print(f"ran {len(outs)} exported models without graphflow or dgl")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
