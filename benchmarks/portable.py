"""Full-graph inference speed of the portable exports against graphflow's own model.

One trained-shape model (random weights: speed does not depend on them) of each kind, on an
R-MAT graph (power-law degrees) with random features, run by three peers in one process:

* graphflow: ``model(adj, x)`` in eval mode under ``torch.no_grad()`` (CSR SpMM; the
  adjacency and its self-loops built before timing, as a run reuses them);
* TorchScript: the ``torchscript`` export, ``torch.jit.load`` + call, from raw edges
  (self-loops and degrees computed inside, every call);
* ONNX Runtime: the ``onnx`` export in an ``InferenceSession`` (CPU provider, default graph
  optimisations), from raw edges.

Every peer gets the same threads (``--threads``: ``torch.set_num_threads`` and ONNX Runtime's
``intra_op_num_threads``) and the same inputs. After one untimed call each, the peers
alternate call by call (``--repeats``); we print the median seconds of each, the ratios to
graphflow, and the largest difference of their outputs from graphflow's.

    python benchmarks/portable.py [--quick] [--nodes N] [--edges E] [--threads T]

``--quick``: 20k nodes, 200k edges. The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch

from graphflow.io.synthetic import rmat
from graphflow.portable import export_onnx, export_torchscript
from graphflow.sparse import Adjacency
from graphflow_plugins.models.gcn import GCNModel
from graphflow_plugins.models.sage import SAGEModel


def main(argv: list[str] | None = None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nodes", type=int, default=200_000)
    p.add_argument("--edges", type=int, default=2_000_000)
    p.add_argument("--features", type=int, default=128)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--classes", type=int, default=16)
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    if a.quick:
        a.nodes, a.edges = 20_000, 200_000
    import onnxruntime as ort

    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    g = rmat(a.nodes, a.edges, seed=0)
    src, dst = g.src.long(), g.dst.long()
    x = torch.randn(a.nodes, a.features)
    weight = torch.ones(src.shape[0])
    adj = Adjacency.from_edges(src, dst, a.nodes, a.nodes)
    print(f"R-MAT graph: {a.nodes} nodes, {src.shape[0]} edges, {a.features} features; "
          f"{a.threads} thread(s); torch {torch.__version__}, onnxruntime {ort.__version__}")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        for kind, cls in (("gcn", GCNModel), ("sage", SAGEModel)):
            model = cls(cls.Options(hidden=a.hidden)).build(a.features, a.classes).eval()
            export_onnx(model, Path(tmp) / f"{kind}.onnx")
            export_torchscript(model, Path(tmp) / f"{kind}.pt")
            opts = ort.SessionOptions()
            opts.intra_op_num_threads = a.threads
            opts.inter_op_num_threads = 1
            session = ort.InferenceSession(str(Path(tmp) / f"{kind}.onnx"), opts,
                                           providers=["CPUExecutionProvider"])
            scripted = torch.jit.load(str(Path(tmp) / f"{kind}.pt"))
            feeds = {"x": x.numpy(), "src": src.numpy(), "dst": dst.numpy(),
                     "weight": weight.numpy()}
            peers = {
                "graphflow": lambda m=model: m(adj, x),
                "torchscript": lambda s=scripted: s(x, src, dst, weight),
                "onnxruntime": lambda s=session: torch.from_numpy(s.run(None, feeds)[0]),
            }
            with torch.no_grad():
                outs = {name: fn() for name, fn in peers.items()}  # untimed first call
                times: dict[str, list[float]] = {name: [] for name in peers}
                for _ in range(a.repeats):
                    for name, fn in peers.items():
                        start = time.perf_counter()
                        fn()
                        times[name].append(time.perf_counter() - start)
            med = {name: statistics.median(t) for name, t in times.items()}
            diff = {name: float((outs[name] - outs["graphflow"]).abs().max())
                    for name in peers if name != "graphflow"}
            results[kind] = {"seconds": med, "max_abs_diff": diff}
            print(f"{kind}: " + "  ".join(
                f"{name} {med[name] * 1e3:.1f} ms ({med[name] / med['graphflow']:.2f}x)"
                for name in peers) + "  max |diff| " +
                "  ".join(f"{k} {v:.1e}" for k, v in diff.items()))
    summary = {"nodes": a.nodes, "edges": int(src.shape[0]), "features": a.features,
               "threads": a.threads, "results": results}
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    sys.exit(main() and 0)
