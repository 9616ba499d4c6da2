"""Where a sampled training batch's time goes, graphflow's and DGL's side by side: sampling,
feature gather, forward, backward, Adam, and the minor page faults per batch, under one
allocator setting.

The graph and model are ``benchmarks/sampling.py``'s (R-MAT, 1M nodes, 20M edges, 100 random
features; GraphSAGE 3 x 256, fanouts [15, 10, 5], batch 1024; ``--quick``: 200k / 4M). Each
part is timed on its own, batch after batch, in the training thread with the core policy's 2
threads on this machine:

* ``sample``: ``sample_blocks`` as inline sampling runs it: torch ops on the sampler's 1
  thread, the compiled picks (:mod:`graphflow.sampling.native`) on the training threads;
* ``gather_1t`` / ``gather_2t``: ``feat[input_nodes]`` with 1 thread and with the plan's
  threads (inline sampling gathers with the training threads,
  ``graphflow.sampling.sampler.gather_threads``); the two alternate which goes first, since
  the second reads rows the first brought into the cache;
* ``forward`` / ``backward`` / ``adam``: the model on the batch, its first layer reading the
  feature table in place (``IndexedRows``, as inline-sampled training does; the two
  gathers above are then what that saves, not part of a step);
* ``faults``: minor page faults (``getrusage``) per batch over the whole loop;
* ``products_alone``: the dense products of forward and backward (``mm``, ``addmm``, and the
  oneDNN convolutions where the measured backend is oneDNN), recorded op by op with their
  shapes and layouts on a few untimed batches, then run again by themselves on fresh tensors
  of those shapes: what the products cost with nothing else around them. The model's time
  above that is its other work (aggregation, activations, concatenation, autograd), which
  a peer running the same products on the same kernels does not share.

DGL's parts are timed on the same seeds, batch by batch in turn with graphflow's (which side
goes first alternates), with the same threads: ``sample`` is its ``NeighborSampler``'s
``sample_blocks`` (the work its ``DataLoader`` does per batch, without the loader's own
overhead), ``gather`` is ``feat[input_nodes]`` and ``label[output_nodes]`` (its model needs
the rows), then ``SAGEConv``'s forward, backward and the same fused Adam. Each side's
``batch`` is the sum of the parts one of its training steps runs (graphflow's first layer
reads the table in place, so its gathers are not in it). The last lines set the goal
against DGL's batch: 1.5x DGL's batch leaves graphflow ``budget`` ms, of which its model
(forward + backward + Adam) takes the printed share; sampling and everything else must fit
in the rest. The ``ceiling`` is DGL's batch over the dense products alone: on a CPU whose
products are slow against its memory (few, narrow FMA units), it can fall near or below the
goal, which no step running the same products on the same kernels can then reach.

**Where the time goes, both sides.** After the timed batches, the dense products of
``--product-batches`` more batches are recorded on BOTH sides (graphflow's model and DGL's
``SAGEConv``s, each on its own sampler's blocks of the same seeds), and each side's recorded
products are replayed alone, the two sides' replays alternating (``--replay-rounds``, the
order reversed every round, median): the same measurement of products on both sides. The
``shares`` table then splits each side's step into sampling, gathering (graphflow's first
layer reads the table in place: its gather is inside its products' input, 0 here), products,
other passes (forward + backward - products: aggregation, activations, autograd) and
optimizer, in ms and in % of that side's step (means over the timed batches). The products'
float operations (from the recorded shapes, ``benchmarks/products.py``'s ``flops``) over
their replayed time give each side's achieved GFLOP/s, printed against the CPU's measured
peak: the median of ``--peak-reps`` float32 GEMMs of 4096 x 1024 x 1024 with the same
threads. Each side's step per batch is also printed as a median with its range and count.
The sides take turns going first batch by batch (``calls`` in the JSON: the order they ran
in). ``--record`` saves the figures under ``benchmarks/results/batch_parts/``.

Run it once per allocator setting to see what keeping freed memory does (each setting is
process-wide and cannot be undone, so one process measures one)::

    flock /tmp/graphflow-bench.lock python benchmarks/batch_parts.py --allocator system
    flock /tmp/graphflow-bench.lock python benchmarks/batch_parts.py --allocator retain

This is a profile of parts, not the end-to-end figure: ``benchmarks/sampling.py`` times whole
epochs against DGL. The last output line is one JSON object (milliseconds per batch).
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.runtime import allocator, cores  # noqa: E402
from graphflow.sampling import native  # noqa: E402
from graphflow.sampling.sampler import NeighborOptions, intra_op_threads  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402
from graphflow.sparse.indexed_rows import IndexedRows  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow_plugins.samplers.neighbor import NeighborSampler  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.products import RecordProducts, peak, replay  # noqa: E402,F401 (replay: tests)
from benchmarks.products import flops as flops_of  # noqa: E402
from benchmarks.products import race as race_products  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import orders, spread, write  # noqa: E402
from benchmarks.sampling import (CLASSES, FANOUTS, FEATURES, HIDDEN, DGLSAGE,  # noqa: E402
                                 GraphflowSAGE, build)

DGL_PARTS = ("sample", "gather", "forward", "backward", "adam")
GOAL = 1.5
"""The end-to-end ratio the budget line is set against (DGL's batch / graphflow's)."""

PARTS = ("sample", "gather_1t", "gather_2t", "forward", "backward", "adam")
def batch_seeds(order: torch.Tensor, i: int, size: int = 1024) -> torch.Tensor:
    """Batch ``i``'s seeds: the next ``size`` nodes of ``order``, wrapping around on a graph
    smaller than the batches asked for."""
    return order[torch.arange(i * size, (i + 1) * size) % order.shape[0]]


def batch_ms(ms: dict[str, float], parts: tuple[str, ...]) -> float:
    """One training step's time: the sum of ``parts`` of ``ms``."""
    return sum(ms[p] for p in parts)


def budget(ours: dict[str, float], theirs: dict[str, float], goal: float = GOAL,
           products: float | None = None) -> dict:
    """What ``goal`` x DGL's batch leaves graphflow, and what its model takes of it.

    :param ours: graphflow's ms per part (:data:`PARTS`); :param theirs: DGL's
        (:data:`DGL_PARTS`); :param products: the batch's dense products run alone, ms.
    :returns: ``dgl_batch``, ``graphflow_batch``, ``ratio``, ``budget`` (DGL's batch / goal),
        ``model`` (graphflow's forward + backward + Adam) and ``left`` (budget - model: what
        sampling and all else must fit in), in ms; with ``products``, also ``ceiling``: DGL's
        batch / the products alone, the most that any step running these same products on
        these kernels could reach against this DGL batch, were everything else free.
    """
    mine = batch_ms(ours, STEP)
    dgl_batch = batch_ms(theirs, DGL_PARTS)
    model = ours["forward"] + ours["backward"] + ours["adam"]
    cap = dgl_batch / goal
    out = {"dgl_batch": dgl_batch, "graphflow_batch": mine, "ratio": dgl_batch / mine,
           "goal": goal, "budget": cap, "model": model, "left": cap - model}
    if products:
        out["ceiling"] = dgl_batch / products
    return out


STEP = ("sample", "forward", "backward", "adam")
"""The parts of graphflow's inline-sampled step (its first layer reads the table in place)."""


@dataclass
class PartTimes:
    """Both sides' timed batches, part by part (:func:`time_parts`)."""

    total: dict[str, dict[str, float]]  # side -> part -> sum over the timed batches
    steps: dict[str, list[float]]  # side -> ms of each timed step, in batch order
    calls: list[str]  # the order the sides' timed batches ran in
    faults: int  # minor page faults over the timed batches, both sides

    def ms(self, side: str, parts: Sequence[str], batches: int) -> dict[str, float]:
        """``side``'s mean ms per batch of each of ``parts``."""
        return {part: self.total[side][part] / batches * 1e3 for part in parts}


def time_parts(sides: dict[str, Callable[[int], dict[str, float]]],
               step: dict[str, Sequence[str]], warmup: int, batches: int,
               first: Sequence[str] = ("dgl", "graphflow")) -> PartTimes:
    """Run every side's batch ``i`` for ``warmup + batches`` batches, batch after batch in the
    training thread, the order of the sides reversed every batch (``records.orders``), and
    sum what the timed batches (after the warm-up) return.

    :param sides: name -> a callable that runs batch ``i`` and returns the seconds of each of
        its parts (and any other per-batch figure to sum, such as graphflow's ``flops``).
    :param step: name -> the parts of that side's training step: each timed batch's
        ``steps`` entry is their sum, in ms.
    :param first: the sides in batch 0's order.
    """
    total: dict[str, dict[str, float]] = {name: {} for name in sides}
    steps: dict[str, list[float]] = {name: [] for name in sides}
    calls: list[str] = []
    faults = 0
    for i, order in enumerate(orders(first, warmup + batches)):
        if i == warmup:
            faults = -resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for name in order:  # each side samples after the other's model step
            took = sides[name](i)
            if i < warmup:
                continue
            calls.append(name)
            steps[name].append(batch_ms(took, step[name]) * 1e3)
            for part, value in took.items():
                total[name][part] = total[name].get(part, 0.0) + value
    faults += resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    return PartTimes(total, steps, calls, faults)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="200k nodes / 4M edges")
    p.add_argument("--allocator", choices=["retain", "system"], default="retain")
    p.add_argument("--batches", type=int, default=40)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--product-batches", type=int, default=5,
                   help="untimed batches whose dense products are recorded and run alone")
    p.add_argument("--threads", type=int, default=0,
                   help="training threads (default: the core policy's for this machine); "
                        "DGL gets the same")
    p.add_argument("--nodes", type=int, default=0, help="graph size (overrides --quick)")
    p.add_argument("--edges", type=int, default=0, help="graph size (overrides --quick)")
    p.add_argument("--replay-rounds", type=int, default=5,
                   help="rounds of both sides' products replayed alone, alternating")
    p.add_argument("--peak-reps", type=int, default=5,
                   help="timed 4096 x 1024 x 1024 float32 GEMMs for the CPU's peak")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/batch_parts/ "
                        "(benchmarks/records.py)")
    a = p.parse_args(argv)
    if a.batches < 1 or a.warmup < 0 or a.product_batches < 0:
        p.error("--batches must be at least 1, --warmup and --product-batches at least 0")
    if a.replay_rounds < 1 or a.peak_reps < 1:
        p.error("--replay-rounds and --peak-reps must be at least 1")
    load_before = load_average()
    malloc = allocator.apply(a.allocator)["allocator"]
    nodes, edges = (200_000, 4_000_000) if a.quick else (1_000_000, 20_000_000)
    nodes, edges = a.nodes or nodes, a.edges or edges
    data = build(nodes, edges, 0, features=FEATURES)  # DGL's formats built too
    feat, label = data.graph.ndata["feat"], data.graph.ndata["label"]
    sampler = NeighborSampler(NeighborOptions(fanouts=FANOUTS, threads=1))
    graph = sampler.prepare(data, torch.device("cpu"))
    order = torch.randperm(nodes, generator=torch.Generator().manual_seed(7))
    plan = cores.plan("sampled", None, {"threads": a.threads} if a.threads else None)
    torch.manual_seed(0)
    model = GraphflowSAGE([FEATURES, HIDDEN, HIDDEN, CLASSES])
    opt = make_optimizer("adam", model, lr=1e-3, weight_decay=0.0)  # as graphflow run builds it
    torch.manual_seed(0)
    peer = DGLSAGE([FEATURES, HIDDEN, HIDDEN, CLASSES])
    peer_opt = make_optimizer("adam", peer, lr=1e-3, weight_decay=0.0)  # the same Adam
    peer_sampler = dgl.dataloading.NeighborSampler(FANOUTS)
    dgl.utils.set_num_threads(plan.threads)  # DGL's kernels: the training threads
    dgl_threads = dgl.utils.get_num_threads()

    def ours(i: int, seeds: torch.Tensor) -> dict[str, float]:
        took: dict[str, float] = {}
        t0 = time.perf_counter()
        with intra_op_threads(1), native.threads(plan.threads):
            blocks = sampler.sample_blocks(graph.structure, seeds,
                                           torch.Generator().manual_seed(i))
        took["sample"] = time.perf_counter() - t0
        # Alternate which gather goes first: the second reads rows the first cached.
        for part, threads in (("gather_1t", 1), ("gather_2t", 0))[::1 if i % 2 else -1]:
            t0 = time.perf_counter()
            with intra_op_threads(threads):  # 0: the plan's threads
                feat.index_select(0, blocks[0].src_nodes)
            took[part] = time.perf_counter() - t0
        t0 = time.perf_counter()
        rows = IndexedRows(feat, blocks[0].src_nodes)  # x, as the trainer hands it over
        out = model([Adjacency.from_block(b) for b in blocks], rows)
        loss = F.cross_entropy(out, label.index_select(0, seeds))
        t1 = time.perf_counter()
        opt.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        opt.step()
        took.update(forward=t1 - t0, backward=t2 - t1, adam=time.perf_counter() - t2)
        took["flops"] = dense_flops(blocks)
        return took

    def theirs(seeds: torch.Tensor) -> dict[str, float]:
        t0 = time.perf_counter()
        input_nodes, output_nodes, blocks = peer_sampler.sample_blocks(data.graph, seeds)
        t1 = time.perf_counter()
        x, y = feat[input_nodes], label[output_nodes]  # as benchmarks/sampling.py's loop
        t2 = time.perf_counter()
        loss = F.cross_entropy(peer(blocks, x), y)
        t3 = time.perf_counter()
        peer_opt.zero_grad()
        loss.backward()
        t4 = time.perf_counter()
        peer_opt.step()
        return {"sample": t1 - t0, "gather": t2 - t1, "forward": t3 - t2, "backward": t4 - t3,
                "adam": time.perf_counter() - t4}

    with cores.applied(plan):
        # The two sides take turns going first, on the same seeds.
        timed = time_parts({"graphflow": lambda i: ours(i, batch_seeds(order, i)),
                            "dgl": lambda i: theirs(batch_seeds(order, i))},
                           {"graphflow": STEP, "dgl": DGL_PARTS}, a.warmup, a.batches)
        steps, calls, faults = timed.steps, timed.calls, timed.faults
        # the dense products' float operations: forward, weight and input gradients
        flops = timed.total["graphflow"]["flops"]
        # The dense products of a few more batches on both sides, recorded (untimed, no
        # optimizer step), then replayed alone, the two sides alternating.
        recorder, peer_recorder = RecordProducts(), RecordProducts()
        start = a.warmup + a.batches
        for i in range(start, start + a.product_batches):
            seeds = batch_seeds(order, i)
            blocks = sampler.sample_blocks(graph.structure, seeds,
                                           torch.Generator().manual_seed(i))
            with recorder:
                out = model([Adjacency.from_block(b) for b in blocks],
                            IndexedRows(feat, blocks[0].src_nodes))
                F.cross_entropy(out, label.index_select(0, seeds)).backward()
            opt.zero_grad()
            input_nodes, output_nodes, peer_blocks = peer_sampler.sample_blocks(data.graph,
                                                                                seeds)
            x, y = feat[input_nodes], label[output_nodes]
            with peer_recorder:
                F.cross_entropy(peer(peer_blocks, x), y).backward()
            peer_opt.zero_grad()
        per = max(a.product_batches, 1)
        replayed = None
        if a.product_batches:
            replayed = race_products({"graphflow": recorder.calls, "dgl": peer_recorder.calls},
                                     a.replay_rounds)
        peak_rate = peak(reps=a.peak_reps)
    alone = replayed.median("graphflow") / per * 1e3 if replayed else 0.0  # ms per batch
    peer_alone = replayed.median("dgl") / per * 1e3 if replayed else 0.0
    ms = timed.ms("graphflow", PARTS, a.batches)
    dgl_ms = timed.ms("dgl", DGL_PARTS, a.batches)
    print(f"{nodes:,} nodes, {a.batches} batches of 1024 seeds, malloc {malloc}, "
          f"{plan.threads} training threads (DGL: {dgl_threads}):")
    print(f"  {'part':10s} {'graphflow':>10s} {'DGL':>8s}  (ms/batch)")
    for part in PARTS:
        peer_part = "gather" if part == "gather_2t" else part
        theirs_ms = f"{dgl_ms[peer_part]:8.2f}" if peer_part in dgl_ms else f"{'':8s}"
        print(f"  {part:10s} {ms[part]:10.2f} {theirs_ms}")
    gflop = flops / a.batches / 1e9
    dense_s = (ms["forward"] + ms["backward"]) / 1e3
    print(f"  dense products {gflop:.2f} GFLOP/batch (forward, weight and input gradients); "
          f"forward + backward together run at {gflop / dense_s:.0f} GFLOP/s")
    model_ms = ms["forward"] + ms["backward"]
    recorded = len(recorder.calls) // max(a.product_batches, 1)
    print(f"  dense products alone {alone:.2f} ms/batch ({recorded} calls, run by themselves at the"
          f" recorded shapes): {alone / model_ms:.0%} of forward + backward; the other"
          f" {model_ms - alone:.2f} ms is aggregation, activations, concatenation and autograd")
    print(f"  model (forward + backward + adam) {ms['forward'] + ms['backward'] + ms['adam']:.2f}"
          f" ms/batch; minor page faults {faults / a.batches:,.0f} per batch", flush=True)
    goal = budget(ms, dgl_ms, products=alone if a.product_batches else None)
    where = {"graphflow": shares(ms["sample"], 0.0, ms["forward"] + ms["backward"], ms["adam"],
                                 alone),
             "dgl": shares(dgl_ms["sample"], dgl_ms["gather"],
                           dgl_ms["forward"] + dgl_ms["backward"], dgl_ms["adam"], peer_alone)}
    rates = {"graphflow": product_rate(flops_of(recorder.calls) / per, alone, peak_rate),
             "dgl": product_rate(flops_of(peer_recorder.calls) / per, peer_alone, peak_rate)}
    print_shares(where, rates, peak_rate, steps, a.product_batches > 0)
    print(f"  batch (the parts of one step): graphflow {goal['graphflow_batch']:.2f} ms "
          f"({' + '.join(STEP)}), DGL {goal['dgl_batch']:.2f} ms ({' + '.join(DGL_PARTS)}): "
          f"{goal['ratio']:.2f}x")
    print(f"  {goal['goal']}x DGL's batch leaves graphflow {goal['budget']:.2f} ms; its model "
          f"takes {goal['model']:.2f} of them, leaving {goal['left']:.2f} ms for sampling and "
          f"all else (sampling alone: {ms['sample']:.2f})")
    if "ceiling" in goal:  # no products replayed (--product-batches 0): no ceiling
        print(f"  ceiling: DGL's batch / the dense products alone = {goal['ceiling']:.2f}x, the "
              f"most a step running the same products on the same kernels could reach, were "
              f"all else free")
    sys.stdout.flush()
    out = {"nodes": nodes, "edges": edges, "allocator": malloc, "batches": a.batches,
           "threads": plan.threads, "dgl_threads": dgl_threads,
           **{k: round(v, 3) for k, v in ms.items()},
           "faults_per_batch": round(faults / a.batches),
           "dense_gflop_per_batch": round(gflop, 3),
           "products_alone": round(alone, 3), "dgl_products_alone": round(peer_alone, 3),
           "dgl": {k: round(v, 3) for k, v in dgl_ms.items()},
           "budget": {k: round(v, 3) for k, v in goal.items()},
           "shares": where, "product_rates": rates, "peak": peak_rate,
           "step_ms": steps, "step_spread": {k: spread(v) for k, v in steps.items()},
           "calls": calls, "replay": replayed.record(scale=1e3 / per) if replayed else None}
    if a.record:
        write("batch_parts", out, load_before=load_before)
    print(json.dumps(out))
    return 0


SHARE_PARTS = ("sampling", "gathering", "products", "other passes", "optimizer")
"""The parts of a step the shares table splits it into, on both sides."""


def shares(sampling: float, gathering: float, model: float, optimizer: float,
           products: float) -> dict[str, dict[str, float]]:
    """A side's step split into :data:`SHARE_PARTS`: ms and share of the step each.

    :param model: forward + backward, ms; ``products`` (the dense products replayed alone)
        is taken out of it, the rest being ``other passes``."""
    ms = {"sampling": sampling, "gathering": gathering, "products": products,
          "other passes": model - products, "optimizer": optimizer}
    step = sum(ms.values())
    return {part: {"ms": round(v, 3), "share": round(v / step, 4) if step else 0.0}
            for part, v in ms.items()}


def product_rate(flop: float, ms: float, peak_rate: dict) -> dict[str, float]:
    """GFLOP per batch, the achieved GFLOP/s of the products replayed alone in ``ms``, and
    that against the measured peak (:func:`benchmarks.products.peak`)."""
    achieved = flop / (ms / 1e3) / 1e9 if ms > 0 else 0.0
    return {"flop_per_batch": flop, "gflop_per_batch": round(flop / 1e9, 4),
            "gflops": round(achieved, 2),
            "of_peak": round(achieved / peak_rate["gflops"], 4) if peak_rate["gflops"] else 0.0}


def print_shares(where: dict[str, dict], rates: dict[str, dict], peak_rate: dict,
                 steps: dict[str, list[float]], replayed: bool) -> None:
    """The shares table of both sides, the products' rates against the peak, and each side's
    step as a median with its range."""
    names = list(where)
    print("  where the time goes (ms per batch, % of that side's step; the products of both "
          "sides recorded and replayed alone, alternating):")
    print(f"    {'part':14s}" + "".join(f" {n:>18s}" for n in names))
    for part in SHARE_PARTS:
        print(f"    {part:14s}" + "".join(
            f" {where[n][part]['ms']:9.2f} ({where[n][part]['share']:5.1%})" for n in names))
    if not replayed:
        print("    (no products replayed: --product-batches 0 leaves them inside other passes)")
    shape = "x".join(str(d) for d in peak_rate["shape"])
    print(f"  CPU peak: {peak_rate['gflops']:.1f} GFLOP/s (float32 GEMM {shape}, "
          f"{peak_rate['threads']} threads, median of {peak_rate['n']}: "
          f"{peak_rate['gflops_min']:.1f}-{peak_rate['gflops_max']:.1f})")
    for n in names:
        r = rates[n]
        print(f"  {n} products: {r['gflop_per_batch']:.3f} GFLOP/batch at {r['gflops']:.1f} "
              f"GFLOP/s alone = {r['of_peak']:.0%} of the peak")
    for n in names:
        print(f"  {n} step: {records.line(steps[n], unit='ms', digits=2)}")


def dense_flops(blocks: list) -> float:
    """Float operations of GraphflowSAGE's dense products on ``blocks`` (graphflow's
    ``sage_conv``): a layer with F_in <= F_out aggregates first and runs one (num_dst, 2 F_in)
    x (2 F_in, F_out) product; a wider input projects first, (num_src + num_dst) rows of
    F_in x F_out. The weight gradient costs the forward's operations again, and so does the
    input gradient in every layer but the first (the features need none)."""
    dims = [FEATURES, HIDDEN, HIDDEN, CLASSES]
    total = 0.0
    for i, block in enumerate(blocks):
        f_in, f_out = dims[i], dims[i + 1]
        rows = block.num_dst * 2 if f_in <= f_out else block.num_src + block.num_dst
        one = 2.0 * rows * f_in * f_out
        total += one * (2 if i == 0 else 3)
    return total


if __name__ == "__main__":
    raise SystemExit(main())
