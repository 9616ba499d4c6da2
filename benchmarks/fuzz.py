"""Fuzz graphflow with a large budget of malformed input and count who breaks the property.

The strategies and the checker are ``graphflow.fuzz``'s, the same as ``tests/fuzz/`` runs
with a small, fixed budget. Every generated case (a malformed file for one of the seven
first-party loaders, a malformed pipeline TOML, or malformed ``--set`` values) runs
``graphflow run`` in-process under a time bound, and must either succeed with a complete
``run.json`` or exit 1 with one ``graphflow: error:`` line naming the file, line or key:
never a traceback or internal error, never a hang, never outputs without a complete
``run.json``.

    flock /tmp/graphflow-bench.lock python benchmarks/fuzz.py [--budget 15300] [--workers 2]
        [--seed 0] [--bound 20] [--components edgelist,mat,...] [--show 3]

The budget is split over the components by weight (Cora's files and training runs cost
more) and into chunks run by ``--workers`` processes. Per component it prints the inputs
tried; how many were distinct (hypothesis may draw one twice); how many distinct inputs were
rejected as they should be (exit 1 with one clear line; the others succeeded: odd but valid
input, such as CRLF line ends or a BOM); how many failed the property, with tracebacks
(tracebacks, internal errors, plugin crashes), hangs and native crashes; and the exit codes
seen. Then the first failures; the last line is one JSON object with the totals. The default
budget is sized so that at least 10,000 distinct bad inputs are rejected. Needs
``hypothesis`` (``pip install -e ".[test]"``).

Each chunk runs in its own process, which logs every case before running it: a crash in
native code (an abort or segmentation fault inside a library) is counted against its
component with the case that caused it, and the chunk goes on with the rest of its budget.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

WEIGHTS = {"edgelist": 13, "parquet": 13, "mat": 13, "networkx": 13, "dgl": 13,
           "synthetic": 13, "planetoid": 1, "config.toml": 10, "config.set": 13}
"""Share of the budget per component (planetoid: Cora's files are read per case)."""
CHUNK = 650


def fuzz_chunk(component: str, examples: int, seed: int, bound: float, log: Path) -> None:
    """Run ``examples`` cases of ``component`` (in a chunk process), one JSON line each in
    ``log``: ``{"start": description}`` before the case, its outcome after."""
    import faulthandler

    from hypothesis import HealthCheck, Phase, given, settings
    from hypothesis import seed as hseed

    from graphflow.fuzz import Case, STRATEGIES, run_case

    faulthandler.enable()
    root = Path(tempfile.mkdtemp(prefix=f"graphflow-fuzz-{component}-"))
    warm = root / "warm"  # imports and the first host outside the clock of any case
    run_case(Case("warm", {}, b'[load]\ntype = "synthetic"\nnodes = 20\n'), warm, bound=600)
    out = open(log, "a", encoding="utf-8")

    @hseed(seed)
    @settings(max_examples=examples, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))
    @given(case=STRATEGIES[component]())
    def one(case):
        key = digest(case)
        out.write(json.dumps({"start": case.describe(), "digest": key}) + "\n")
        out.flush()
        folder = Path(tempfile.mkdtemp(dir=root))
        try:
            o = run_case(case, folder, bound=bound)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        out.write(json.dumps({"digest": key, "code": o.code, "hung": o.hung,
                              "traceback": o.traceback,
                              "problems": o.problems, "report": o.report() if o.problems
                              else ""}) + "\n")
        out.flush()

    try:
        one()
    finally:
        out.close()
        shutil.rmtree(root, ignore_errors=True)


def digest(case) -> str:
    """A fingerprint of what the case feeds graphflow (files, pipeline, overrides), to count
    distinct inputs: hypothesis may draw the same input twice."""
    h = hashlib.sha256(case.component.encode())
    for name, data in sorted(case.files.items()):
        h.update(b"\0file\0" + name.encode() + b"\0" + data)
    h.update(b"\0pipeline\0" + case.pipeline)
    for override in case.overrides:
        h.update(b"\0set\0" + override.encode("utf-8", errors="surrogatepass"))
    return h.hexdigest()[:16]


def run_chunk(component: str, examples: int, seed: int, bound: float) -> dict:
    """Run a chunk in a fresh process; on a native crash, count it and go on."""
    stats: Counter = Counter()
    reports: list[str] = []
    digests: dict[str, set[str]] = {"distinct": set(), "rejected": set()}
    start = time.perf_counter()
    left, attempt = examples, 0
    while left > 0 and attempt < 5:
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
            log = Path(fh.name)
        proc = subprocess.run([sys.executable, __file__, "--chunk", component, str(left),
                               str(seed + 100_003 * attempt), str(bound), str(log)],
                              capture_output=True, text=True,
                              timeout=max(600.0, left * bound))
        lines = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
        log.unlink()
        pending = None
        for rec in lines:
            if "start" in rec:
                pending = rec["start"]
                digests["distinct"].add(rec["digest"])
                continue
            pending = None
            stats["tried"] += 1
            stats[f"exit_{rec['code']}"] += 1
            if rec["code"] == 1 and not rec["problems"]:
                digests["rejected"].add(rec["digest"])
            stats["hangs"] += rec["hung"]
            stats["tracebacks"] += rec["traceback"]
            if rec["problems"]:
                stats["failed"] += 1
                reports.append(rec["report"])
        left -= sum(1 for rec in lines if "start" not in rec)
        if proc.returncode == 0:
            break
        # The process died: the case it had started is a crash (a failure of the property).
        stats.update(tried=1, failed=1, crashes=1)
        left -= 1
        tail = "\n".join(proc.stderr.strip().splitlines()[:3])
        reports.append(f"crash (exit {proc.returncode}) running:\n{pending}\n  {tail}")
        attempt += 1
    return {"component": component, "stats": dict(stats), "reports": reports,
            "digests": {k: sorted(v) for k, v in digests.items()},
            "seconds": time.perf_counter() - start}


def plan(budget: int, components: list[str]) -> dict[str, int]:
    weights = {c: WEIGHTS.get(c, 10) for c in components}
    total = sum(weights.values())
    return {c: max(1, round(budget * w / total)) for c, w in weights.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--budget", type=int, default=15300, help="generated inputs in all")
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bound", type=float, default=20.0, help="seconds per input (a hang)")
    p.add_argument("--components", default=",".join(WEIGHTS))
    p.add_argument("--show", type=int, default=3, help="failures printed per component")
    p.add_argument("--chunk", nargs=5, help=argparse.SUPPRESS)  # internal: one chunk
    args = p.parse_args(argv)
    if args.chunk:
        component, n, seed, bound, log = args.chunk
        fuzz_chunk(component, int(n), int(seed), float(bound), Path(log))
        return 0
    counts = plan(args.budget, [c for c in args.components.split(",") if c])
    jobs = []
    for component, n in counts.items():
        for k, first in enumerate(range(0, n, CHUNK)):
            jobs.append((component, min(CHUNK, n - first), args.seed * 1000 + k, args.bound))
    print(f"fuzzing {sum(counts.values())} inputs over {len(counts)} components in "
          f"{len(jobs)} chunks, {args.workers} workers, {args.bound:g}s bound per input",
          flush=True)
    totals: dict[str, Counter] = {c: Counter() for c in counts}
    failures: dict[str, list[str]] = {c: [] for c in counts}
    kinds: dict[str, Counter] = {c: Counter() for c in counts}
    distinct: dict[str, set[str]] = {c: set() for c in counts}
    rejected: dict[str, set[str]] = {c: set() for c in counts}
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        futures = {pool.submit(run_chunk, *job): job for job in jobs}
        for future in as_completed(futures):
            result = future.result()
            component = result["component"]
            totals[component].update(result["stats"])
            distinct[component].update(result["digests"]["distinct"])
            rejected[component].update(result["digests"]["rejected"])
            for report in result["reports"]:
                kind = re.sub(r"/\S+", "PATH", report.split("\n")[0])[:100]
                if kinds[component][kind] == 0 and len(failures[component]) < args.show:
                    failures[component].append(report)
                kinds[component][kind] += 1
            print(f"  {component}: chunk of {result['stats'].get('tried', 0)} done in "
                  f"{result['seconds']:.0f}s", flush=True)
    wall = time.perf_counter() - start

    print(f"\n{'component':<12} {'tried':>6} {'distinct':>8} {'rejected':>8} {'failed':>6} "
          f"{'tracebacks':>10} {'hangs':>5} {'crashes':>7}  exit codes")
    for c, t in totals.items():
        codes = ", ".join(f"{k[5:]}: {v}" for k, v in sorted(t.items()) if k.startswith("exit_"))
        print(f"{c:<12} {t['tried']:>6} {len(distinct[c]):>8} {len(rejected[c]):>8} "
              f"{t['failed']:>6} {t['tracebacks']:>10} {t['hangs']:>5} {t['crashes']:>7}  {codes}")
    for c in counts:
        if kinds[c]:
            print(f"\n{c}: kinds of failure: {dict(kinds[c].most_common(8))}")
            for report in failures[c]:
                print("  " + report.replace("\n", "\n  "))
    summary = {
        "inputs": sum(t["tried"] for t in totals.values()),
        "distinct": sum(len(d) for d in distinct.values()),
        "rejected": sum(len(d) for d in rejected.values()),
        "failed": sum(t["failed"] for t in totals.values()),
        "tracebacks": sum(t["tracebacks"] for t in totals.values()),
        "hangs": sum(t["hangs"] for t in totals.values()),
        "crashes": sum(t["crashes"] for t in totals.values()),
        "seconds": round(wall, 1), "workers": args.workers, "seed": args.seed,
        "per_component": {c: {"tried": t["tried"], "distinct": len(distinct[c]),
                              "rejected": len(rejected[c]),
                              "failed": t["failed"],
                              "tracebacks": t["tracebacks"], "hangs": t["hangs"],
                              "crashes": t["crashes"]}
                          for c, t in totals.items()},
    }
    print(json.dumps(summary))
    return 0 if summary["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
