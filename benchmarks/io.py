"""Edge-list loading speed: graphflow's ``edgelist`` loader vs pandas, side by side.

The input is a generated TSV of R-MAT edges (power-law degrees) whose node ids are strings
(``u`` + a number), 10M edges over 1M nodes by default. Both peers turn it into a DGLGraph
with string ids mapped to ``0..N-1``:

* graphflow: a pipeline whose ``[load]`` is ``edgelist`` (directed, tab) run through the real
  runner; we time its load stage (pyarrow's multithreaded CSV reader, the ids factorized as
  fixed-width integer keys (``graphflow.io.factorize``), ``dgl.graph``).
* pandas: ``pd.read_csv`` (defaults: C engine, single-threaded) + ``pd.factorize`` over
  sources and targets + ``dgl.graph``.
* pandas-pyarrow: the same with ``pd.read_csv(engine="pyarrow")``, pyarrow's multithreaded
  reader, the one graphflow's loader uses: the same reader on both sides.

After ``--warmup`` untimed runs of each, the peers run ``--repeats`` times in one process, the
order reversed every repetition (``benchmarks/records.py``); we report each peer's median wall
time with its range and count (the fastest labelled ``best``), its edges/s, the ratios of the
medians with their range over repetitions, the CPU time each used (all threads), and each
peer's peak resident memory above the process's baseline while it runs (sampled every 10 ms).
``--record`` saves the figures under ``benchmarks/results/io/``.

    python benchmarks/io.py [--quick] [--edges E] [--nodes N] [--repeats R] [--keep DIR]
    python benchmarks/io.py --rmat [--quick]    # the synthetic loader's generator instead

``--quick`` uses 1M edges. The last output line is one JSON object with the figures.

``--rmat`` times ``graphflow.io.synthetic.rmat`` (alias tables over 7 levels at a time, cache-sized
chunks) against the straightforward one-draw-per-level R-MAT it replaced, both vectorised in
torch, on 1M nodes / 20M edges (``--quick``: 100k / 2M), alternating runs.
"""

from __future__ import annotations

import argparse
import json
import math
import resource
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.compat.dgl import dgl  # noqa: E402
from graphflow.config import load_config  # noqa: E402
from graphflow.io.synthetic import rmat  # noqa: E402
from graphflow.io.atomic import atomic_path  # noqa: E402
from graphflow.manager import create_host  # noqa: E402
from graphflow.runner import run_pipeline  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402

MIB = 2**20
PAGE = resource.getpagesize()


def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE


class PeakRSS:
    """Peak resident memory above the starting level while the ``with`` block runs."""

    def __init__(self, interval: float = 0.01):
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()

    def _watch(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, rss_bytes())
            time.sleep(self.interval)

    def __enter__(self) -> PeakRSS:
        self.base = rss_bytes()
        self.peak = self.base
        self._thread = threading.Thread(target=self._watch, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, rss_bytes())

    @property
    def mib(self) -> float:
        return (self.peak - self.base) / MIB


def cpu_seconds() -> float:
    """User + system CPU time of this process, all threads."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def write_tsv(path: Path, nodes: int, edges: int, seed: int) -> None:
    """R-MAT edges with string ids ``u<number>``, tab separated, no header."""
    gen = rmat(nodes, edges, seed=seed)
    names = pc.binary_join_element_wise("u", pc.cast(pa.array(np.arange(nodes)), pa.string()), "")
    table = pa.table({"src": names.take(pa.array(gen.src.numpy())),
                      "dst": names.take(pa.array(gen.dst.numpy()))})
    with atomic_path(path) as tmp:
        pacsv.write_csv(table, tmp, pacsv.WriteOptions(include_header=False, delimiter="\t",
                                                       quoting_style="none"))


def graphflow_peer(tsv: Path, workdir: Path) -> Callable[[], tuple[dgl.DGLGraph, float]]:
    toml = workdir / "load.toml"
    toml.write_text(f'[pipeline]\nname = "io-bench"\n[load]\ntype = "edgelist"\n'
                    f'path = "{tsv}"\ndelimiter = "tab"\ndirected = true\n')
    host = create_host()

    def run() -> tuple[dgl.DGLGraph, float]:
        config = load_config(toml, host.registry, out_dir=workdir / "run")
        result = run_pipeline(config, host, quiet=True)
        (stage,) = [s for s in result.record["stages"] if s["section"] == "load"]
        return result.ctx.data.graph, stage["seconds"]

    return run


def pandas_peer(tsv: Path, engine: str = "c") -> Callable[[], tuple[dgl.DGLGraph, float]]:
    def run() -> tuple[dgl.DGLGraph, float]:
        start = time.perf_counter()
        df = pd.read_csv(tsv, sep="\t", header=None, names=["src", "dst"], engine=engine)
        codes, uniques = pd.factorize(pd.concat([df["src"], df["dst"]], ignore_index=True))
        n = len(df)
        src = torch.from_numpy(np.ascontiguousarray(codes[:n], dtype=np.int64))
        dst = torch.from_numpy(np.ascontiguousarray(codes[n:], dtype=np.int64))
        g = dgl.graph((src, dst), num_nodes=len(uniques))
        return g, time.perf_counter() - start

    return run


def rmat_per_level(nodes: int, edges: int, *, seed: int = 0, a: float = 0.57, b: float = 0.19,
                   c: float = 0.19, chunk: int = 1 << 22) -> tuple[torch.Tensor, torch.Tensor]:
    """The reference: one uniform draw and a handful of passes per quadrant level."""
    gen = torch.Generator().manual_seed(seed)
    scale = max(1, math.ceil(math.log2(nodes)))
    perm = torch.randperm(nodes, generator=gen)
    src_parts, dst_parts = [], []
    for start in range(0, edges, chunk):
        m = min(chunk, edges - start)
        s = torch.zeros(m, dtype=torch.int64)
        d = torch.zeros(m, dtype=torch.int64)
        for _ in range(scale):
            r = torch.rand(m, generator=gen)
            s = (s << 1) | (r >= a + b).long()
            d = (d << 1) | (((r >= a) & (r < a + b)) | (r >= a + b + c)).long()
        src_parts.append(perm[s % nodes])
        dst_parts.append(perm[d % nodes])
    return torch.cat(src_parts), torch.cat(dst_parts)


def bench_rmat(args: argparse.Namespace) -> int:
    nodes = args.nodes or (100_000 if args.quick else 1_000_000)
    edges = args.edges or (2_000_000 if args.quick else 20_000_000)
    peers = {"graphflow": lambda: rmat(nodes, edges, seed=args.seed),
             "per_level": lambda: rmat_per_level(nodes, edges, seed=args.seed)}
    raced = records.race({name: (lambda rep, fn=fn: fn()) for name, fn in peers.items()},
                         args.repeats, warmup=args.warmup,
                         on_time=lambda name, rep, s: print(
                             f"  {name:9s} run {rep}: {s:6.2f}s", file=sys.stderr))
    seconds = raced.times
    gen = rmat(nodes, edges, seed=args.seed)
    ref_src, ref_dst = rmat_per_level(nodes, edges, seed=args.seed)
    top = {name: torch.bincount(d, minlength=nodes).max().item()
           for name, d in (("graphflow", gen.dst), ("per_level", ref_dst))}
    median = {name: statistics.median(v) for name, v in seconds.items()}
    ratio = statistics.median(r / g for r, g in zip(seconds["per_level"], seconds["graphflow"]))
    print(f"R-MAT {nodes:,} nodes, {edges:,} edges, {torch.get_num_threads()} threads")
    for name in peers:
        print(f"  {raced.summary(name)}  {edges / median[name] / 1e6:6.1f} M edges/s  "
              f"max in-degree {top[name]:,}")
    pair = raced.ratio("per_level", "graphflow")
    print(f"  speed ratio graphflow / per-level: {ratio:.2f}x (median of the pairs; ratio of "
          f"the medians {pair['median']:.2f}, pairs {pair['min']:.2f}-{pair['max']:.2f})")
    print(json.dumps({"benchmark": "rmat", "nodes": nodes, "edges": edges,
                      "graphflow_s": round(median["graphflow"], 3),
                      "per_level_s": round(median["per_level"], 3),
                      "max_in_degree": top, "ratio": round(ratio, 2), **raced.record()}))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="1M edges over 100k nodes")
    p.add_argument("--edges", type=int, default=None)
    p.add_argument("--nodes", type=int, default=None)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--warmup", type=int, default=1, help="untimed runs of each peer first")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--keep", type=Path, default=None,
                   help="folder to keep (and reuse) the generated TSV in")
    p.add_argument("--rmat", action="store_true", help="benchmark the R-MAT generator instead")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/io/ (benchmarks/records.py)")
    args = p.parse_args(argv)
    args.load_before = load_average()
    if args.rmat:
        return bench_rmat(args)
    edges = args.edges or (1_000_000 if args.quick else 10_000_000)
    nodes = args.nodes or max(2, edges // 10)
    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        tsv = folder / f"rmat_{nodes}_{edges}_{args.seed}.tsv"
        if not tsv.exists():
            start = time.perf_counter()
            write_tsv(tsv, nodes, edges, args.seed)
            print(f"wrote {tsv} ({tsv.stat().st_size / MIB:.0f} MiB) in "
                  f"{time.perf_counter() - start:.1f}s", file=sys.stderr)
        peers = {"graphflow": graphflow_peer(tsv, Path(tmp)), "pandas": pandas_peer(tsv),
                 "pandas_pyarrow": pandas_peer(tsv, "pyarrow")}
        cpu_used: dict[str, list[float]] = {name: [] for name in peers}
        peak: dict[str, float] = {name: 0.0 for name in peers}
        shapes = {}

        def side(name: str):
            def run(rep: int) -> float:
                if rep < 0:  # warm-up: page cache, allocator, lazy imports
                    peers[name]()
                    return 0.0
                cpu = cpu_seconds()
                with PeakRSS() as mem:
                    g, secs = peers[name]()
                cpu = cpu_seconds() - cpu
                shapes[name] = (g.num_nodes(), g.num_edges())
                del g
                cpu_used[name].append(cpu)
                peak[name] = max(peak[name], mem.mib)
                print(f"  {name:14s} run {rep}: {secs:6.2f}s  cpu {cpu:6.2f}s  "
                      f"peak +{mem.mib:6.0f} MiB", file=sys.stderr)
                return secs
            return run

        # each peer's own time (graphflow: its load stage), the order reversed every repetition
        raced = records.race({name: side(name) for name in peers}, args.repeats,
                             warmup=args.warmup, measure=lambda fn, rep: fn(rep))
        if len(set(shapes.values())) != 1:
            raise SystemExit(f"the peers disagree: {shapes}")
    seconds = raced.times
    median = {name: raced.median(name) for name in peers}
    rate = {name: edges / s for name, s in median.items()}
    ratios = {name: raced.ratio(name, "graphflow") for name in peers if name != "graphflow"}
    print(f"{edges:,} edges, {shapes['graphflow'][0]:,} nodes, string ids, "
          f"{torch.get_num_threads()} threads, {args.repeats} runs each, the order reversed "
          f"every run")
    cpu = {name: statistics.median(v) for name, v in cpu_used.items()}
    for name in peers:
        print(f"  {raced.summary(name, width=14)}  {rate[name] / 1e6:6.2f} M edges/s  "
              f"cpu {cpu[name]:5.2f}s  peak +{peak[name]:.0f} MiB")
    for name, r in ratios.items():
        print(f"  speed ratio graphflow / {name}: {r['median']:.2f}x (ratio of the medians; "
              f"pairs {r['min']:.2f}-{r['max']:.2f}); CPU time ratio "
              f"{cpu[name] / cpu['graphflow']:.2f}x")
    out = {
        "benchmark": "io", "edges": edges, "nodes": shapes["graphflow"][0],
        "repeats": args.repeats, "threads": torch.get_num_threads(),
        **{f"{name}_s": round(median[name], 3) for name in peers},
        **{f"{name}_edges_per_s": round(rate[name]) for name in peers},
        **{f"{name}_cpu_s": round(cpu[name], 3) for name in peers},
        **{f"{name}_peak_mib": round(peak[name]) for name in peers},
        "ratio": round(ratios["pandas"]["median"], 2),
        "ratio_pyarrow": round(ratios["pandas_pyarrow"]["median"], 2),
        "ratio_spread": ratios,
        "cpu_ratio": round(cpu["pandas"] / cpu["graphflow"], 2),
        "cpu_ratio_pyarrow": round(cpu["pandas_pyarrow"] / cpu["graphflow"], 2),
        "seconds": seconds, **raced.record(),
    }
    if args.record:
        write("io", out, load_before=args.load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
