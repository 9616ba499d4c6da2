"""Hogwild skip-gram stability: the row cap per worker against the cap across workers.

Trains ``SkipGram.fit`` for one epoch on node2vec walks (p = 0.25, q = 4) of a generated graph
with one worker, and with ``--workers`` Hogwild workers under two rules: each worker capping
a row's summed gradients at ``SUM_LIMIT`` on its own (``per-worker``: what the trainer did
before the cap held across workers), and the trainer's rule, where each worker also counts
the row's expected occurrences in the other workers' concurrent steps (``across``). Prints
the mean loss per positive pair (NaN: the tables diverged) and the fit's seconds.

Usage::

    python benchmarks/hogwild_stability.py --graph rmat --nodes 10000 --edges 334000 --lr 0.03
    python benchmarks/hogwild_stability.py --graph dense --nodes 10000 --lr 0.05
    python benchmarks/hogwild_stability.py --graph social --nodes 10312 --edges 333983 --lr 0.025
    python benchmarks/hogwild_stability.py --graph rmat --nodes 3000 --edges 100000 \\
        --walk-length 40 --walks-per-node 4 --lr 0.03,0.05 --seeds 2
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.io.synthetic import overlapping_communities, rmat  # noqa: E402
from graphflow.walks.csr import WalkGraph, from_edges  # noqa: E402
from graphflow.walks.node2vec import random_walks  # noqa: E402
from graphflow.embeddings.skipgram import SkipGram, SkipGramSettings  # noqa: E402


class PerWorkerCap(SkipGram):
    """The cap per worker alone: no row counts the other workers' steps."""

    def concurrent_occurrences(self, *args: object) -> tuple[torch.Tensor, torch.Tensor]:
        busy_e, busy_x = super().concurrent_occurrences(*args)
        return torch.zeros_like(busy_e), torch.zeros_like(busy_x)


def make_graph(kind: str, nodes: int, edges: int, seed: int) -> WalkGraph:
    if kind == "social":  # benchmarks/node2vec.py's social case (power-law, 39 labels)
        from benchmarks.node2vec import SOCIAL_LABELS, SOCIAL_WITHIN, social_communities

        d = social_communities(nodes, SOCIAL_LABELS, edges, within=SOCIAL_WITHIN, seed=seed)
        return from_edges(d.src, d.dst, nodes)
    if kind == "dense":  # benchmarks/node2vec.py's dense case
        d = overlapping_communities(nodes, 36, 70.0, within=0.15, seed=seed)
        return from_edges(d.src, d.dst, nodes)
    d = rmat(nodes, edges, seed=seed)
    keep = d.src != d.dst
    src, dst = d.src[keep], d.dst[keep]
    return from_edges(torch.cat([src, dst]), torch.cat([dst, src]), nodes)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graph", choices=("rmat", "dense", "social"), default="rmat")
    p.add_argument("--nodes", type=int, default=10_000)
    p.add_argument("--edges", type=int, default=334_000,
                   help="rmat: undirected edges drawn; social: undirected edges kept")
    p.add_argument("--walk-length", type=int, default=80)
    p.add_argument("--walks-per-node", type=int, default=10)
    p.add_argument("--lr", default="0.03", help="comma-separated learning rates")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seeds", type=int, default=1, help="training seeds per setting")
    p.add_argument("--precision", default="float32", choices=("auto", "float32", "bfloat16"))
    args = p.parse_args()
    torch.set_num_threads(1)
    graph = make_graph(args.graph, args.nodes, args.edges, 0)
    gen = torch.Generator().manual_seed(0)
    starts = torch.arange(args.nodes).repeat(args.walks_per_node)
    starts = starts[torch.randperm(starts.numel(), generator=gen)]
    walks = torch.cat([random_walks(graph, b, args.walk_length, p=0.25, q=4.0, generator=gen)
                       for b in starts.split(100_000)])
    print(f"{args.graph}: {args.nodes} nodes, {graph.num_edges} directed edges, max degree "
          f"{int(graph.out_degrees().max())}; walks {tuple(walks.shape)}", flush=True)
    settings = SkipGramSettings(precision=args.precision)
    runs = [("1 worker", SkipGram, 1), ("per-worker", PerWorkerCap, args.workers),
            ("across", SkipGram, args.workers)]
    for lr in (float(x) for x in args.lr.split(",")):
        for name, cls, workers in runs:
            for seed in range(args.seeds):
                model = cls(args.nodes, settings, graph.in_strength(), torch.device("cpu"),
                            torch.Generator().manual_seed(seed), graph=graph)
                t = time.perf_counter()
                loss, pairs, _ = model.fit(walks, lr, 0, walks.shape[0], 64, workers=workers)
                seconds = time.perf_counter() - t
                print(f"lr {lr:g}  {name:10s} workers {workers}  seed {seed}  loss per pair "
                      f"{float(loss / pairs):.4f}  finite {bool(torch.isfinite(model.emb).all())}"
                      f"  {seconds:.1f}s", flush=True)


if __name__ == "__main__":
    main()
