"""Where a sampled link-prediction batch's time goes, graphflow's and DGL's side by side.

The graph, models and peers are ``benchmarks/linkpred.py``'s (R-MAT with reverse edges, 100
random features; GraphSAGE 2 x 256, fanouts [15, 10], 1024 positive edges per batch with 1
uniform negative each, dot decoder, BCE, the same fused Adam; ``--quick``: 100k nodes, 1M
edges). Each side's batches are timed part by part in the training thread, batch after batch,
the order of the two sides reversed every batch (``benchmarks/records.py``'s orders):

* graphflow: ``sampling`` is the next batch of :class:`graphflow.sampling.edges.EdgeBatches`
  sampled inline (no prefetch workers, so that it is timed here; the batch's edges and their
  reverses excluded, the negatives drawn), its first layer reading the feature table in place
  (``IndexedRows``, as the link-prediction task trains inline): its gather is inside its
  forward, ``gathering`` 0;
* DGL: ``sampling`` is the next batch of ``dgl.dataloading.DataLoader`` over
  ``as_edge_prediction_sampler(NeighborSampler([15, 10]), exclude="reverse_id", ...)`` (no
  workers), ``gathering`` is ``feat[input_nodes]``;
* both: ``forward`` (encoder, decoder, loss), ``backward``, ``adam``.

Then the dense products of ``--product-batches`` more batches are recorded on BOTH sides
(``benchmarks/products.py``'s ``RecordProducts``) and replayed alone, the two sides' replays
alternating (``--replay-rounds``); the shares table splits each side's step into sampling,
gathering, products, other passes (forward + backward - products) and optimizer (means over
the timed batches), and the products' achieved GFLOP/s are printed against the CPU's measured
peak (a 4096 x 1024 x 1024 float32 GEMM with the same threads, ``--peak-reps``). Each side's
step is also printed as a median with its range and count.

    flock /tmp/graphflow-bench.lock python benchmarks/link_parts.py --quick [--record]

A profile of parts, not the end-to-end figure: ``benchmarks/linkpred.py --epochs N`` times
whole epochs. The last output line is one JSON object (milliseconds per batch);
``--record`` saves it under ``benchmarks/results/link_parts/``.
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

from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.linkpred.decoders import DotDecoder, decode_pairs  # noqa: E402
from graphflow.linkpred.negatives import NegativeSampler  # noqa: E402
from graphflow.runtime import allocator, cores  # noqa: E402
from graphflow.sampling.edges import EdgeBatches  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402
from graphflow.train.optim import make_optimizer  # noqa: E402
from graphflow_plugins.samplers.neighbor import NeighborSampler  # noqa: E402

from benchmarks.batch_parts import print_shares, product_rate, shares, time_parts  # noqa: E402
from benchmarks.linkpred import BATCH, FANOUTS, DGLSAGE, bce, build, encoder  # noqa: E402
from benchmarks.products import RecordProducts, peak  # noqa: E402
from benchmarks.products import flops as flops_of  # noqa: E402
from benchmarks.products import race as race_products  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import spread, write  # noqa: E402

PARTS = ("sample", "gather", "forward", "backward", "adam")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="100k nodes, 1M edges")
    p.add_argument("--nodes", type=int, default=0, help="graph size (overrides --quick)")
    p.add_argument("--edges", type=int, default=0,
                   help="edges before their reverses are added (overrides --quick)")
    p.add_argument("--allocator", choices=["retain", "system"], default="retain")
    p.add_argument("--batches", type=int, default=30)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--product-batches", type=int, default=3,
                   help="untimed batches whose dense products are recorded and run alone")
    p.add_argument("--replay-rounds", type=int, default=5,
                   help="rounds of both sides' products replayed alone, alternating")
    p.add_argument("--peak-reps", type=int, default=5,
                   help="timed 4096 x 1024 x 1024 float32 GEMMs for the CPU's peak")
    p.add_argument("--threads", type=int, default=0,
                   help="training threads (default: the core policy's); DGL gets the same")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/link_parts/ "
                        "(benchmarks/records.py)")
    a = p.parse_args(argv)
    if a.batches < 1 or a.warmup < 0 or a.product_batches < 1:
        p.error("--batches and --product-batches must be at least 1, --warmup at least 0")
    if a.replay_rounds < 1 or a.peak_reps < 1:
        p.error("--replay-rounds and --peak-reps must be at least 1")
    load_before = load_average()
    malloc = allocator.apply(a.allocator)["allocator"]
    nodes, half = (100_000, 500_000) if a.quick else (1_000_000, 5_000_000)
    nodes, half = a.nodes or nodes, (a.edges or 2 * half) // 2
    data, reverse = build(nodes, half, 0)
    g = data.graph
    feat = g.ndata["feat"]
    plan = cores.plan("sampled", None, {"threads": a.threads} if a.threads else None)
    need = (a.warmup + a.batches + a.product_batches) * BATCH
    eids = torch.randperm(g.num_edges(), generator=torch.Generator().manual_seed(3))
    eids = eids.repeat(need // eids.shape[0] + 1)[:need]  # wraps around on a small graph

    torch.manual_seed(0)
    ours = encoder()
    opt = make_optimizer("adam", ours, lr=1e-3, weight_decay=0.0)
    torch.manual_seed(0)
    theirs = DGLSAGE()
    peer_opt = make_optimizer("adam", theirs, lr=1e-3, weight_decay=0.0)  # the same Adam
    dgl.utils.set_num_threads(plan.threads)
    dec = DotDecoder()

    sampler = NeighborSampler(NeighborSampler.Options(fanouts=FANOUTS, batch_size=BATCH,
                                                      shuffle=False))
    graph = sampler.prepare(data, torch.device("cpu"))
    src, dst = g.edges()
    edge_batches = EdgeBatches(sampler, graph, src, dst, reverse,
                               NegativeSampler("uniform", data.num_nodes), k=1)
    peer_sampler = dgl.dataloading.as_edge_prediction_sampler(
        dgl.dataloading.NeighborSampler(FANOUTS), exclude="reverse_id", reverse_eids=reverse,
        negative_sampler=dgl.dataloading.negative_sampler.Uniform(1))
    loader = dgl.dataloading.DataLoader(g, eids, peer_sampler, batch_size=BATCH,
                                        shuffle=False)

    def our_loss(mb) -> torch.Tensor:
        h = ours([Adjacency.from_block(b) for b in mb.blocks], mb.features)
        return bce(*decode_pairs(dec, h, mb.pos, mb.neg))

    def their_loss(blocks, x, pair, neg) -> torch.Tensor:
        h = theirs(blocks, x)
        ps, pd = pair.edges()
        ns, nd = neg.edges()
        return bce((h[ps] * h[pd]).sum(-1), (h[ns] * h[nd]).sum(-1))

    def step(loss_of, optimizer, took: dict[str, float], *args) -> None:
        t0 = time.perf_counter()
        loss = loss_of(*args)
        t1 = time.perf_counter()
        optimizer.zero_grad()
        loss.backward()
        t2 = time.perf_counter()
        optimizer.step()
        took.update(forward=t1 - t0, backward=t2 - t1, adam=time.perf_counter() - t2)

    with cores.applied(plan):
        our_batches = iter(edge_batches.iterate(eids, torch.Generator().manual_seed(1),
                                                workers=0, rows=ours.accepts_rows))
        their_batches = iter(loader)

        def ours_batch(_: int) -> dict[str, float]:
            t0 = time.perf_counter()
            mb = next(our_batches)
            took = {"sample": time.perf_counter() - t0, "gather": 0.0}
            step(our_loss, opt, took, mb)
            return took

        def theirs_batch(_: int) -> dict[str, float]:
            t0 = time.perf_counter()
            input_nodes, pair, neg, blocks = next(their_batches)
            t1 = time.perf_counter()
            x = feat[input_nodes]
            took = {"sample": t1 - t0, "gather": time.perf_counter() - t1}
            step(their_loss, peer_opt, took, blocks, x, pair, neg)
            return took

        sides = {"graphflow": ours_batch, "dgl": theirs_batch}
        timed = time_parts(sides, dict.fromkeys(sides, PARTS), a.warmup, a.batches)
        steps, calls = timed.steps, timed.calls
        # the dense products of a few more batches, both sides, recorded (no optimizer step)
        recorders = {name: RecordProducts() for name in sides}
        for _ in range(a.product_batches):
            mb = next(our_batches)
            with recorders["graphflow"]:
                our_loss(mb).backward()
            opt.zero_grad()
            input_nodes, pair, neg, blocks = next(their_batches)
            x = feat[input_nodes]
            with recorders["dgl"]:
                their_loss(blocks, x, pair, neg).backward()
            peer_opt.zero_grad()
        replayed = race_products({n: r.calls for n, r in recorders.items()}, a.replay_rounds)
        peak_rate = peak(reps=a.peak_reps)
    ms = {name: timed.ms(name, PARTS, a.batches) for name in sides}
    alone = {name: replayed.median(name) / a.product_batches * 1e3 for name in sides}
    where = {name: shares(ms[name]["sample"], ms[name]["gather"],
                          ms[name]["forward"] + ms[name]["backward"], ms[name]["adam"],
                          alone[name]) for name in sides}
    rates = {name: product_rate(flops_of(recorders[name].calls) / a.product_batches,
                                alone[name], peak_rate) for name in sides}
    print(f"link prediction, {g.num_nodes():,} nodes, {g.num_edges():,} edges, {a.batches} "
          f"batches of {BATCH} positives + 1 negative each, malloc {malloc}, {plan.threads} "
          f"training threads (DGL: {dgl.utils.get_num_threads()}), the order of the sides "
          f"reversed every batch:")
    print_shares(where, rates, peak_rate, steps, True)
    ratio = spread(steps["dgl"])["median"] / spread(steps["graphflow"])["median"]
    print(f"  step ratio (DGL / graphflow, medians): {ratio:.2f}", flush=True)
    out = {"nodes": g.num_nodes(), "edges": g.num_edges(), "batches": a.batches,
           "allocator": malloc, "threads": plan.threads,
           "ms": {n: {k: round(v, 3) for k, v in parts.items()} for n, parts in ms.items()},
           "products_alone": {k: round(v, 3) for k, v in alone.items()},
           "shares": where, "product_rates": rates, "peak": peak_rate,
           "step_ms": steps, "step_spread": {k: spread(v) for k, v in steps.items()},
           "step_ratio": ratio, "calls": calls, "replay": replayed.record(scale=1e3)}
    if a.record:
        write("link_parts", out, load_before=load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
