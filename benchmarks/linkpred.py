"""Sampled link prediction speed: graphflow vs DGL's own recipe, and bounded-memory MRR.

Graph: R-MAT (``graphflow.io.synthetic.rmat``) with 1M nodes and 5M edges plus their reverses
(10M edges; ``--quick``: 100k nodes, 1M edges), 100 random features.

1. **Training**, one process, alternating halves so that background load hits both alike:
   GraphSAGE 2 x 256 (mean), fanouts [15, 10], 1024 positive edges per batch, 1 uniform
   negative each, dot decoder, BCE, Adam.
   graphflow: :class:`graphflow.sampling.edges.EdgeBatches` on the ``neighbor`` sampler (the
   batch's edges and reverses excluded, prefetch workers) + the ``sage`` model.
   DGL: ``dgl.dataloading.as_edge_prediction_sampler(NeighborSampler([15, 10]),
   exclude="reverse_id", reverse_eids=..., negative_sampler=negative_sampler.Uniform(1))`` in
   ``dgl.dataloading.DataLoader`` + ``dgl.nn.SAGEConv``. Same edge ids, same reverse map.
   Figures: ms per training batch each, and ``ratio`` = DGL time / graphflow time.
   ``--epochs N`` times N **whole epochs** of each peer instead (every edge of the graph once
   per epoch, the same fresh order for both, the order of the peers reversed every epoch):
   seconds per epoch and ``epoch_ratio`` (the ratio of the medians; ``epoch_ratio_spread`` the
   range over epoch pairs). ``--record`` saves the result under ``benchmarks/results/``. With ``--quick`` (1M edges, about 980 batches an epoch) that
   takes about a minute an epoch pair; on the full graph (10M edges) an epoch pair is about
   20 minutes on 2 cores.
2. **Evaluation**: layer-wise full-neighbor inference of every node's embedding, then MRR and
   Hits@K of 100k held-out edges, each ranked against 100 drawn destinations, scored in
   chunks (:func:`graphflow.linkpred.evaluate.ranking_figures`). Figures: seconds, and the
   peak resident memory above the level before each phase (``benchmarks/io.py``'s sampler), next to
   training's.

    flock /tmp/graphflow-bench.lock python benchmarks/linkpred.py [--quick] [--allocator system]
    flock /tmp/graphflow-bench.lock python benchmarks/linkpred.py --quick --epochs 2

graphflow trains under the core split and dense products a ``link_prediction`` stage gets on
this machine (``graphflow.runtime.cores``, measured by ``graphflow.runtime.calibrate``). Both peers get the
same optimizer (Adam, lr 1e-3, torch's fused kernel, as ``graphflow run`` builds it), the same
threads (``--threads``: torch's and DGL's), and the graph's formats built before any timer.
The output starts with the machine (``benchmarks/machine.py``), recorded under ``"machine"``
in the JSON line.
``--allocator`` sets ``malloc`` for the whole process, so both peers run under the same
setting: ``retain`` (default, what ``graphflow run`` sets) or ``system`` (glibc as it is).

The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
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
from graphflow.linkpred.decoders import DotDecoder, decode_pairs  # noqa: E402
from graphflow.linkpred.evaluate import ranking_figures  # noqa: E402
from graphflow.linkpred.negatives import NegativeSampler  # noqa: E402
from graphflow.sampling.edges import EdgeBatches  # noqa: E402
from graphflow.sparse import Adjacency, gemm  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow.train.step import autocast as step_autocast  # noqa: E402
from graphflow_plugins.models.sage import SAGEModel, SAGEOptions  # noqa: E402
from graphflow_plugins.samplers.neighbor import NeighborSampler  # noqa: E402

from benchmarks import machine  # noqa: E402
from benchmarks.records import orders, ratio_spread, spread, write  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.io import PeakRSS  # noqa: E402  (peak RSS above entry, sampled in a thread)

FEATURES, HIDDEN, FANOUTS, BATCH = 100, 256, [15, 10], 1024
SPLITS: dict[str, dict[str, int]] = {}  # the measured core splits (graphflow.runtime.calibrate)


def build(nodes: int, half_edges: int, seed: int) -> tuple[GraphData, torch.Tensor]:
    gen = rmat(nodes, half_edges, seed=seed)
    src, dst = torch.cat([gen.src, gen.dst]), torch.cat([gen.dst, gen.src])
    g = dgl.graph((src, dst), num_nodes=nodes)
    g.create_formats_()
    g.ndata["feat"] = torch.randn(nodes, FEATURES, generator=torch.Generator().manual_seed(seed))
    reverse = torch.cat([torch.arange(half_edges, 2 * half_edges), torch.arange(half_edges)])
    print(f"graph: {nodes:,} nodes, {g.num_edges():,} edges", flush=True)
    return GraphData(g, NodeIds.identity(nodes), name="rmat"), reverse


def encoder() -> nn.Module:
    return SAGEModel(SAGEOptions(hidden=HIDDEN, dropout=0.0)).build(FEATURES, HIDDEN)


class DGLSAGE(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([dgl.nn.SAGEConv(FEATURES, HIDDEN, "mean"),
                                     dgl.nn.SAGEConv(HIDDEN, HIDDEN, "mean")])

    def forward(self, blocks: list, x: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.layers[0](blocks[0], x))
        return self.layers[1](blocks[1], x)


PRECISION = {"graphflow": "fp32", "dgl": "fp32"}
"""Each peer's training arithmetic (``--precision``, ``--peer-precision``): ``fp32``, or
``bf16-mixed`` (the encoder under bfloat16 autocast, as graphflow's Step runs it)."""


def bce(pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    return (F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
            + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg)))


def train_graphflow(data: GraphData, reverse: torch.Tensor, eids: torch.Tensor,
                    model: nn.Module, opt: torch.optim.Optimizer) -> tuple[float, int]:
    sampler = NeighborSampler(NeighborSampler.Options(fanouts=FANOUTS, batch_size=BATCH,
                                                      shuffle=False))
    graph = sampler.prepare(data, torch.device("cpu"))
    src, dst = data.graph.edges()
    edges = EdgeBatches(sampler, graph, src, dst, reverse,
                        NegativeSampler("uniform", data.num_nodes), k=1)
    dec = DotDecoder()
    plan = cores.plan("sampled", measured=SPLITS)  # as a link_prediction stage gets them
    with cores.applied(plan):
        t, n = time.perf_counter(), 0
        for mb in edges.iterate(eids, torch.Generator().manual_seed(1), workers=plan.workers,
                                rows=model.accepts_rows):  # as the link_prediction task
            with step_autocast(PRECISION["graphflow"], "cpu"):
                h = model([Adjacency.from_block(b) for b in mb.blocks], mb.features)
            h = h.float()
            loss = bce(*decode_pairs(dec, h, mb.pos, mb.neg))  # as the link_prediction task
            opt.zero_grad()
            loss.backward()
            opt.step()
            n += 1
        return time.perf_counter() - t, n


def train_dgl(data: GraphData, reverse: torch.Tensor, eids: torch.Tensor, model: nn.Module,
              opt: torch.optim.Optimizer) -> tuple[float, int]:
    g = data.graph
    feat = g.ndata["feat"]
    sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS), exclude="reverse_id", reverse_eids=reverse,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1))
    loader = dgl.dataloading.DataLoader(g, eids, sampler, batch_size=BATCH, shuffle=False)
    t, n = time.perf_counter(), 0
    for input_nodes, pair, neg, blocks in loader:
        with step_autocast(PRECISION["dgl"], "cpu"):
            h = model(blocks, feat[input_nodes])
        h = h.float()
        ps, pd = pair.edges()
        ns, nd = neg.edges()
        loss = bce((h[ps] * h[pd]).sum(-1), (h[ns] * h[nd]).sum(-1))
        opt.zero_grad()
        loss.backward()
        opt.step()
        n += 1
    return time.perf_counter() - t, n


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="100k nodes, 1M edges, few batches")
    p.add_argument("--batches", type=int, default=0, help="training batches per side")
    p.add_argument("--epochs", type=int, default=0, metavar="N",
                   help="time N whole epochs of each peer (every edge once per epoch) instead "
                        "of a number of batches")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--allocator", choices=["retain", "system"], default="retain",
                   help="malloc setting of the whole process, for both peers (graphflow.runtime.allocator; "
                        "default retain, as graphflow run sets it)")
    p.add_argument("--threads", type=int, default=0,
                   help="CPU threads for torch and DGL (default: torch's)")
    p.add_argument("--gemm", choices=list(gemm.CHOICES), default="auto",
                   help="graphflow's CPU dense products (default auto: measured per shape)")
    p.add_argument("--record", action="store_true",
                   help="with --epochs: save the result under benchmarks/results/linkpred/ "
                        "(benchmarks/records.py)")
    machine.add_precision_flags(p)
    a = p.parse_args(argv)
    PRECISION.update(machine.precisions(a.precision, a.peer_precision, "cpu"))
    a.load_before = load_average()
    machine.set_threads(a.threads)
    table, splits, calibration = machine.choices(a.gemm)
    SPLITS.clear()
    SPLITS.update(splits)
    a.machine = machine.show(calibration)
    with gemm.applied(a.gemm, table):
        return run(a)


def run(a: argparse.Namespace) -> int:
    malloc = allocator.apply(a.allocator)["allocator"]
    nodes, half = (100_000, 500_000) if a.quick else (1_000_000, 5_000_000)
    batches = a.batches or (8 if a.quick else 40)
    test_edges, negatives = (10_000 if a.quick else 100_000), 100
    torch.manual_seed(a.seed)
    data, reverse = build(nodes, half, a.seed)
    order = torch.randperm(data.num_edges, generator=torch.Generator().manual_seed(a.seed))
    halves = [order[i * BATCH * batches // 2:(i + 1) * BATCH * batches // 2] for i in (0, 1)]
    ours, theirs = encoder(), DGLSAGE()
    opt_ours = make_optimizer("adam", ours, lr=1e-3, weight_decay=0.0)  # as graphflow run
    opt_theirs = make_optimizer("adam", theirs, lr=1e-3, weight_decay=0.0)  # the same Adam
    warm = order[-2 * BATCH:]
    train_graphflow(data, reverse, warm, ours, opt_ours)
    train_dgl(data, reverse, warm, theirs, opt_theirs)
    if a.epochs:
        return whole_epochs(a, data, reverse, ours, opt_ours, theirs, opt_theirs, malloc)
    t_ours = t_dgl = 0.0
    n_ours = n_dgl = 0
    with PeakRSS() as train_mem:
        for i, part in enumerate(halves):  # the order reversed on the second half
            for name in orders(["dgl", "graphflow"], 2)[i]:
                if name == "dgl":
                    s, n = train_dgl(data, reverse, part, theirs, opt_theirs)
                    t_dgl, n_dgl = t_dgl + s, n_dgl + n
                else:
                    s, n = train_graphflow(data, reverse, part, ours, opt_ours)
                    t_ours, n_ours = t_ours + s, n_ours + n
    ours_ms, dgl_ms = t_ours / n_ours * 1e3, t_dgl / n_dgl * 1e3
    plan = cores.plan("sampled", measured=SPLITS)
    print(f"training, SAGE 2 x {HIDDEN}, fanouts {FANOUTS}, {BATCH} positives + 1 uniform "
          f"negative each, {n_ours} batches each (graphflow: {plan.threads} threads, "
          f"{plan.workers} sampling workers, {plan.source}; DGL: {dgl.utils.get_num_threads()} "
          f"threads, DataLoader 0 workers; malloc {malloc} and fused Adam for both):")
    print(f"  graphflow: {ours_ms:7.1f} ms/batch")
    print(f"  DGL:       {dgl_ms:7.1f} ms/batch")
    print(f"  ratio (DGL / graphflow): {dgl_ms / ours_ms:.2f}", flush=True)
    ours.eval()
    adj = Adjacency.from_graph(data.graph)
    with PeakRSS() as infer_mem:
        t = time.perf_counter()
        with torch.no_grad():
            h = ours.inference(adj, data.graph.ndata["feat"], batch_size=4096)  # (N, D)
        infer_s = time.perf_counter() - t
    src, dst = data.graph.edges()
    pick = order[:test_edges]
    pos = torch.stack([src[pick], dst[pick]])
    with PeakRSS() as eval_mem:
        t = time.perf_counter()
        figures = ranking_figures(DotDecoder(), h, pos, negatives=negatives, hits=[1, 10, 50],
                                  generator=torch.Generator().manual_seed(2))
        eval_s = time.perf_counter() - t
    print(f"evaluation: layer-wise inference of {nodes:,} embeddings {infer_s:.1f}s (peak "
          f"+{infer_mem.mib / 1024:.2f} GiB); MRR of {test_edges:,} edges x {negatives} negatives "
          f"{eval_s:.1f}s (peak +{eval_mem.mib / 1024:.2f} GiB); training peak "
          f"+{train_mem.mib / 1024:.2f} GiB", flush=True)
    print(json.dumps({"nodes": nodes, "edges": data.num_edges, "batches": n_ours,
                      "graphflow_ms_per_batch": ours_ms, "dgl_ms_per_batch": dgl_ms,
                      "ratio": dgl_ms / ours_ms, "inference_s": infer_s,
                      "mrr_eval_s": eval_s, "mrr_eval_pairs": test_edges * negatives,
                      "eval_peak_gib": eval_mem.mib / 1024, "inference_peak_gib": infer_mem.mib / 1024,
                      "train_peak_gib": train_mem.mib / 1024, "threads": torch.get_num_threads(),
                      "allocator": malloc, "graphflow_threads": plan.threads,
                      "graphflow_sampling_workers": plan.workers, "core_split": plan.source,
                      **{f"untrained_{k}": v for k, v in figures.items()},
                      "machine": a.machine}))
    return 0


def whole_epochs(a: argparse.Namespace, data: GraphData, reverse: torch.Tensor,
                 ours: nn.Module, opt_ours: torch.optim.Optimizer, theirs: nn.Module,
                 opt_theirs: torch.optim.Optimizer, malloc: str) -> int:
    """``--epochs N``: N whole epochs of each peer, the order reversed every epoch, each over
    every edge once in the same fresh order; prints seconds per epoch and the ratio of the
    medians, with the range of the epoch pairs' ratios."""
    seconds: dict[str, list[float]] = {"graphflow": [], "dgl": []}
    peers = {"graphflow": lambda eids: train_graphflow(data, reverse, eids, ours, opt_ours),
             "dgl": lambda eids: train_dgl(data, reverse, eids, theirs, opt_theirs)}
    batches = 0
    for epoch in range(a.epochs):
        order = torch.Generator().manual_seed(a.seed + 10 + epoch)
        eids = torch.randperm(data.num_edges, generator=order)
        for name in (("dgl", "graphflow") if epoch % 2 == 0 else ("graphflow", "dgl")):
            s, batches = peers[name](eids)
            seconds[name].append(s)
            print(f"  epoch {epoch} {name:9s} {s:7.1f}s  ({batches} batches)", flush=True)
    total = {name: sum(v) for name, v in seconds.items()}
    ratio_of = ratio_spread(seconds["dgl"], seconds["graphflow"])
    ratio = ratio_of["median"]
    plan = cores.plan("sampled", measured=SPLITS)
    print(f"whole epochs, SAGE 2 x {HIDDEN}, fanouts {FANOUTS}, {BATCH} positives + 1 uniform "
          f"negative each, {data.num_edges:,} edges = {batches} batches an epoch, {a.epochs} "
          f"epoch(s) each (graphflow: {plan.threads} threads, {plan.workers} sampling workers; "
          f"DGL: DataLoader 0 workers; malloc {malloc} for both):")
    for name, values in seconds.items():
        print(f"  {name:9s} {total[name] / a.epochs:7.1f} s/epoch  "
              f"[{' '.join(f'{v:.1f}' for v in values)}]")
    print(f"  epoch_ratio (DGL / graphflow, medians of {a.epochs} epochs, the order reversed "
          f"every epoch): {ratio:.2f} (epoch pairs {ratio_of['min']:.2f}-{ratio_of['max']:.2f})",
          flush=True)
    out = {"nodes": data.num_nodes, "edges": data.num_edges, "epochs": a.epochs,
           "precision": dict(PRECISION),
           "batches_per_epoch": batches,
           "graphflow_epoch_s": seconds["graphflow"], "dgl_epoch_s": seconds["dgl"],
           "graphflow_epoch_spread": spread(seconds["graphflow"]),
           "dgl_epoch_spread": spread(seconds["dgl"]), "epoch_ratio_spread": ratio_of,
           "epoch_ratio": ratio, "allocator": malloc, "threads": torch.get_num_threads(),
           "graphflow_threads": plan.threads,
           "graphflow_sampling_workers": plan.workers, "core_split": plan.source,
           "machine": a.machine}
    if a.record:
        write("linkpred", out, load_before=a.load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
