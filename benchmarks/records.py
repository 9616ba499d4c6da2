"""Fair repetitions and the records figures are made from: the one module every benchmark
imports to race its peers, summarise them and save the run.

**Alternation.** :func:`race` runs every side ``warmup`` times untimed and then ``reps`` times
timed, the order reversed on every other repetition (:func:`orders`: A B, B A, A B, ...), so
that no side always runs on the machine state the other left behind (a cache, a heap, a
clock). It keeps every timed repetition of every side and the order the timed calls ran in
(:attr:`Race.calls`, checked by :func:`is_alternating`). :func:`alternate` is the same timing
loop without the warm-up, returning the bare repetitions. :func:`spread` reduces one side's
timed repetitions to what the figures quote: the median, the least and the largest, and how
many; the best repetition is kept beside them, labelled ``best``, never in their place
(:meth:`Race.summary`, :func:`line`).

    race = records.race({"graphflow": ours, "dgl": theirs}, reps=5, warmup=1)
    print(race.summary("graphflow", scale=1e3, unit="ms"))
    # graphflow  median 12.310 ms (11.920-13.004, n 5; best 11.920)

**Records.** :func:`write` saves one benchmark run as a JSON file under
``benchmarks/results/<benchmark>/``: the command line, the commit (and whether the tree had
changes), the CPU signature and versions (:func:`benchmarks.machine.describe`), the load
average before and after, and the result with every repetition. ``benchmarks/figures.py``
turns these records into the figure tables of the README and docs; a test fails when a table
differs from its records.

    python benchmarks/graph_classification.py --record   # writes benchmarks/results/...
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "benchmarks" / "results"
"""Where :func:`write` puts records, one folder per benchmark."""

T = TypeVar("T")


def orders(names: Sequence[str], reps: int) -> list[list[str]]:
    """The order of the peers in each repetition: as given, then reversed, alternately."""
    return [list(names) if r % 2 == 0 else list(reversed(names)) for r in range(reps)]


def alternate(sides: dict[str, Callable[[int], T]], reps: int,
              measure: Callable[[Callable[[int], T], int], float] | None = None,
              on_time: Callable[[str, int, float], None] | None = None,
              ) -> dict[str, list[float]]:
    """Time each side ``reps`` times in alternating order (:func:`orders`).

    :param sides: name -> a callable taking the repetition's index.
    :param measure: how one call is timed (default: wall seconds of the call).
    :param on_time: called with (name, repetition, seconds) after each call (progress).
    :returns: name -> the seconds of its repetitions, in repetition order.
    """
    def wall(fn: Callable[[int], T], rep: int) -> float:
        t = time.perf_counter()
        fn(rep)
        return time.perf_counter() - t

    timer = measure or wall
    times: dict[str, list[float]] = {name: [] for name in sides}
    for rep, order in enumerate(orders(list(sides), reps)):
        for name in order:
            seconds = timer(sides[name], rep)
            times[name].append(seconds)
            if on_time is not None:
                on_time(name, rep, seconds)
    return times


def spread(values: Sequence[float]) -> dict[str, float]:
    """``median``, ``min``, ``max`` and ``n`` of a side's timed repetitions (``best`` = min,
    for a reader who wants it, labelled as such)."""
    if not values:
        raise ValueError("spread of no repetitions")
    return {"median": statistics.median(values), "min": min(values), "max": max(values),
            "n": len(values)}


def ratio_spread(slow: Sequence[float], fast: Sequence[float]) -> dict[str, float]:
    """The ratio of the two medians (``median``), and the ratios of the repetitions taken in
    pairs (``min``, ``max``: repetition r of one side against repetition r of the other)."""
    if len(slow) != len(fast) or not slow:
        raise ValueError("ratio_spread needs the same number of repetitions on both sides")
    pairs = [s / f for s, f in zip(slow, fast)]
    return {"median": statistics.median(slow) / statistics.median(fast), "min": min(pairs),
            "max": max(pairs), "n": len(pairs)}


@dataclass
class Race:
    """Every timed repetition of every side (seconds, or whatever ``measure`` returned)."""

    times: dict[str, list[float]]
    calls: list[str] = field(default_factory=list)
    """The sides' names in the order their timed calls ran."""
    orders: list[list[str]] = field(default_factory=list)

    def median(self, name: str) -> float:
        return statistics.median(self.times[name])

    def spread(self, name: str, scale: float = 1.0) -> dict[str, float]:
        """``median``, ``min``, ``max``, ``n`` of ``name``'s repetitions, times ``scale``."""
        s = spread(self.times[name])
        return {k: (v * scale if k != "n" else v) for k, v in s.items()}

    def ratio(self, slow: str, fast: str) -> dict[str, float]:
        """``slow`` / ``fast``: the ratio of the medians, and the range over repetition pairs."""
        return ratio_spread(self.times[slow], self.times[fast])

    def summary(self, name: str, scale: float = 1.0, unit: str = "s", digits: int = 3,
                width: int = 10) -> str:
        """``name  median X unit (min-max, n N; best B)``: the one line a benchmark prints
        per side."""
        return f"{name:<{width}} " + line(self.times[name], scale, unit, digits)

    def record(self, scale: float = 1.0) -> dict[str, Any]:
        """What a JSON record keeps: every repetition, each side's spread, the orders."""
        return {"repetitions": {k: [v * scale for v in vs] for k, vs in self.times.items()},
                "spread": {k: self.spread(k, scale) for k in self.times},
                "orders": self.orders, "calls": self.calls}


def race(sides: dict[str, Callable[[int], Any]], reps: int, *, warmup: int = 0,
         measure: Callable[[Callable[[int], Any], int], float] | None = None,
         on_time: Callable[[str, int, float], None] | None = None) -> Race:
    """Warm every side up ``warmup`` times (alternating too; the callables get ``-1`` as the
    repetition), then time ``reps`` repetitions of each in alternating order (:func:`alternate`).
    """
    if reps < 1:
        raise ValueError("a race needs at least one timed repetition")
    for order in orders(list(sides), warmup):
        for name in order:
            sides[name](-1)
    calls: list[str] = []

    def timed(name: str, rep: int, seconds: float) -> None:
        calls.append(name)
        if on_time is not None:
            on_time(name, rep, seconds)

    times = alternate(sides, reps, measure=measure, on_time=timed)
    return Race(times, calls, orders(list(sides), reps))


def line(values: Sequence[float], scale: float = 1.0, unit: str = "s", digits: int = 3) -> str:
    """``median X unit (min-max, n N; best B)`` of some repetitions."""
    s = spread(values)
    f = f"{{:.{digits}f}}"
    return (f"median {f.format(s['median'] * scale)} {unit} ({f.format(s['min'] * scale)}-"
            f"{f.format(s['max'] * scale)}, n {s['n']}; best {f.format(s['min'] * scale)})")


def is_alternating(calls: Sequence[str], names: Sequence[str]) -> bool:
    """Whether ``calls`` ran as :func:`orders` says: each repetition the sides once, the order
    reversed on every other one."""
    n = len(names)
    if n == 0 or len(calls) % n:
        return False
    want = [x for o in orders(list(names), len(calls) // n) for x in o]
    return list(calls) == want


def commit() -> dict[str, Any]:
    """The commit the benchmark ran at, and whether tracked files had changes."""
    def git(*args: str) -> str:
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True,
                              timeout=30).stdout.strip()

    try:
        return {"commit": git("rev-parse", "HEAD"),
                "dirty": bool(git("status", "--porcelain", "--untracked-files=no"))}
    except (OSError, subprocess.SubprocessError):
        return {"commit": None, "dirty": None}


AT_START = commit()
"""The commit when the benchmark started (this module is imported at its start): a record
names the code it measured, even when a commit lands while it runs."""


def load() -> float | None:
    try:
        return round(os.getloadavg()[0], 2)
    except (AttributeError, OSError):
        return None


def write(benchmark: str, result: dict[str, Any], *, load_before: float | None,
          argv: Sequence[str] | None = None, folder: Path | None = None) -> Path:
    """Save ``result`` as ``<folder>/<benchmark>/<time>-<cpu>.json`` (atomically) with the
    command, commit, machine and load; return the path."""
    from benchmarks import machine
    from graphflow.io.atomic import write_json
    from graphflow.runtime import calibrate

    info = result.get("machine") or machine.describe()
    cpu = info["cpu"]
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    key = calibrate.signature_key({"cpu": cpu, "caps": {k: v for k, v in info["caps"].items()
                                                        if k != "torch_threads"}})[:8]
    path = (folder or RESULTS) / benchmark / f"{stamp}-{key}.json"
    argv = list(sys.argv if argv is None else argv)
    record = {"benchmark": benchmark,
              "command": " ".join(["python", os.path.relpath(argv[0], REPO)] + argv[1:])
              if argv else None,
              **AT_START, "recorded_at": stamp, "load_before": load_before,
              "load_after": load(), "machine": info,
              "result": {k: v for k, v in result.items() if k != "machine"}}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json(path, record)
    print(f"record: {os.path.relpath(path, REPO)}", file=sys.stderr)
    return path


def read(benchmark: str, folder: Path | None = None) -> list[dict[str, Any]]:
    """Every record of ``benchmark``, oldest first."""
    where = (folder or RESULTS) / benchmark
    return [json.loads(p.read_text()) for p in sorted(where.glob("*.json"))]
