"""GCN training speed: graphflow's sparse layers vs DGL ``GraphConv``, side by side.

Both models are 2-layer GCNs (hidden 16, ReLU, dropout 0.5 between the layers, Adam), built
with the same initial weights (each peer with its own dropout: graphflow's ``graphflow.sparse.dropout``,
torch's for DGL; both with the same Adam, lr 0.01, weight decay 5e-4, torch's fused kernel,
as ``graphflow run`` builds it), on the same graph (with self-loops, DGL's formats built
before timing), features and device, with the same threads (``--threads`` sets torch's and
DGL's own OpenMP setting). One
epoch is forward + backward + optimizer step on the training nodes. After ``--warmup``
untimed epochs, every side runs ``--repeats`` timed epochs, the order of the sides reversed
every epoch (``benchmarks/records.py``); we print each side's median, range and count of epochs
(the fastest beside them, labelled ``best``) and the ratios of the medians with their range
over epoch pairs. graphflow feeds its first layer sparse features when their density is
below ``--threshold`` (Cora: ~1.3% dense); it then also runs with the peer's dense input
(``graphflow (dense input)``), so that both inputs are printed: graphflow's sparse input
against DGL's dense product, and the same dense input on both sides. graphflow normalises
its edge values once per graph and caches them (``Adjacency.norm``); DGL's ``GraphConv``
normalises every epoch.

``--peer pyg`` puts PyG's ``GCNConv`` (``add_self_loops=False`` on the same self-looped graph)
in DGL's place, twice: ``cached=False`` (normalising every epoch, as DGL's ``GraphConv`` does)
and ``cached=True`` (normalising once, as graphflow does). It is the peer for ``--device
cuda``, since the DGL wheels on the registry have no CUDA: ``--device cuda --peer dgl`` runs
DGL on the CPU and labels its rows HARDWARE COMPARISON. ``--record`` saves the figures
under ``benchmarks/results/gcn/``.

Graphs: Cora (from the raw Planetoid files, loaded with DGL's ``CoraGraphDataset``; skipped
with a note if absent) and an arxiv-scale SBM (169,343 nodes, ~1.17M directed edges, 128
features, 40 classes).

    python benchmarks/gcn.py [--quick] [--device cpu|cuda] [--planetoid DIR]
    python benchmarks/gcn.py --device cuda --peer pyg   # DGL 2.1 on the registry is CPU-only
    python benchmarks/gcn.py --density-sweep    # the sparse-feature threshold table
    python benchmarks/gcn.py --kernels          # the SpMM kernel candidates

The output starts with the machine (CPU, ISA flags, versions, caps and graphflow's measured
choices, ``benchmarks/machine.py``); the last output line is one JSON object with the
figures and that record under ``"machine"``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.io.synthetic import sbm  # noqa: E402
from graphflow.nn import GCNConv  # noqa: E402
from graphflow.sparse import Adjacency, as_features  # noqa: E402
from graphflow.sparse.features import DEFAULT_DENSITY_THRESHOLD, density, dropout  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow.testing import planetoid_dir  # noqa: E402
from graphflow_plugins.loaders.planetoid import link_layout  # noqa: E402

from benchmarks import machine, records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402
from graphflow.sparse import gemm  # noqa: E402

PEERS = {"dgl": "DGL GraphConv", "pyg": "PyG GCNConv"}
SIDES = {"graphflow": "graphflow", "graphflow_dense": "graphflow (dense input)",
         "dgl": "DGL GraphConv", "pyg": "PyG GCNConv (cached=False)",
         "pyg_cached": "PyG GCNConv (cached=True)"}
ARXIV_NODES, ARXIV_EDGES, ARXIV_FEATS, ARXIV_CLASSES = 169_343, 1_166_243, 128, 40


@dataclass
class Data:
    name: str
    g: dgl.DGLGraph  # with self-loops, on the device (on the CPU for ``--peer pyg``)
    feat: torch.Tensor  # (N, F) dense
    label: torch.Tensor  # (N,)
    train_mask: torch.Tensor  # (N,) bool
    num_classes: int


# ---------------------------------------------------------------------------------- data
def load_cora(root: Path, device: torch.device) -> Data | None:
    """Cora through DGL's loader, laid out as DGL expects by the planetoid loader's helper."""
    if not (root / "ind.cora.x").exists():
        return None
    with tempfile.TemporaryDirectory(prefix="graphflow-cora-") as tmp:
        raw_dir = link_layout("cora", root, Path(tmp))
        g = dgl.data.CoraGraphDataset(raw_dir=str(raw_dir), force_reload=True, verbose=False)[0]
    g = dgl.add_self_loop(dgl.remove_self_loop(g)).to(device)
    g.create_formats_()  # DGL's formats before any timing, as graphflow's CSR is built
    return Data("cora", g, g.ndata["feat"].to(device), g.ndata["label"].to(device),
                g.ndata["train_mask"].to(device), 7)


def arxiv_scale(device: torch.device, seed: int = 0) -> Data:
    """SBM with ogbn-arxiv's size: 169,343 nodes, ~1.17M directed edges, 128 features."""
    n, c = ARXIV_NODES, ARXIV_CLASSES
    size = n / c
    pairs_in = c * size * (size - 1) / 2
    pairs_out = c * (c - 1) / 2 * size * size
    undirected, homophily = ARXIV_EDGES / 2, 0.65
    gen = sbm(n, c, ARXIV_FEATS, p_in=homophily * undirected / pairs_in,
              p_out=(1 - homophily) * undirected / pairs_out, seed=seed, signal=0.5)
    g = dgl.add_self_loop(dgl.graph((gen.src, gen.dst), num_nodes=n)).to(device)
    g.create_formats_()  # DGL's formats before any timing, as graphflow's CSR is built
    train = torch.rand(n, generator=torch.Generator().manual_seed(seed)) < 0.54  # arxiv: 54%
    return Data("arxiv-scale", g, gen.feat.to(device), gen.label.to(device),
                train.to(device), c)


# ---------------------------------------------------------------------------------- models
class GraphflowGCN(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, dropout: float = 0.5):
        super().__init__()
        self.conv1, self.conv2 = GCNConv(in_dim, hidden), GCNConv(hidden, out_dim)
        self.dropout = dropout

    def forward(self, adj: Adjacency, x) -> torch.Tensor:
        h = F.relu(self.conv1(adj, x))
        h = dropout(h, self.dropout, self.training)  # graphflow's, as GNNStack applies it
        return self.conv2(adj, h)


class DGLGCN(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, dropout: float = 0.5):
        super().__init__()
        self.conv1 = dgl.nn.GraphConv(in_dim, hidden, activation=F.relu)
        self.conv2 = dgl.nn.GraphConv(hidden, out_dim)
        self.dropout = nn.Dropout(dropout)

    def forward(self, g: dgl.DGLGraph, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(g, self.dropout(self.conv1(g, x)))


class PyGGCN(nn.Module):
    def __init__(self, in_dim: int, hidden: int, out_dim: int, dropout: float = 0.5,
                 cached: bool = False):
        super().__init__()
        from torch_geometric.nn import GCNConv as PyGConv

        self.conv1 = PyGConv(in_dim, hidden, cached=cached, add_self_loops=False)
        self.conv2 = PyGConv(hidden, out_dim, cached=cached, add_self_loops=False)
        self.dropout = nn.Dropout(dropout)

    def forward(self, edge_index: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
        return self.conv2(self.dropout(F.relu(self.conv1(x, edge_index))), edge_index)


def dgl_runs_on(device: torch.device) -> bool:
    """Whether this DGL build can put a graph on ``device`` (the registry's wheels: CPU only)."""
    if device.type == "cpu":
        return True
    try:
        dgl.graph(([0], [0])).to(device)
        return True
    except Exception:  # noqa: BLE001 - DGL raises its own error types for a missing backend
        return False


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_ms(device: torch.device):
    """A :func:`benchmarks.records.race` ``measure``: milliseconds of one call, synchronised."""
    def measure(fn, rep: int) -> float:
        _sync(device)
        t = time.perf_counter()
        fn(rep)
        _sync(device)
        return (time.perf_counter() - t) * 1e3
    return measure


def compare(data: Data, device: torch.device, warmup: int, repeats: int,
            threshold: float, seed: int = 0, peer: str = "dgl") -> dict:
    """Epoch times of every side (graphflow with its own input, graphflow with the peer's
    dense input when its own is sparse, the peer: DGL, or PyG both normalising every epoch
    and cached), the order of the sides reversed every epoch; medians, spreads and ratios.

    DGL runs where its graph is (``data.g.device``): on the CPU when graphflow runs on a GPU
    and DGL has no CUDA, a row then marked ``hardware_comparison``."""
    peer_device = data.g.device if peer == "dgl" else device
    cpu_feat = data.feat
    data = Data(data.name, data.g, data.feat.to(device), data.label.to(device),
                data.train_mask.to(device), data.num_classes)  # no-ops unless --peer pyg
    torch.manual_seed(seed)
    ours = GraphflowGCN(data.feat.shape[1], 16, data.num_classes).to(device)
    ref = (DGLGCN if peer == "dgl" else PyGGCN)(data.feat.shape[1], 16,
                                                data.num_classes).to(peer_device)
    with torch.no_grad():  # same initial weights
        for a, b in ((ours.conv1, ref.conv1), (ours.conv2, ref.conv2)):
            if peer == "dgl":
                b.weight.copy_(a.weight)
            else:  # PyG's Linear keeps (out, in)
                b.lin.weight.copy_(a.weight.t())
            b.bias.copy_(a.bias)
    if peer == "dgl":
        theirs = data.g
    else:  # (2, E) on the device, built before timing
        theirs = torch.stack(data.g.edges()).to(device)
    t0 = time.perf_counter()
    adj = Adjacency.from_graph(data.g).to(device)  # once per graph, outside the loop
    x = as_features(data.feat, threshold)
    _sync(device)
    setup_ms = (time.perf_counter() - t0) * 1e3
    idx = data.train_mask.nonzero().flatten()
    y = data.label[idx]

    targets = {d.type: (idx.to(d), y.to(d)) for d in (device, peer_device)}

    def step(model: nn.Module, opt: torch.optim.Optimizer, graph, feats) -> float:
        model.train()
        opt.zero_grad(set_to_none=True)
        out = model(graph, feats)
        i, t = targets[out.device.type]
        loss = F.cross_entropy(out[i], t)
        loss.backward()
        opt.step()
        return loss.item()

    dense_x = data.feat if peer_device == device else cpu_feat.to(peer_device)
    sides = {"graphflow": (ours, adj, x)}
    if not isinstance(x, torch.Tensor):  # the same dense input as the peer, beside it
        ours_dense = GraphflowGCN(data.feat.shape[1], 16, data.num_classes).to(device)
        ours_dense.load_state_dict(ours.state_dict())
        sides["graphflow_dense"] = (ours_dense, adj, data.feat)
    if peer == "dgl":
        sides["dgl"] = (ref, theirs, dense_x)
    else:  # PyG normalising every epoch (cached=False) and once (cached=True, as graphflow)
        cached = PyGGCN(data.feat.shape[1], 16, data.num_classes, cached=True).to(device)
        cached.load_state_dict(ref.state_dict())
        sides["pyg"] = (ref, theirs, dense_x)
        sides["pyg_cached"] = (cached, theirs, dense_x)
    runs = {name: (model, make_optimizer("adam", model, lr=0.01, weight_decay=5e-4), graph,
                   feats)  # the same Adam
            for name, (model, graph, feats) in sides.items()}
    losses: dict[str, float] = {}

    def epoch_of(name: str):
        model, opt, graph, feats = runs[name]

        def run(rep: int) -> None:
            losses[name] = step(model, opt, graph, feats)
        return run

    # warm-up and timed epochs, the order of the sides reversed every epoch
    raced = records.race({name: epoch_of(name) for name in runs}, repeats, warmup=warmup,
                         measure=timed_ms(device))
    ms = {k: raced.median(k) for k in runs}
    sparse = not isinstance(x, torch.Tensor)
    ratios = {f"{name}/graphflow": raced.ratio(name, "graphflow")
              for name in runs if name != "graphflow" and not name.startswith("graphflow")}
    if sparse:
        ratios.update({f"{name}/graphflow_dense": raced.ratio(name, "graphflow_dense")
                       for name in runs if not name.startswith("graphflow")})
    main_peer = peer  # the peer of the headline: DGL, or PyG normalising every epoch
    return {
        "graph": data.name, "nodes": data.g.num_nodes(), "edges": data.g.num_edges(),
        "features": data.feat.shape[1], "feature_density": round(density(data.feat), 5),
        "sparse_input": sparse, "peer": peer, "sides": list(runs),
        "inputs": {name: ("sparse" if name == "graphflow" and sparse else "dense")
                   for name in runs},
        "graphflow_normalisation": "cached (edge values normalised once per graph)",
        "graph_device": str(data.g.device), "device": str(device),
        "hardware_comparison": peer_device.type != device.type,
        "graphflow_ms": round(ms["graphflow"], 3), f"{main_peer}_ms": round(ms[main_peer], 3),
        "speedup": round(ms[main_peer] / ms["graphflow"], 2),
        "ms": {k: round(v, 3) for k, v in ms.items()},
        "spread_ms": {k: {kk: round(vv, 3) for kk, vv in raced.spread(k).items()}
                      for k in runs},
        "epochs_ms": {k: [round(v, 3) for v in vs] for k, vs in raced.times.items()},
        "ratios": {k: {kk: round(vv, 3) for kk, vv in v.items()} for k, v in ratios.items()},
        "orders": raced.orders, "calls": raced.calls,
        "graphflow_best_ms": round(min(raced.times["graphflow"]), 3),
        f"{main_peer}_best_ms": round(min(raced.times[main_peer]), 3),
        "graphflow_setup_ms": round(setup_ms, 1),
        "final_loss": {k: round(v, 4) for k, v in losses.items()},
    }


# ---------------------------------------------------------------------------------- sweep
def density_sweep(device: torch.device, repeats: int) -> list[dict]:
    """First-layer cost (x @ W forward + weight gradient) dense vs sparse, by density."""
    rows = []
    gen = torch.Generator().manual_seed(0)
    for n, f in ((2708, 1433), (169_343, 128)):
        w = torch.randn(f, 16, generator=gen).to(device).requires_grad_()
        for d in (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.3, 0.5):
            x = torch.randn(n, f, generator=gen) * (torch.rand(n, f, generator=gen) < d)
            x = x.to(device)
            sx = as_features(x, 1.0)
            from graphflow.sparse.features import matmul

            def run(feats) -> None:
                out = matmul(feats, w)
                out.sum().backward()
                w.grad = None

            raced = records.race({"dense": lambda rep, feats=x: run(feats),
                                  "sparse": lambda rep, feats=sx: run(feats)},
                                 repeats, warmup=3, measure=timed_ms(device))
            dense_ms, sparse_ms = raced.median("dense"), raced.median("sparse")
            rows.append({"shape": f"{n}x{f}", "density": d, "dense_ms": round(dense_ms, 3),
                         "sparse_ms": round(sparse_ms, 3),
                         "dense/sparse": round(dense_ms / sparse_ms, 2),
                         "spread_ms": {k: raced.spread(k) for k in raced.times}})
            print(f"{n:>7}x{f:<5} density {d:<6} dense {dense_ms:8.3f} ms  sparse "
                  f"{sparse_ms:8.3f} ms  ratio {dense_ms / sparse_ms:6.2f}", flush=True)
    return rows


def kernel_sweep(device: torch.device, repeats: int) -> list[dict]:
    """CSR SpMM candidates on random graphs, interleaved: graphflow's kernel (embedding_bag
    over int32 CSR), torch.sparse.mm on a CSR tensor (MKL / cuSPARSE), gather + index_add."""
    import warnings

    from graphflow.sparse.ops import csr_matmul, kernel_csr

    rows = []
    for n, e in ((2708, 13_264), (169_343, 1_334_049)):
        gen = torch.Generator().manual_seed(0)
        src, dst = torch.randint(0, n, (e,), generator=gen), torch.randint(0, n, (e,), generator=gen)
        adj = Adjacency.from_edges(src, dst, n, n, device=device)
        values = adj.norm("sym")
        op = kernel_csr(adj, values)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mkl = torch.sparse_csr_tensor(op.indptr, op.indices, values, (n, n),
                                          check_invariants=False)
        rows_idx, cols = adj.row_index, adj.indices
        for f in (7, 16, 40, 128):
            x = torch.randn(n, f, generator=gen).to(device)
            fns = {
                "embedding_bag": lambda: csr_matmul(op, x, n),
                "torch.sparse.mm": lambda: torch.sparse.mm(mkl, x),
                "index_add": lambda: x.new_zeros(n, f).index_add_(0, rows_idx,
                                                                  x[cols] * values[:, None]),
            }
            reps = repeats if n < 10_000 else max(3, repeats // 4)
            raced = records.race({k: (lambda rep, fn=fn: fn()) for k, fn in fns.items()}, reps,
                                 warmup=2, measure=timed_ms(device))
            ms = {k: round(raced.median(k), 3) for k in fns}
            rows.append({"nodes": n, "edges": e, "features": f, **ms,
                         "spread_ms": {k: raced.spread(k) for k in fns}})
            print(f"{n:>7} nodes {e:>9,} edges F={f:<4} " + "  ".join(
                f"{k} {v:8.3f} ms" for k, v in ms.items()), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="few repeats (a smoke run)")
    p.add_argument("--device", default="cpu", help="cpu or cuda (default cpu)")
    p.add_argument("--planetoid", type=Path, default=None,
                   help="folder of raw Planetoid files (default: ../shared/data/planetoid)")
    p.add_argument("--repeats", type=int, default=None, help="timed epochs per model")
    p.add_argument("--warmup", type=int, default=None, help="untimed epochs per model")
    p.add_argument("--threshold", type=float, default=DEFAULT_DENSITY_THRESHOLD,
                   help="sparse-feature density threshold (0 = always dense)")
    p.add_argument("--threads", type=int, default=None,
                   help="CPU threads of torch and DGL (default: torch's)")
    p.add_argument("--gemm", choices=list(gemm.CHOICES), default="auto",
                   help="graphflow's CPU dense products (default auto: measured per shape)")
    p.add_argument("--only", choices=["cora", "arxiv"], default=None, help="one graph only")
    p.add_argument("--peer", choices=list(PEERS), default="dgl",
                   help="the peer model: DGL's GraphConv, or PyG's GCNConv (for CUDA)")
    p.add_argument("--density-sweep", action="store_true",
                   help="time dense vs sparse first-layer products by feature density")
    p.add_argument("--kernels", action="store_true",
                   help="time the SpMM kernel candidates on random graphs")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/gcn/ (benchmarks/records.py)")
    args = p.parse_args(argv)
    args.load_before = load_average()
    if args.peer == "pyg":
        try:
            import torch_geometric  # noqa: F401
        except ImportError:
            p.error("--peer pyg needs PyTorch Geometric: pip install torch_geometric")
    device = torch.device(args.device)
    machine.set_threads(args.threads or 0)
    table, _, calibration = machine.choices(args.gemm)
    args.machine = machine.show(calibration)
    if device.type == "cuda" and not torch.cuda.is_available():
        print("CUDA is not available on this machine", file=sys.stderr)
        return 2
    warmup = args.warmup if args.warmup is not None else (3 if args.quick else 10)
    repeats = args.repeats if args.repeats is not None else (5 if args.quick else 40)
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, device {device}")
    with gemm.applied(args.gemm, table):
        return run(args, device, warmup, repeats)


def run(args: argparse.Namespace, device: torch.device, warmup: int, repeats: int) -> int:

    if args.kernels:
        rows = kernel_sweep(device, repeats)
        print(json.dumps({"benchmark": "gcn-kernels", "device": str(device),
                          "threads": torch.get_num_threads(), "rows": rows,
                          "machine": args.machine}))
        return 0
    if args.density_sweep:
        rows = density_sweep(device, repeats)
        print(json.dumps({"benchmark": "gcn-density-sweep", "device": str(device),
                          "threads": torch.get_num_threads(), "rows": rows,
                          "machine": args.machine}))
        return 0

    results = []
    # DGL's graph goes to the device for DGL only; a CPU-only DGL keeps it (and runs) on the
    # CPU: graphflow on the GPU against DGL on CPU cores, a row labelled hardware comparison
    graph_device = device if args.peer == "dgl" and dgl_runs_on(device) else torch.device("cpu")
    if args.only in (None, "cora"):
        root = args.planetoid or planetoid_dir()
        cora = load_cora(root, graph_device)
        if cora is None:
            print(f"note: Cora skipped, no raw Planetoid files in {root} (use --planetoid DIR)")
        else:
            results.append(compare(cora, device, warmup, repeats, args.threshold,
                                   peer=args.peer))
    if args.only in (None, "arxiv"):
        results.append(compare(arxiv_scale(graph_device), device, max(2, warmup // 2),
                               max(3, repeats // 2), args.threshold, peer=args.peer))
    for r in results:
        print(f"{r['graph']:>12}: {r['nodes']:,} nodes, {r['edges']:,} edges, "
              f"{r['features']} features (density {r['feature_density']}, graphflow's input "
              f"{'sparse' if r['sparse_input'] else 'dense'}); graphflow normalises the edge "
              f"values once per graph and caches them (as PyG's cached=True)")
        if r["hardware_comparison"]:
            print(f"{'':>12}  HARDWARE COMPARISON: graphflow on {r['device']}, {PEERS[r['peer']]} "
                  f"on {r['graph_device']} (DGL's wheels have no CUDA)")
        n = len(r["orders"])
        print(f"{'':>12}  ms per epoch, {n} epochs each, the order of the sides reversed every "
              f"epoch:")
        for name in r["sides"]:
            s = r["spread_ms"][name]
            print(f"{'':>12}    {SIDES.get(name, name):<34} median {s['median']:8.3f} "
                  f"({s['min']:.3f}-{s['max']:.3f}, n {s['n']}; best {s['min']:.3f})  "
                  f"{r['inputs'][name]} input")
        for key, v in r["ratios"].items():
            slow, fast = key.split("/")
            print(f"{'':>12}    {SIDES.get(slow, slow)} / {SIDES.get(fast, fast)}: "
                  f"{v['median']:.2f}x (epoch pairs {v['min']:.2f}-{v['max']:.2f})")
    out = {"benchmark": "gcn", "device": str(device), "quick": args.quick,
           "threads": torch.get_num_threads(), "results": results, "machine": args.machine}
    if args.record:
        write("gcn", out, load_before=args.load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
