"""Fuzz graphflow with a large budget of malformed input and count who breaks the property.

The strategies and the checker are ``graphflow.fuzz``'s, the same as ``tests/fuzz/`` runs
with a small, fixed budget. Every generated case (a malformed file for one of the seven
first-party loaders, a malformed pipeline TOML, or malformed ``--set`` values) runs
``graphflow run`` in-process under a time bound, and must either succeed with a complete
``run.json`` or exit 1 with one ``graphflow: error:`` line naming the file, line or key:
never a traceback or internal error, never a hang, never outputs without a complete
``run.json``.

    flock /tmp/graphflow-bench.lock python benchmarks/fuzz.py [--budget 10200] [--workers 2]
        [--seed 0] [--bound 20] [--components edgelist,mat,...] [--show 3]

The budget is split over the components by weight (Cora's files and training runs cost
more) and into chunks run by ``--workers`` processes. Per component it prints the inputs
tried, how many failed the property, tracebacks (tracebacks, internal errors, plugin
crashes), hangs, and the exit codes seen; then the first failures; the last line is one JSON
object with the totals. Needs ``hypothesis`` (``pip install -e ".[test]"``).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import re
import shutil
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

WEIGHTS = {"edgelist": 13, "parquet": 13, "mat": 13, "networkx": 13, "dgl": 13,
           "synthetic": 13, "planetoid": 1, "config.toml": 10, "config.set": 13}
"""Share of the budget per component (planetoid: Cora's files are read per case)."""
CHUNK = 400


def fuzz_chunk(component: str, examples: int, seed: int, bound: float,
               show: int) -> dict:
    """Run ``examples`` generated cases of ``component``; return the counts (in a worker)."""
    import faulthandler

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from graphflow.fuzz import STRATEGIES, run_case

    faulthandler.enable()
    stats: Counter = Counter()
    failures: list[str] = []
    kinds: Counter = Counter()
    root = Path(tempfile.mkdtemp(prefix=f"graphflow-fuzz-{component}-"))

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=STRATEGIES[component]())
    def one(case):
        folder = Path(tempfile.mkdtemp(dir=root))
        try:
            outcome = run_case(case, folder, bound=bound)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        stats["tried"] += 1
        stats[f"exit_{outcome.code}"] += 1
        if outcome.hung:
            stats["hangs"] += 1
        if outcome.traceback:
            stats["tracebacks"] += 1
        if not outcome.ok:
            stats["failed"] += 1
            kind = re.sub(r"/\S+", "PATH", outcome.problems[0])[:100]
            if kinds[kind] == 0 and len(failures) < show:
                failures.append(outcome.report())
            kinds[kind] += 1

    start = time.perf_counter()
    try:
        one()
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return {"component": component, "stats": dict(stats), "failures": failures,
            "kinds": dict(kinds), "seconds": time.perf_counter() - start}


def plan(budget: int, components: list[str]) -> dict[str, int]:
    weights = {c: WEIGHTS.get(c, 10) for c in components}
    total = sum(weights.values())
    return {c: max(1, round(budget * w / total)) for c, w in weights.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=10200, help="generated inputs in all")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bound", type=float, default=20.0, help="seconds per input (a hang)")
    p.add_argument("--components", default=",".join(WEIGHTS))
    p.add_argument("--show", type=int, default=3, help="failures printed per component")
    args = p.parse_args(argv)
    counts = plan(args.budget, [c for c in args.components.split(",") if c])
    jobs = []
    for component, n in counts.items():
        for k, start in enumerate(range(0, n, CHUNK)):
            jobs.append((component, min(CHUNK, n - start), args.seed * 1000 + k, args.bound,
                         args.show))
    print(f"fuzzing {sum(counts.values())} inputs over {len(counts)} components in "
          f"{len(jobs)} chunks, {args.workers} workers, {args.bound:g}s bound per input",
          flush=True)
    totals: dict[str, Counter] = {c: Counter() for c in counts}
    failures: dict[str, list[str]] = {c: [] for c in counts}
    kinds: dict[str, Counter] = {c: Counter() for c in counts}
    crashed: list[str] = []
    start = time.perf_counter()
    with ProcessPoolExecutor(args.workers, mp_context=mp.get_context("spawn")) as pool:
        futures = {pool.submit(fuzz_chunk, *job): job for job in jobs}
        for future in as_completed(futures):
            component = futures[future][0]
            try:
                result = future.result()
            except BrokenProcessPool:  # a worker died (a crash in native code)
                crashed.append(component)
                continue
            totals[component].update(result["stats"])
            totals[component]["seconds"] += result["seconds"]
            kinds[component].update(result["kinds"])
            failures[component] += result["failures"][: args.show - len(failures[component])]
            print(f"  {component}: chunk of {result['stats'].get('tried', 0)} done in "
                  f"{result['seconds']:.0f}s", flush=True)
    wall = time.perf_counter() - start

    print(f"\n{'component':<12} {'tried':>6} {'failed':>6} {'tracebacks':>10} {'hangs':>5}  "
          f"exit codes")
    for c, t in totals.items():
        codes = ", ".join(f"{k[5:]}: {v}" for k, v in sorted(t.items()) if k.startswith("exit_"))
        print(f"{c:<12} {t['tried']:>6} {t['failed']:>6} {t['tracebacks']:>10} "
              f"{t['hangs']:>5}  {codes}")
    for c in counts:
        if kinds[c]:
            print(f"\n{c}: kinds of failure: {dict(kinds[c].most_common(8))}")
            for report in failures[c]:
                print("  " + report.replace("\n", "\n  "))
    summary = {
        "inputs": sum(t["tried"] for t in totals.values()),
        "failed": sum(t["failed"] for t in totals.values()),
        "tracebacks": sum(t["tracebacks"] for t in totals.values()),
        "hangs": sum(t["hangs"] for t in totals.values()),
        "worker_crashes": len(crashed),
        "seconds": round(wall, 1), "workers": args.workers, "seed": args.seed,
        "per_component": {c: {"tried": t["tried"], "failed": t["failed"],
                              "tracebacks": t["tracebacks"], "hangs": t["hangs"]}
                          for c, t in totals.items()},
    }
    print(json.dumps(summary))
    return 0 if summary["failed"] == 0 and not crashed else 1


if __name__ == "__main__":
    sys.exit(main())
