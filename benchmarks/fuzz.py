"""Fuzz graphflow with a large budget of malformed input and count who breaks the property.

The strategies and the checker are ``tests/fuzzing``'s, the same as ``tests/fuzz/`` runs
with a small, fixed budget. Every generated case (a malformed file for one of the seven
first-party loaders, a malformed pipeline TOML, or malformed ``--set`` values) runs
``graphflow run`` in-process under a time bound, and must either succeed with a complete
``run.json`` or exit 1 with one ``graphflow: error:`` line naming the file, or the section,
key or line of the pipeline: never a traceback or internal error, never a hang, never a
native crash, never outputs without a complete ``run.json``.

    nice -n 10 python benchmarks/fuzz.py [--budget 15300] [--workers 2] [--seed 0]
        [--bound 20] [--components edgelist,mat,...] [--show 3]
    python benchmarks/fuzz.py --replay FINGERPRINT [--keep DIR]
    python benchmarks/fuzz.py --list COMPONENT --seed S --size N

The budget is split over the components by weight (Cora's files and training runs cost
more) and into chunks of at most 650 cases, run by ``--workers`` processes at a time.
Per component it prints the inputs tried; how many were distinct (hypothesis may draw one
twice); how many distinct inputs were rejected as they should be (exit 1 with one clear
line; the others succeeded: odd but valid input, such as CRLF line ends or a BOM); how many
failed the property, with tracebacks (tracebacks, internal errors, plugin crashes), hangs
and native crashes; and the exit codes seen. Then the first failures, each with its
fingerprint and the command that replays it; the last line is one JSON object with the
totals and ``inputs_sha256``, a digest of every input's fingerprint (two runs with the same
arguments print the same one: the inputs are a pure function of the seed).

Each chunk runs in its own process, which logs every case before running it. A case that
kills the process (an abort or segmentation fault in native code) counts as a crash, and
one still running ``1.5 * bound + 10`` seconds after it started (a hang inside native code,
where the in-process alarm at ``bound`` cannot interrupt it) is killed and counts as a hang;
the chunk then starts again after that case; each case is drawn under a seed of its own,
so the rest are the ones an undisturbed run draws. Needs ``hypothesis``
(``pip install -e ".[test]"``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the strategies and checker: tests/fuzzing

WEIGHTS = {"edgelist": 13, "parquet": 13, "mat": 13, "networkx": 13, "dgl": 13,
           "synthetic": 13, "planetoid": 1, "config.toml": 10, "config.set": 13}
"""Share of the budget per component (planetoid: Cora's files are read per case)."""
CHUNK = 650
RESTARTS = 20
"""Crashes or hangs after which a chunk gives up on the rest of its cases."""
HANG_GRACE = 10.0
"""Seconds past ``1.5 * bound`` after which a case still running is killed as a hang."""


def chunk_argv(component: str, size: int, seed: int, skip: int, bound: float,
               log: Path) -> list[str]:
    """The command of one chunk process (cases ``skip..size-1``)."""
    return [sys.executable, __file__, "--chunk", component, str(size), str(seed), str(skip),
            str(bound), str(log)]


def fuzz_chunk(component: str, size: int, seed: int, skip: int, bound: float,
               log: Path) -> None:
    """Run cases ``skip..size-1`` of chunk ``(component, seed, size)`` (in a chunk process),
    one JSON line each in ``log``: ``{"start": index}`` before the case, its outcome after."""
    import faulthandler

    from fuzzing import Case, run_case
    from fuzzing.sequence import digest, generate, same_random_state

    faulthandler.enable()
    _exit_with_parent()
    root = Path(tempfile.mkdtemp(prefix=f"graphflow-fuzz-{component}-"))
    warm = root / "warm"  # imports and the first host outside the clock of any case
    run_case(Case("warm", {}, b'[load]\ntype = "synthetic"\nnodes = 20\n'), warm, bound=600)
    out = open(log, "a", encoding="utf-8")

    def visit(index: int, case: Case) -> None:
        if index < skip:
            return
        key = digest(case)
        out.write(json.dumps({"start": index, "digest": key}) + "\n")
        out.flush()
        folder = Path(tempfile.mkdtemp(dir=root))
        try:
            with same_random_state():
                o = run_case(case, folder, bound=bound)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        out.write(json.dumps({"index": index, "digest": key, "code": o.code, "hung": o.hung,
                              "traceback": o.traceback, "problems": o.problems,
                              "report": o.report() if o.problems else ""}) + "\n")
        out.flush()

    try:
        generate(component, seed, size, visit)
    finally:
        out.close()
        shutil.rmtree(root, ignore_errors=True)


def _exit_with_parent() -> None:
    """End this chunk process when the run that started it ends (it runs in a session of
    its own, so that a hang can be killed with its children, and would outlive it)."""
    import threading

    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(3)

    threading.Thread(target=watch, daemon=True).start()


def replay_command(fingerprint: str) -> str:
    return f"python benchmarks/fuzz.py --replay {fingerprint}"


def run_chunk(component: str, size: int, seed: int, bound: float) -> dict:
    """Run a chunk in fresh processes; a native crash or hang is counted and the chunk goes
    on after that case."""
    from fuzzing.sequence import Fingerprint

    stats: Counter = Counter()
    reports: list[str] = []
    seen: dict[int, str] = {}  # index -> digest
    rejected: set[str] = set()
    start = time.perf_counter()
    skip = 0
    for _ in range(RESTARTS):
        with tempfile.NamedTemporaryFile(suffix=".jsonl", delete=False) as fh:
            log = Path(fh.name)
        proc = subprocess.Popen(chunk_argv(component, size, seed, skip, bound, log),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        pending, since, hung, done = None, time.monotonic(), False, 0
        with open(log, encoding="utf-8") as reader:
            while True:
                code = proc.poll()
                for line in reader.readlines():
                    rec = json.loads(line)
                    if "start" in rec:
                        pending, since = rec, time.monotonic()
                        seen[rec["start"]] = rec["digest"]
                        continue
                    pending = None
                    done = rec["index"] + 1
                    stats["tried"] += 1
                    stats[f"exit_{rec['code']}"] += 1
                    if rec["code"] == 1 and not rec["problems"]:
                        rejected.add(rec["digest"])
                    stats["hangs"] += rec["hung"]
                    stats["tracebacks"] += rec["traceback"]
                    if rec["problems"]:
                        stats["failed"] += 1
                        fp = Fingerprint(component, seed, size, rec["index"], rec["digest"])
                        reports.append(f"{rec['report']}\n  fingerprint {fp}: "
                                       f"{replay_command(fp)}")
                if code is not None:
                    break
                if pending is not None and time.monotonic() - since > 1.5 * bound + HANG_GRACE:
                    os.killpg(proc.pid, signal.SIGKILL)  # its own session: the chunk only
                    proc.wait()
                    hung = True
                    break
                time.sleep(0.2)
        stderr = proc.stderr.read() if proc.stderr else ""
        log.unlink()
        if pending is None and proc.returncode == 0:
            break
        if pending is None:  # died between cases (not a case's fault): go on after them
            reports.append(f"chunk process exit {proc.returncode} between cases: "
                           f"{stderr.strip()[-300:]}")
            skip = done
            continue
        # The case it had started killed it, or hung in native code: a failure.
        fp = Fingerprint(component, seed, size, pending["start"], pending["digest"])
        stats.update(tried=1, failed=1, **({"hangs": 1} if hung else {"crashes": 1}))
        what = f"hang (killed after {1.5 * bound + HANG_GRACE:.0f}s)" if hung else \
            f"crash (exit {proc.returncode})"
        tail = "\n".join(stderr.strip().splitlines()[:3])
        reports.append(f"{what}\n  fingerprint {fp}: {replay_command(fp)}\n  {tail}")
        skip = pending["start"] + 1
        if skip >= size:
            break
    fingerprints = [str(Fingerprint(component, seed, size, i, d)) for i, d in sorted(seen.items())]
    return {"component": component, "stats": dict(stats), "reports": reports,
            "digests": {"distinct": sorted(set(seen.values())), "rejected": sorted(rejected)},
            "fingerprints": fingerprints, "seconds": time.perf_counter() - start}


def replay(text: str, keep: Path | None, bound: float) -> int:
    """Generate the case ``text`` fingerprints again, run it here and print what it did."""
    import faulthandler

    from fuzzing import run_case
    from fuzzing.sequence import Fingerprint, find

    faulthandler.enable()
    case = find(Fingerprint.parse(text))
    folder = keep or Path(tempfile.mkdtemp(prefix="graphflow-replay-"))
    print(f"replaying {text} in {folder}\n{case.describe()}", flush=True)
    outcome = run_case(case, folder, bound=bound)
    print(f"exit {outcome.code} after {outcome.seconds:.2f}s\nstderr: {outcome.stderr.strip()}")
    print("property holds" if outcome.ok else "property broken: " + "; ".join(outcome.problems))
    if keep is None:
        shutil.rmtree(folder, ignore_errors=True)
    return 0 if outcome.ok else 1


def list_chunk(component: str, seed: int, size: int) -> int:
    """Print the fingerprints of a chunk's cases without running them."""
    from fuzzing.sequence import Fingerprint, digest, generate

    generate(component, seed, size, lambda i, case: print(
        Fingerprint(component, seed, size, i, digest(case))))
    return 0


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
    p.add_argument("--minutes", type=float, default=0,
                   help="start no chunk after this many minutes (0: no bound); the summary "
                        "counts the inputs that ran")
    p.add_argument("--replay", metavar="FINGERPRINT", help="run one case again, as printed")
    p.add_argument("--keep", type=Path, help="with --replay: write the case into this folder")
    p.add_argument("--list", metavar="COMPONENT",
                   help="print the fingerprints of chunk (COMPONENT, --seed, --size)")
    p.add_argument("--size", type=int, default=CHUNK, help="with --list: the chunk's size")
    p.add_argument("--chunk", nargs=6, help=argparse.SUPPRESS)  # internal: one chunk
    args = p.parse_args(argv)
    if args.chunk:
        component, n, seed, skip, bound, log = args.chunk
        fuzz_chunk(component, int(n), int(seed), int(skip), float(bound), Path(log))
        return 0
    if args.replay:
        return replay(args.replay, args.keep, args.bound)
    if args.list:
        return list_chunk(args.list, args.seed, args.size)
    counts = plan(args.budget, [c for c in args.components.split(",") if c])
    jobs = []
    for component, n in counts.items():
        for k, first in enumerate(range(0, n, CHUNK)):
            jobs.append((k, component, min(CHUNK, n - first), args.seed * 1000 + k, args.bound))
    jobs = [job[1:] for job in sorted(jobs, key=lambda job: job[0])]  # components interleaved
    print(f"fuzzing {sum(counts.values())} inputs over {len(counts)} components in "
          f"{len(jobs)} chunks, {args.workers} workers, {args.bound:g}s bound per input"
          + (f", no chunk started after {args.minutes:g} min" if args.minutes else ""),
          flush=True)
    deadline = time.monotonic() + args.minutes * 60 if args.minutes else float("inf")

    def bounded(*job):
        return run_chunk(*job) if time.monotonic() < deadline else None
    totals: dict[str, Counter] = {c: Counter() for c in counts}
    failures: dict[str, list[str]] = {c: [] for c in counts}
    kinds: dict[str, Counter] = {c: Counter() for c in counts}
    distinct: dict[str, set[str]] = {c: set() for c in counts}
    rejected: dict[str, set[str]] = {c: set() for c in counts}
    fingerprints: list[str] = []
    start = time.perf_counter()
    with ThreadPoolExecutor(args.workers) as pool:
        futures = {pool.submit(bounded, *job): job for job in jobs}
        skipped = 0
        for future in as_completed(futures):
            result = future.result()
            if result is None:
                skipped += futures[future][1]
                continue
            component = result["component"]
            totals[component].update(result["stats"])
            distinct[component].update(result["digests"]["distinct"])
            rejected[component].update(result["digests"]["rejected"])
            fingerprints += result["fingerprints"]
            for report in result["reports"]:
                kind = re.sub(r"/\S+", "PATH", report.split("\n")[0])[:100]
                if kinds[component][kind] == 0 and len(failures[component]) < args.show:
                    failures[component].append(report)
                kinds[component][kind] += 1
            print(f"  {component}: chunk of {result['stats'].get('tried', 0)} done in "
                  f"{result['seconds']:.0f}s", flush=True)
    wall = time.perf_counter() - start
    if skipped:
        print(f"stopped at the {args.minutes:g}-minute bound: {skipped} planned inputs not run")

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
        "planned": sum(counts.values()), "seconds": round(wall, 1), "inputs_per_second": round(
            sum(t["tried"] for t in totals.values()) / max(wall, 1e-9), 1),
        "workers": args.workers, "seed": args.seed,
        "inputs_sha256": hashlib.sha256("\n".join(sorted(fingerprints)).encode()).hexdigest(),
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
