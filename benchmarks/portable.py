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
``intra_op_num_threads``, its threads not spinning between runs), the same inputs and the
same ``malloc`` setting (``retain``, as ``graphflow run`` and ``predict`` set it). After one
untimed call each, every peer is called ``--repeats`` times, the order of the peers reversed
on every repetition (``benchmarks/records.py``); we print each peer's median with its range and
count (the fastest labelled ``best``), the ratios of the medians to graphflow's, and the
largest difference of their outputs from graphflow's. ``--record`` saves the figures under
``benchmarks/results/portable/``.

    python benchmarks/portable.py [--quick] [--nodes N] [--edges E] [--threads T]
    python benchmarks/portable.py --graphs G [--threads T]

``--quick``: 20k nodes, 200k edges. ``--graphs G``: a graph model instead, GIN (4 layers,
hidden 64, sum read-out of the input and every layer, as ``benchmarks/graph_classification.py``
trains it)
scoring a generated collection of ``G`` graphs of 10-100 nodes: graphflow's ``GraphModel`` in
batches of ``--graph-batch`` graphs (1024, ``graphflow predict``'s default; the batches cut
inside the timing, as predict cuts them) and on one batch of every graph (cut before timing)
against the exports, which take the whole collection's raw edges and each node's graph
(``graph``, ``num_graphs``). The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.graphs.batch import GraphBatcher  # noqa: E402
from graphflow.graphs.model import GraphModel  # noqa: E402
from graphflow.io.synthetic import rmat  # noqa: E402
from graphflow.portable import export_onnx, export_torchscript  # noqa: E402
from graphflow.runtime import allocator  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402
from graphflow_plugins.models.gcn import GCNModel  # noqa: E402
from graphflow_plugins.models.gin import GINModel, GINOptions  # noqa: E402
from graphflow_plugins.models.sage import SAGEModel  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.graph_classification import HIDDEN, LAYERS, generate  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402


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
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/portable/ "
                        "(benchmarks/records.py)")
    p.add_argument("--graphs", type=int, default=0, metavar="G",
                   help="score a generated collection of G graphs with a GIN graph model")
    p.add_argument("--graph-batch", type=int, default=1024, metavar="B",
                   help="--graphs: graphs per batch of graphflow's main peer (as predict)")
    a = p.parse_args(argv)
    a.load_before = load_average()
    if a.graphs < 0:
        p.error(f"--graphs must be at least 0, got {a.graphs}")
    if a.graph_batch < 1:
        p.error(f"--graph-batch must be at least 1, got {a.graph_batch}")
    if a.quick:
        a.nodes, a.edges = 20_000, 200_000
    import onnxruntime as ort

    allocator.apply("retain")  # what graphflow run / predict set, for the whole process
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    if a.graphs:
        return graph_models(a, ort)
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
            inputs = (x, src, dst, weight)
            results[kind] = race(kind, {"graphflow": lambda m=model: m(adj, x)},
                                 Path(tmp) / kind, inputs, ["x", "src", "dst", "weight"], a,
                                 ort)
    summary = {"nodes": a.nodes, "edges": int(src.shape[0]), "features": a.features,
               "threads": a.threads, "results": results}
    if a.record:
        write("portable", summary, load_before=a.load_before)
    print(json.dumps(summary))
    return summary


def race(kind: str, ours, stem: Path, inputs: tuple[torch.Tensor, ...], names: list[str],
         a: argparse.Namespace, ort) -> dict:
    """Time graphflow's calls ``ours`` (``{name: fn}``, the first the reference) against the
    exports ``stem``.onnx / ``stem``.pt on ``inputs`` (alternating, median of
    ``a.repeats``); print and return the figures."""
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = a.threads
    opts.inter_op_num_threads = 1
    # ONNX Runtime's threads spin after each run by default, taking the cores from the peer
    # timed next in this process; without spinning each peer has the cores to itself.
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    session = ort.InferenceSession(str(stem.with_suffix(".onnx")), opts,
                                   providers=["CPUExecutionProvider"])
    scripted = torch.jit.load(str(stem.with_suffix(".pt")))
    feeds = {name: t.numpy() for name, t in zip(names, inputs)}
    peers = {
        **ours,
        "torchscript": lambda: scripted(*inputs),
        "onnxruntime": lambda: torch.from_numpy(session.run(None, feeds)[0]),
    }
    with torch.no_grad():
        outs = {name: fn() for name, fn in peers.items()}  # untimed first call
        raced = records.race({name: (lambda rep, fn=fn: fn()) for name, fn in peers.items()},
                             a.repeats)
    med = {name: raced.median(name) for name in peers}
    first = next(iter(ours))
    diff = {name: float((outs[name] - outs[first]).abs().max())
            for name in peers if name != first}
    width = max(len(name) for name in peers)
    print(f"{kind} ({a.repeats} calls each, the order reversed every call):")
    for name in peers:
        print(f"  {raced.summary(name, scale=1e3, unit='ms', digits=1, width=width)}  "
              f"{med[name] / med[first]:.2f}x of {first}")
    print("  max |diff| " + "  ".join(f"{k} {v:.1e}" for k, v in diff.items()))
    return {"seconds": med, "max_abs_diff": diff, **raced.record()}


def graph_models(a: argparse.Namespace, ort) -> dict:
    """``--graphs``: GIN scoring a generated collection (see the module docstring)."""
    g, ptr, _ = generate(a.graphs, 0)
    n = g.num_nodes()
    src, dst = g.edges()
    x = g.ndata["feat"]
    batcher = GraphBatcher(Adjacency.from_graph(g), ptr, x)
    ids = torch.arange(a.graphs)
    batch = batcher.batch(ids)  # every graph at once, cut before timing
    encoder = GINModel(GINOptions(layers=LAYERS, hidden=HIDDEN, norm="batch", dropout=0.0)) \
        .build(x.shape[1], HIDDEN)
    model = GraphModel.probe(encoder, batch, "all", 2, pooling="sum", dropout=0.5).eval()
    graph = torch.repeat_interleave(torch.arange(a.graphs), ptr[1:] - ptr[:-1])
    inputs = (x, src.long(), dst.long(), torch.ones(src.shape[0]), graph,
              torch.tensor(a.graphs))
    print(f"collection: {a.graphs} graphs, {n} nodes, {src.shape[0]} edges, {x.shape[1]} "
          f"features; GIN {LAYERS} x {HIDDEN}, sum read-out of every layer; {a.threads} "
          f"thread(s); torch {torch.__version__}, onnxruntime {ort.__version__}")
    with tempfile.TemporaryDirectory() as tmp:
        export_onnx(model, Path(tmp) / "gin.onnx")
        export_torchscript(model, Path(tmp) / "gin.pt")
        ours = {  # batches as graphflow predict cuts them (timed), and one batch of all
            f"graphflow ({a.graph_batch} a batch)": lambda: torch.cat(
                [model(b)[0] for b in batcher.epoch(ids, a.graph_batch)]),
            "graphflow (one batch)": lambda: model(batch)[0]}
        result = race("gin graphs", ours, Path(tmp) / "gin", inputs,
                      ["x", "src", "dst", "weight", "graph", "num_graphs"], a, ort)
    summary = {"graphs": a.graphs, "nodes": n, "edges": int(src.shape[0]),
               "threads": a.threads, "results": {"gin_graphs": result}}
    if a.record:
        write("portable", summary, load_before=a.load_before)
    print(json.dumps(summary))
    return summary


if __name__ == "__main__":
    sys.exit(main() and 0)
