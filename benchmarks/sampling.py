"""Neighbor sampling speed: graphflow's ``neighbor`` sampler vs DGL's ``NeighborSampler``.

Graph: an R-MAT graph (``graphflow.io.synthetic.rmat``, power-law in-degrees, duplicates kept)
of 1M nodes and 20M edges (``--quick``: 200k / 4M).

1. **Sampling, one call at a time.** The same seed batches (a fixed random permutation of
   all nodes, ``--batch`` 1024) with fanouts [15, 10, 5], without replacement, sampled by
   graphflow's ``neighbor`` (``sampler.sample``: seed checks, three layers, relabelling,
   blocks; one thread) and by DGL's ``NeighborSampler.sample_blocks`` (C++, every OpenMP
   thread), batch by batch in one process, the order of the two reversed every batch, so
   that noise from other processes and the caches one leaves hit both alike. Figure: sampled
   edges per second (edges of all blocks / time in the sampler), ``call_ratio`` = graphflow /
   DGL, and each sampler's median ms per batch with its range and count.
   **Throughput.** Batches consumed in a row, as a training loop does (``--throughput-batches``,
   default 160, from another fixed permutation; 3 rounds), graphflow's
   ``iterate`` with its defaults (2 background workers, each sampling its own batches on one
   core) against the best of DGL's ways to do it (``sample_blocks`` in a loop, and its
   ``DataLoader`` with 0 and 2 worker processes), in rounds, the order of the four reversed
   every round (``benchmarks/records.py``). Each way's rate is the median of its rounds (range and
   count printed); the best DGL way is the one of the highest median. ``ratio`` = graphflow /
   best DGL way (medians), ``ratio_spread`` its range over the rounds: the figure the
   sampling goal is judged by.
   With ``--device cuda``, graphflow samples (and trains) on the GPU while DGL, whose wheels
   here have no CUDA, runs on the CPU: every such figure is labelled HARDWARE COMPARISON in
   the output, and ``hardware_comparison`` is true in the JSON.
2. **End to end** (``--epochs`` > 0, default 1): sampled GraphSAGE training, 3 layers,
   hidden 256, mean aggregator, 100 random features, 16 classes, Adam; graphflow (``iterate``
   + ``graphflow.nn.SAGEConv`` on ``Adjacency.from_block``, threads and sampling workers from
   the core policy ``graphflow.runtime.cores`` as a ``node_classification`` stage gets them) vs a DGL
   script (``dgl.dataloading.DataLoader`` + ``NeighborSampler`` + ``dgl.nn.SAGEConv``, torch's
   threads); both models apply relu in place between layers (as ``GNNStack`` does on
   SAGE). Each epoch is a whole pass over all N nodes in the same fixed order (977 batches
   at 1M nodes), ``--epochs`` (default 2) of each peer, the order reversed every epoch
   (graphflow, DGL; DGL, graphflow; ...: ``benchmarks/records.py``) so that load from other
   processes and the state one peer leaves hit both alike; ``train_speedup`` = DGL's median
   epoch time / graphflow's, ``train_speedup_spread`` its range over the epoch pairs.
   ``--e2e-batches K`` cuts each epoch to its first K batches (a quick check, labelled as
   partial in the output). ``--dropout P`` drops every layer's input in both models
   (``SAGEConv(feat_drop=P)`` in each library: graphflow's ``graphflow.sparse.dropout``, torch's
   ``nn.Dropout`` in DGL's), as ``graphflow run``'s default (0.5) does; default 0.
3. **Products scale** (``--products``): graphflow only, 2.4M nodes, 62M edges, 100 features,
   8% of nodes as training seeds (as ogbn-products): time per batch, batches per epoch, the
   epoch time (``--products-batches`` 0: a full epoch) and the peak resident memory.

    python benchmarks/sampling.py [--quick] [--device cpu|cuda] [--threads N]
    python benchmarks/sampling.py --products

``--allocator`` sets ``malloc`` for the whole process, so both peers run under the same
setting: ``retain`` (default, what ``graphflow run`` sets, see ``graphflow.runtime.allocator``) or
``system`` (glibc as it is). ``--gemm`` sets graphflow's CPU dense products
(``graphflow.sparse.gemm``): ``auto`` (default, what ``graphflow run`` does: the backend
measured faster per shape bucket on this machine), ``onednn``, or ``torch`` (MKL, what DGL's
``nn.Linear`` runs on); DGL's model is unchanged by it.

Torch and DGL get the same number of CPU threads (``--threads``, default: torch's; set in
both, ``torch.set_num_threads`` and ``dgl.utils.set_num_threads``), the same optimizer (Adam,
lr 1e-3, torch's fused kernel, as ``graphflow run`` builds it), and graphs whose formats are
built before any timer starts. graphflow's dense products and core split are the measured
choices ``graphflow run`` would apply on this machine (``graphflow.runtime.calibrate``; ``--gemm
torch|onednn`` and ``--workers`` override them). The output starts with the machine (CPU,
ISA flags, versions, caps, measured choices; ``benchmarks/machine.py``) and its last line is
one JSON object with the figures and that record under ``"machine"``. ``--training-only``
skips the sampling sections (for ``benchmarks/matrix.py``).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

from graphflow.runtime import allocator, cores  # noqa: E402
from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.io.synthetic import rmat  # noqa: E402
from graphflow.graph import GraphData, NodeIds  # noqa: E402
from graphflow.nn import SAGEConv  # noqa: E402
from graphflow.sampling.sampler import NeighborOptions, SampledGraph  # noqa: E402
from graphflow.sparse import Adjacency, gemm  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow.train.step import autocast as step_autocast  # noqa: E402
from graphflow_plugins.samplers.neighbor import NeighborSampler  # noqa: E402

from benchmarks import machine  # noqa: E402
from benchmarks.records import (alternate, line, orders, race, ratio_spread,  # noqa: E402
                                spread, write)
from benchmarks.records import load as load_average  # noqa: E402

GIB = 2**30
PRECISION = {"graphflow": "fp32", "dgl": "fp32"}
"""Each peer's training arithmetic (``--precision``, ``--peer-precision``): ``fp32``, or
``bf16-mixed`` (the forward pass under bfloat16 autocast, as graphflow's Step runs it)."""
FANOUTS = [15, 10, 5]
FEATURES, HIDDEN, CLASSES = 100, 256, 16
SPLITS: dict[str, dict[str, int]] = {}  # the measured core splits (graphflow.runtime.calibrate)


def peak_rss_gib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB


def build(nodes: int, edges: int, seed: int, features: int = 0) -> GraphData:
    t = time.perf_counter()
    gen = rmat(nodes, edges, seed=seed)
    g = dgl.graph((gen.src, gen.dst), num_nodes=nodes)
    del gen
    g.create_formats_()
    if features:
        fgen = torch.Generator().manual_seed(seed + 1)
        g.ndata["feat"] = torch.randn(nodes, features, generator=fgen)
        g.ndata["label"] = torch.randint(0, CLASSES, (nodes,), generator=fgen)
    print(f"graph: {nodes:,} nodes, {edges:,} edges, max in-degree "
          f"{int(g.in_degrees().max()):,} ({time.perf_counter() - t:.1f}s)", flush=True)
    return GraphData(graph=g, ids=NodeIds.identity(nodes), name="rmat")


def seed_batches(n: int, batch: int, count: int, seed: int) -> list[torch.Tensor]:
    perm = torch.randperm(n, generator=torch.Generator().manual_seed(seed))
    return [perm[i * batch:(i + 1) * batch] for i in range(count)]


# ------------------------------------------------------------------------------ sampling


def bench_sampling(data: GraphData, device: torch.device, batches: list[torch.Tensor],
                   warmup: int) -> tuple[dict[str, float], SampledGraph]:
    """Sampled edges/s of both samplers on the same batches, alternating batch by batch;
    also the prepared graph, for :func:`bench_throughput`."""
    ours = NeighborSampler(NeighborOptions(fanouts=FANOUTS, prefetch=0))
    bare = data.with_graph(_structure_only(data.graph))
    t = time.perf_counter()
    graph = ours.prepare(bare, device)
    prepare_s = time.perf_counter() - t
    gen = torch.Generator(device=graph.device).manual_seed(0)
    theirs = dgl.dataloading.NeighborSampler(FANOUTS)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    ms: dict[str, list[float]] = {"graphflow": [], "dgl": []}
    edges = {"graphflow": 0, "dgl": 0}
    calls: list[str] = []
    for i, (seeds, order) in enumerate(zip(batches, orders(["graphflow", "dgl"],
                                                           len(batches)))):
        for name in order:  # the order reversed every batch
            sync()
            t0 = time.perf_counter()
            if name == "graphflow":
                got = sum(b.num_edges for b in ours.sample(graph, seeds, gen).blocks)
                sync()
            else:
                got = sum(b.num_edges() for b in theirs.sample_blocks(data.graph, seeds)[2])
            took = time.perf_counter() - t0
            if i >= warmup:
                ms[name].append(took * 1e3)
                edges[name] += got
                calls.append(name)
    n = len(batches) - warmup
    ours_eps = edges["graphflow"] / (sum(ms["graphflow"]) / 1e3)
    dgl_eps = edges["dgl"] / (sum(ms["dgl"]) / 1e3)
    hw = hardware_note(graph.device)
    print(f"sampling, {n} batches of {len(batches[0])} seeds, fanouts {FANOUTS}, the order "
          f"reversed every batch{hw}:")
    print(f"  graphflow neighbor ({graph.device}): {ours_eps / 1e6:8.2f} M edges/s  "
          f"{line(ms['graphflow'], unit='ms/batch', digits=1)}  "
          f"{edges['graphflow'] / n:,.0f} edges/batch  (prepare {prepare_s:.1f}s)")
    print(f"  DGL NeighborSampler (cpu):  {dgl_eps / 1e6:8.2f} M edges/s  "
          f"{line(ms['dgl'], unit='ms/batch', digits=1)}  "
          f"{edges['dgl'] / n:,.0f} edges/batch")
    print(f"  ratio graphflow / DGL, one call at a time: {ours_eps / dgl_eps:.2f}{hw}",
          flush=True)
    return {"graphflow_edges_per_s": ours_eps, "dgl_edges_per_s": dgl_eps,
            "call_ratio": ours_eps / dgl_eps,
            "graphflow_ms_per_batch": sum(ms["graphflow"]) / n,
            "dgl_ms_per_batch": sum(ms["dgl"]) / n, "edges_per_batch": edges["graphflow"] / n,
            "call_ms_spread": {k: spread(v) for k, v in ms.items()}, "call_order": calls,
            "sampling_batches": n, "prepare_s": prepare_s}, graph


def hardware_note(device: torch.device) -> str:
    """The label of a figure that compares graphflow on a GPU with DGL on CPU cores."""
    if device.type == "cpu":
        return ""
    return f" (HARDWARE COMPARISON: graphflow on {device}, DGL on the CPU)"


def _structure_only(g: dgl.DGLGraph) -> dgl.DGLGraph:
    """The graph without node data, so that ``sample`` measures sampling alone (its CSC is
    left for ``prepare`` to build, so ``prepare_s`` includes the COO -> CSC conversion)."""
    return dgl.graph(g.edges(), num_nodes=g.num_nodes())


def bench_throughput(data: GraphData, graph: SampledGraph, batches: list[torch.Tensor],
                     workers: int | None, rounds: int = 3) -> dict[str, float]:
    """Sampled edges/s when batches are consumed one after another, as training does.

    graphflow: ``iterate`` over the batches with its defaults (background workers, one core
    each). DGL: each of its ways to produce the same batches, and the best of them is the
    figure: ``NeighborSampler.sample_blocks`` in a loop (its C++ uses every OpenMP thread),
    and ``dgl.dataloading.DataLoader`` with 0 and with 2 worker processes. The passes run
    ``rounds`` times, the order of the four reversed every round, so that noise from other
    processes hits all alike; each way's rate is the median of its rounds.
    """
    ours = NeighborSampler(NeighborOptions(fanouts=FANOUTS, batch_size=len(batches[0]),
                                           shuffle=False, **worker_option(workers)))
    seeds = torch.cat(batches)
    sampler = dgl.dataloading.NeighborSampler(FANOUTS)

    def graphflow_pass() -> int:
        return sum(sum(b.num_edges for b in mb.blocks)
                   for mb in ours.iterate(graph, seeds, torch.Generator().manual_seed(0)))

    def dgl_loop() -> int:
        return sum(sum(b.num_edges() for b in sampler.sample_blocks(data.graph, s)[2])
                   for s in batches)

    def dgl_loader(workers: int) -> Callable[[], int]:
        def run() -> int:
            loader = dgl.dataloading.DataLoader(data.graph, seeds, sampler,
                                                batch_size=len(batches[0]), shuffle=False,
                                                num_workers=workers)
            return sum(sum(b.num_edges() for b in blocks) for _, _, blocks in loader)
        return run

    peers = {"graphflow iterate": graphflow_pass, "DGL sample_blocks loop": dgl_loop,
             "DGL DataLoader, 0 workers": dgl_loader(0),
             "DGL DataLoader, 2 workers": dgl_loader(2)}
    def edges_per_s(fn, rep: int) -> float:
        t = time.perf_counter()
        got = fn(rep)
        return got / (time.perf_counter() - t)

    raced = race({name: (lambda rep, run=run: run()) for name, run in peers.items()},
                 rounds, measure=edges_per_s)
    rate = {name: raced.median(name) for name in peers}
    best_dgl = max((name for name in peers if name.startswith("DGL")), key=rate.get)
    hw = hardware_note(graph.device)
    print(f"throughput, {len(batches)} batches in a row, {rounds} rounds, the order reversed "
          f"every round (graphflow: {ours.num_workers()} workers){hw}; M edges/s, median of "
          f"the rounds (range, n):")
    for name in peers:
        s = raced.spread(name, 1e-6)
        print(f"  {name + ':':28s} {s['median']:8.2f}  ({s['min']:.2f}-{s['max']:.2f}, "
              f"n {s['n']}; best {s['max']:.2f})")
    ratio = rate["graphflow iterate"] / rate[best_dgl]
    pairs = raced.ratio("graphflow iterate", best_dgl)
    print(f"  ratio graphflow / best DGL way ({best_dgl}), medians: {ratio:.2f} (rounds "
          f"{pairs['min']:.2f}-{pairs['max']:.2f}){hw}", flush=True)
    return {"ratio": ratio, "ratio_spread": pairs,
            "throughput_spread": {k: raced.spread(k) for k in peers},
            "throughput_order": raced.calls,
            "hardware_comparison": graph.device.type != "cpu",
            "graphflow_iterate_edges_per_s": rate["graphflow iterate"],
            "dgl_best_edges_per_s": rate[best_dgl], "dgl_best": best_dgl,
            "dgl_loop_edges_per_s": rate["DGL sample_blocks loop"],
            "dgl_loader0_edges_per_s": rate["DGL DataLoader, 0 workers"],
            "dgl_loader2_edges_per_s": rate["DGL DataLoader, 2 workers"],
            "graphflow_workers": ours.num_workers()}


# ------------------------------------------------------------------------------ training


class GraphflowSAGE(nn.Module):
    accepts_rows = True  # its first layer is a SAGEConv, as GNNStack.accepts_rows reports

    def __init__(self, dims: list[int], dropout: float = 0.0):
        super().__init__()
        self.layers = nn.ModuleList(SAGEConv(a, b, feat_drop=dropout)
                                    for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, adjs: list[Adjacency], x: torch.Tensor) -> torch.Tensor:
        for i, (layer, adj) in enumerate(zip(self.layers, adjs)):
            x = layer(adj, x)  # (num_dst, out)
            if i + 1 < len(self.layers):
                x = F.relu(x, inplace=True)  # as GNNStack's relu on a SAGEConv output
        return x


class DGLSAGE(nn.Module):
    def __init__(self, dims: list[int], dropout: float = 0.0):
        super().__init__()
        self.layers = nn.ModuleList(dgl.nn.SAGEConv(a, b, "mean", feat_drop=dropout)
                                    for a, b in zip(dims[:-1], dims[1:]))

    def forward(self, blocks: list[dgl.DGLGraph], x: torch.Tensor) -> torch.Tensor:
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            x = layer(block, x)
            if i + 1 < len(self.layers):
                x = F.relu(x, inplace=True)  # the same in-place relu as graphflow's peer
        return x


def worker_option(workers: int | None) -> dict[str, int]:
    """``workers`` for NeighborOptions when given (``--workers``), else the sampler's default."""
    return {} if workers is None else {"workers": workers}


def train_graphflow(data: GraphData, device: torch.device, seeds: torch.Tensor,
                    batch: int, workers: int | None, dropout: float = 0.0,
                    rows: bool = True) -> tuple[float, int]:
    """Seconds for one pass over ``seeds`` with graphflow, and the batches done: threads and
    sampling workers as the core policy gives a sampled ``node_classification`` stage
    (``--workers`` overrides the workers), features as the node trainer asks for them
    (``rows``: ``IndexedRows`` for a model with ``accepts_rows``, read in place when sampled
    inline; ``--gather`` turns that off)."""
    sampler = NeighborSampler(NeighborOptions(fanouts=FANOUTS, batch_size=batch,
                                              shuffle=False, prefetch=1, threads=1))
    graph = sampler.prepare(data, device)
    plan = cores.plan("sampled", None, {"workers": workers}, measured=SPLITS)
    torch.manual_seed(0)
    model = GraphflowSAGE([FEATURES, HIDDEN, HIDDEN, CLASSES], dropout).to(device)
    opt = make_optimizer("adam", model, lr=1e-3, weight_decay=0.0)  # as graphflow run builds it
    n = 0
    with cores.applied(plan):
        t = time.perf_counter()
        for mb in sampler.iterate(graph, seeds, torch.Generator().manual_seed(0),
                                  workers=plan.workers, rows=rows and model.accepts_rows):
            with step_autocast(PRECISION["graphflow"], device):
                out = model([Adjacency.from_block(b) for b in mb.blocks], mb.features)
            loss = F.cross_entropy(out.float(), mb.labels)
            opt.zero_grad()
            loss.backward()
            opt.step()
            n += 1
        if device.type == "cuda":
            torch.cuda.synchronize()
        seconds = time.perf_counter() - t
    return seconds, n


def train_dgl(data: GraphData, device: torch.device, seeds: torch.Tensor,
              batch: int, dropout: float = 0.0) -> tuple[float, int]:
    """The same with DGL's DataLoader, NeighborSampler and SAGEConv."""
    g = data.graph
    loader = dgl.dataloading.DataLoader(g, seeds, dgl.dataloading.NeighborSampler(FANOUTS),
                                        batch_size=batch, shuffle=False, device="cpu")
    torch.manual_seed(0)
    model = DGLSAGE([FEATURES, HIDDEN, HIDDEN, CLASSES], dropout).to(device)
    opt = make_optimizer("adam", model, lr=1e-3, weight_decay=0.0)  # the same Adam as ours
    feat, label = g.ndata["feat"], g.ndata["label"]
    n = 0
    t = time.perf_counter()
    for input_nodes, output_nodes, blocks in loader:
        x = feat[input_nodes].to(device)
        y = label[output_nodes].to(device)
        with step_autocast(PRECISION["dgl"], device):
            out = model([b.to(device) for b in blocks], x)
        loss = F.cross_entropy(out.float(), y)
        opt.zero_grad()
        loss.backward()
        opt.step()
        n += 1
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t, n


def bench_training(data: GraphData, device: torch.device, batch: int, epochs: int,
                   limit: int, seed: int, workers: int | None,
                   dropout: float = 0.0) -> dict[str, object]:
    """Whole epochs (``limit`` > 0: the first ``limit`` batches of each) of both peers,
    alternating, on the same seed order."""
    order = torch.randperm(data.num_nodes, generator=torch.Generator().manual_seed(seed + 7))
    per_epoch = -(-data.num_nodes // batch)
    todo = per_epoch if limit <= 0 else min(limit, per_epoch)
    seeds = order[:todo * batch]
    warm = order[-batch * 2:]
    train_graphflow(data, device, warm, batch, workers, dropout)  # warm-up: first-call costs
    train_dgl(data, device, warm, batch, dropout)
    counts: dict[str, int] = {}

    def epoch_of(name: str):
        def run(rep: int) -> float:
            if name == "dgl":
                s, counts[name] = train_dgl(data, device, seeds, batch, dropout)
            else:
                s, counts[name] = train_graphflow(data, device, seeds, batch, workers, dropout)
            return s
        return run

    # The order reversed every epoch (graphflow first, then DGL first, ...), each epoch's
    # time as the peer measures it (its loop, without building the loader).
    times = alternate({"graphflow": epoch_of("graphflow"), "dgl": epoch_of("dgl")}, epochs,
                      measure=lambda fn, rep: fn(rep))
    ours, theirs = times["graphflow"], times["dgl"]
    n_ours, n_dgl = counts["graphflow"], counts["dgl"]
    plan = cores.plan("sampled", None, {"workers": workers}, measured=SPLITS)
    what = "whole epochs" if todo == per_epoch else f"PARTIAL epochs ({todo} of {per_epoch} batches)"
    print(f"training, GraphSAGE 3 x {HIDDEN}, {FEATURES} features, dropout {dropout} on every "
          f"layer's input, batch {batch}, {epochs} "
          f"{what} per library (graphflow: {plan.threads} threads, {plan.workers} sampling "
          f"workers, {plan.source}; DGL: {dgl.utils.get_num_threads()} threads, DataLoader 0 "
          f"workers; both fused Adam lr 1e-3):")
    print(f"  graphflow: epochs {', '.join(f'{x:.1f}' for x in ours)} s "
          f"({sum(ours) / (epochs * todo) * 1e3:.1f} ms/batch)")
    print(f"  DGL:       epochs {', '.join(f'{x:.1f}' for x in theirs)} s "
          f"({sum(theirs) / (epochs * todo) * 1e3:.1f} ms/batch)")
    ratio = ratio_spread(theirs, ours)
    speedup = ratio["median"]
    print(f"  graphflow: {line(ours, unit='s/epoch', digits=2)}")
    print(f"  DGL:       {line(theirs, unit='s/epoch', digits=2)}")
    print(f"  train_speedup (DGL / graphflow, medians of {epochs} epochs, the order "
          f"reversed every epoch): {speedup:.2f}; per epoch "
          f"{', '.join(f'{b / a:.2f}' for a, b in zip(ours, theirs))}"
          f"{hardware_note(device)}", flush=True)
    return {"graphflow_epoch_s": ours, "dgl_epoch_s": theirs, "train_batches": todo,
            "epoch_orders": orders(["graphflow", "dgl"], epochs),
            "graphflow_epoch_spread": spread(ours), "dgl_epoch_spread": spread(theirs),
            "train_speedup_spread": ratio,
            "batches_per_epoch": per_epoch, "whole_epochs": todo == per_epoch,
            "train_epochs": epochs, "dropout": dropout, "graphflow_threads": plan.threads,
            "graphflow_sampling_workers": plan.workers, "core_split": plan.source,
            "hardware_comparison": device.type != "cpu", "train_speedup": speedup}


def bench_products(device: torch.device, batch: int, batches: int, seed: int,
                   workers: int | None) -> dict:
    data = build(2_400_000, 62_000_000, seed, features=FEATURES)
    print(f"  peak RSS after building the graph: {peak_rss_gib():.1f} GiB", flush=True)
    train = torch.randperm(data.num_nodes, generator=torch.Generator().manual_seed(seed))
    train = train[: int(0.08 * data.num_nodes)]  # (192k,) training seeds
    per_epoch = -(-train.numel() // batch)
    todo = per_epoch if batches <= 0 else min(batches, per_epoch)
    train_graphflow(data, device, train[-batch * 2:], batch, workers)  # warm-up
    seconds, n = train_graphflow(data, device, train[: todo * batch], batch, workers)
    peak = peak_rss_gib()
    print(f"products scale: {n} batches of {batch} in {seconds:.1f}s = "
          f"{seconds / n * 1e3:.0f} ms/batch; {per_epoch} batches per epoch -> epoch "
          f"{seconds / n * per_epoch:.0f}s; peak RSS {peak:.1f} GiB", flush=True)
    return {"products_s_per_batch": seconds / n, "products_batches": n,
            "products_batches_per_epoch": per_epoch,
            "products_epoch_s": seconds / n * per_epoch, "products_peak_rss_gib": peak}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="200k nodes / 4M edges, fewer batches")
    p.add_argument("--device", default="cpu", help="graphflow's sampling and model device")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for torch and DGL")
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--workers", type=int, default=None,
                   help="graphflow's background sampling workers (default: the sampler's 2 for the "
                        "throughput section, the core policy's for training)")
    p.add_argument("--batches", type=int, default=None,
                   help="batches of the call-by-call sampling section (default 40)")
    p.add_argument("--throughput-batches", type=int, default=None,
                   help="batches per pass of the throughput section (default 160; 40 at "
                        "--quick): a pass of 40 took ~0.2 s, short enough for one disturbance "
                        "to move the ratio by 0.3")
    p.add_argument("--epochs", type=int, default=2,
                   help="whole training epochs per library, the order of the peers reversed "
                        "every epoch (default 2; 0 skips training)")
    p.add_argument("--record", action="store_true",
                   help="save the figures with the machine, commit and command under "
                        "benchmarks/results/sampling/ (benchmarks/records.py)")
    machine.add_precision_flags(p)
    p.add_argument("--e2e-batches", type=int, default=0,
                   help="cut each training epoch to its first K batches (a quick, partial "
                        "check; default 0: whole epochs)")
    p.add_argument("--products", action="store_true", help="the products-scale run only")
    p.add_argument("--products-batches", type=int, default=40,
                   help="batches of the products run (0: a full epoch)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--dropout", type=float, default=0.0,
                   help="training: dropout on every layer's input, both peers (SAGEConv "
                        "feat_drop; graphflow's own dropout vs torch's in DGL; default 0)")
    p.add_argument("--allocator", choices=["retain", "system"], default="retain",
                   help="malloc setting of the whole process, for both peers (graphflow.runtime.allocator; "
                        "default retain, as graphflow run sets it)")
    p.add_argument("--gemm", choices=list(gemm.CHOICES), default="auto",
                   help="graphflow's CPU dense products (graphflow.sparse.gemm; default auto, "
                        "as graphflow run: the backend measured per shape bucket on this "
                        "machine; torch: MKL, as DGL's nn.Linear uses)")
    p.add_argument("--nodes", type=int, default=0,
                   help="the R-MAT graph's nodes (overrides --quick; a smoke run)")
    p.add_argument("--edges", type=int, default=0,
                   help="the R-MAT graph's edges (overrides --quick; a smoke run)")
    p.add_argument("--rounds", type=int, default=3,
                   help="rounds of the throughput section, the order reversed every round")
    p.add_argument("--training-only", action="store_true",
                   help="skip the sampling sections: end-to-end training only")
    args = p.parse_args(argv)
    PRECISION.update(machine.precisions(args.precision, args.peer_precision, args.device))
    args.load_before = load_average()
    args.argv = [str(Path(__file__)), *(sys.argv[1:] if argv is None else argv)]
    machine.set_threads(args.threads)
    table, splits, calibration = machine.choices(args.gemm)
    SPLITS.clear()
    SPLITS.update(splits)
    args.machine = machine.show(calibration)
    with gemm.applied(args.gemm, table) as products:
        print(f"graphflow's dense products: {products['backend']} (--gemm {args.gemm}"
              f"{', ' + str(products['buckets']) if 'buckets' in products else ''}); "
              f"DGL's nn.Linear: torch", flush=True)
        return run(args)


def run(args: argparse.Namespace) -> int:
    """The sections ``main`` chose, with graphflow's products already set."""
    malloc = allocator.apply(args.allocator)["allocator"]
    print(f"malloc: {malloc}, for the whole process (both peers)", flush=True)
    device = torch.device(args.device)
    figures: dict[str, object] = {"device": str(device), "threads": torch.get_num_threads(),
                                  "precision": dict(PRECISION),
                                  "allocator": malloc, "gemm": gemm.current(),
                                  "fanouts": FANOUTS, "batch": args.batch}
    if args.products:
        figures.update(bench_products(device, args.batch, args.products_batches, args.seed,
                                      args.workers))
        figures["machine"] = args.machine
        print(json.dumps(figures))
        return 0
    nodes, edges = (200_000, 4_000_000) if args.quick else (1_000_000, 20_000_000)
    nodes, edges = args.nodes or nodes, args.edges or edges
    count = args.batches or (20 if args.quick else 40)
    data = build(nodes, edges, args.seed, features=FEATURES if args.epochs else 0)
    figures.update({"nodes": nodes, "edges": edges})
    if not args.training_only:
        batches = seed_batches(nodes, args.batch, count + 2, args.seed)
        sampling, graph = bench_sampling(data, device, batches, warmup=2)
        figures.update(sampling)
        passes = args.throughput_batches or (40 if args.quick else 160)
        in_a_row = seed_batches(nodes, args.batch, passes, args.seed + 1)
        figures.update(bench_throughput(data, graph, in_a_row, args.workers, args.rounds))
    if args.epochs:
        figures.update(bench_training(data, device, args.batch, args.epochs, args.e2e_batches,
                                      args.seed, args.workers, args.dropout))
    figures["peak_rss_gib"] = peak_rss_gib()
    figures = {k: (round(v, 4) if isinstance(v, float) else [round(x, 3) for x in v]
                   if isinstance(v, list) and v and isinstance(v[0], float) else v)
               for k, v in figures.items()}
    figures["machine"] = args.machine
    if args.record:
        write("sampling", figures, load_before=args.load_before, argv=args.argv)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
