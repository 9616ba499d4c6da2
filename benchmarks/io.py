"""Edge-list loading speed: graphflow's ``edgelist`` loader vs pandas, side by side.

The input is a generated TSV of R-MAT edges (power-law degrees) whose node ids are strings
(``u`` + a number), 10M edges over 1M nodes by default. Both peers turn it into a DGLGraph
with string ids mapped to ``0..N-1``:

* graphflow: a pipeline whose ``[load]`` is ``edgelist`` (directed, tab) run through the real
  runner; we time its load stage (pyarrow's multithreaded CSV reader, the ids factorized as
  fixed-width integer keys (``graphflow.io.factorize``), ``dgl.graph``).
* pandas: ``pd.read_csv`` (defaults: C engine) + ``pd.factorize`` over sources and targets
  + ``dgl.graph``.

After ``--warmup`` untimed runs of each, the two alternate run by run in one process (noise
from other processes hits both alike); we report the median wall time and edges/s of each,
their ratio, the CPU time each used (all threads), and each peer's peak resident memory above
the process's baseline while it runs (sampled every 10 ms).

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


def pandas_peer(tsv: Path) -> Callable[[], tuple[dgl.DGLGraph, float]]:
    def run() -> tuple[dgl.DGLGraph, float]:
        start = time.perf_counter()
        df = pd.read_csv(tsv, sep="\t", header=None, names=["src", "dst"])
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
    seconds: dict[str, list[float]] = {name: [] for name in peers}
    for rep in range(args.repeats):
        for name in (list(peers) if rep % 2 == 0 else list(peers)[::-1]):
            start = time.perf_counter()
            peers[name]()
            seconds[name].append(time.perf_counter() - start)
            print(f"  {name:9s} run {rep}: {seconds[name][-1]:6.2f}s", file=sys.stderr)
    gen = rmat(nodes, edges, seed=args.seed)
    ref_src, ref_dst = rmat_per_level(nodes, edges, seed=args.seed)
    top = {name: torch.bincount(d, minlength=nodes).max().item()
           for name, d in (("graphflow", gen.dst), ("per_level", ref_dst))}
    median = {name: statistics.median(v) for name, v in seconds.items()}
    ratio = statistics.median(r / g for r, g in zip(seconds["per_level"], seconds["graphflow"]))
    print(f"R-MAT {nodes:,} nodes, {edges:,} edges, {torch.get_num_threads()} threads")
    for name in peers:
        print(f"  {name:9s} {median[name]:6.2f}s  {edges / median[name] / 1e6:6.1f} M edges/s  "
              f"max in-degree {top[name]:,}")
    print(f"  speed ratio graphflow / per-level: {ratio:.2f}x")
    print(json.dumps({"benchmark": "rmat", "nodes": nodes, "edges": edges,
                      "graphflow_s": round(median["graphflow"], 3),
                      "per_level_s": round(median["per_level"], 3),
                      "max_in_degree": top, "ratio": round(ratio, 2)}))
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
    args = p.parse_args(argv)
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
        peers = {"graphflow": graphflow_peer(tsv, Path(tmp)), "pandas": pandas_peer(tsv)}
        seconds: dict[str, list[float]] = {name: [] for name in peers}
        cpu_used: dict[str, list[float]] = {name: [] for name in peers}
        peak: dict[str, float] = {name: 0.0 for name in peers}
        shapes = {}
        for _ in range(args.warmup):  # page cache, allocator, lazy imports
            for run in peers.values():
                run()
        for rep in range(args.repeats):
            order = list(peers) if rep % 2 == 0 else list(peers)[::-1]
            for name in order:
                cpu = cpu_seconds()
                with PeakRSS() as mem:
                    g, secs = peers[name]()
                cpu = cpu_seconds() - cpu
                shapes[name] = (g.num_nodes(), g.num_edges())
                del g
                seconds[name].append(secs)
                cpu_used[name].append(cpu)
                peak[name] = max(peak[name], mem.mib)
                print(f"  {name:9s} run {rep}: {secs:6.2f}s  cpu {cpu:6.2f}s  "
                      f"peak +{mem.mib:6.0f} MiB", file=sys.stderr)
        if shapes["graphflow"] != shapes["pandas"]:
            raise SystemExit(f"the peers disagree: {shapes}")
    median = {name: statistics.median(v) for name, v in seconds.items()}
    rate = {name: edges / s for name, s in median.items()}
    ratio = statistics.median(p / g for p, g in zip(seconds["pandas"], seconds["graphflow"]))
    print(f"{edges:,} edges, {shapes['graphflow'][0]:,} nodes, string ids, "
          f"{torch.get_num_threads()} threads")
    cpu = {name: statistics.median(v) for name, v in cpu_used.items()}
    for name in peers:
        print(f"  {name:9s} {median[name]:6.2f}s  {rate[name] / 1e6:6.2f} M edges/s  "
              f"cpu {cpu[name]:5.2f}s  peak +{peak[name]:.0f} MiB")
    print(f"  speed ratio graphflow / pandas: {ratio:.2f}x (median of back-to-back pairs); "
          f"CPU time ratio {cpu['pandas'] / cpu['graphflow']:.2f}x")
    print(json.dumps({
        "benchmark": "io", "edges": edges, "nodes": shapes["graphflow"][0],
        "repeats": args.repeats, "threads": torch.get_num_threads(),
        "graphflow_s": round(median["graphflow"], 3), "pandas_s": round(median["pandas"], 3),
        "graphflow_edges_per_s": round(rate["graphflow"]), "pandas_edges_per_s":
            round(rate["pandas"]),
        "graphflow_cpu_s": round(cpu["graphflow"], 3), "pandas_cpu_s": round(cpu["pandas"], 3),
        "graphflow_peak_mib": round(peak["graphflow"]), "pandas_peak_mib": round(peak["pandas"]),
        "ratio": round(ratio, 2), "cpu_ratio": round(cpu["pandas"] / cpu["graphflow"], 2),
    }))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
