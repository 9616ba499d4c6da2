"""Memory of the sparse core at scale: a 2-layer GCN, forward + backward, on an R-MAT graph.

Default: 1M nodes, 10M edges (duplicates and self-loops kept, as R-MAT makes them), 16
features, hidden 16, 16 outputs. Everything the model touches is O(nnz + N * F): the CSR and
its transpose, degree norms, and (N, F) activations; a dense N x N adjacency would need
N^2 * 4 bytes (4 TB here). The script prints the resident memory after each stage and the
peak RSS of the process, and fails (exit code 1) when the peak is over ``--limit-gib``.

    python benchmarks/gcn_memory.py [--quick] [--nodes N] [--edges E] [--limit-gib 4]

The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from graphflow.io.synthetic import rmat  # noqa: E402
from graphflow.nn import GCNConv  # noqa: E402
from graphflow.sparse import Adjacency  # noqa: E402

GIB = 2**30


def rss_gib() -> float:
    """Current resident set size."""
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() / GIB


def peak_rss_gib() -> float:
    """Peak resident set size of this process so far (ru_maxrss is in KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / GIB


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="100k nodes, 1M edges")
    p.add_argument("--nodes", type=int, default=None)
    p.add_argument("--edges", type=int, default=None)
    p.add_argument("--features", type=int, default=16)
    p.add_argument("--hidden", type=int, default=16)
    p.add_argument("--limit-gib", type=float, default=4.0)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    nodes = args.nodes or (100_000 if args.quick else 1_000_000)
    edges = args.edges or (1_000_000 if args.quick else 10_000_000)
    torch.manual_seed(args.seed)
    stages: dict[str, float] = {"start": rss_gib()}

    def mark(stage: str, started: float) -> None:
        stages[stage] = rss_gib()
        print(f"{stage:>22}: rss {stages[stage]:.2f} GiB, peak {peak_rss_gib():.2f} GiB "
              f"({time.perf_counter() - started:.1f} s)", flush=True)

    t = time.perf_counter()
    gen = rmat(nodes, edges, seed=args.seed)
    mark("generate R-MAT", t)
    t = time.perf_counter()
    adj = Adjacency.from_edges(gen.src, gen.dst, nodes, nodes)
    del gen
    mark("build CSR", t)
    t = time.perf_counter()
    x = torch.randn(nodes, args.features)
    target = torch.randint(0, args.hidden, (nodes,))
    conv1, conv2 = GCNConv(args.features, args.hidden), GCNConv(args.hidden, args.hidden)
    mark("features + model", t)
    t = time.perf_counter()
    out = conv2(adj, F.relu(conv1(adj, x)))  # (N, hidden)
    loss = F.cross_entropy(out, target)
    mark("forward", t)
    t = time.perf_counter()
    loss.backward()
    mark("backward (1st: + A^T)", t)
    t = time.perf_counter()
    out = conv2(adj, F.relu(conv1(adj, x)))
    F.cross_entropy(out, target).backward()
    mark("forward + backward", t)
    peak = peak_rss_gib()
    ok = peak < args.limit_gib
    dense_gb = nodes * nodes * 4 / 1e9
    dense = f"{dense_gb / 1e3:,.1f} TB" if dense_gb >= 1e3 else f"{dense_gb:,.1f} GB"
    print(f"{nodes:,} nodes, {adj.nnz:,} edges, {args.features} features: peak RSS "
          f"{peak:.2f} GiB ({'under' if ok else 'OVER'} the {args.limit_gib} GiB limit; a "
          f"dense float32 adjacency alone would be {dense})")
    print(json.dumps({"benchmark": "gcn_memory", "nodes": nodes, "edges": adj.nnz,
                      "features": args.features, "hidden": args.hidden,
                      "peak_rss_gib": round(peak, 3), "limit_gib": args.limit_gib,
                      "under_limit": ok,
                      "rss_gib_by_stage": {k: round(v, 3) for k, v in stages.items()}}))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
