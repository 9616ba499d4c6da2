"""Racing peers fairly: warm-up, alternating timed repetitions, and what is reported of them.

:func:`race` runs every side ``warmup`` times untimed and then ``reps`` times timed, the order
reversed on every repetition (:func:`benchmarks.records.orders`: A B, B A, A B, ...), and keeps
every timed repetition of every side and the order the timed calls ran in (``calls``), so that
a test can check the alternation of what actually ran. :meth:`Race.summary` is the one line a
benchmark prints per side: the median, the range and the count of all its timed repetitions,
and the fastest labelled ``best`` beside them (never in their place).

    race = fair.race({"graphflow": ours, "dgl": theirs}, reps=5, warmup=1)
    print(race.summary("graphflow", scale=1e3, unit="ms"))
    # graphflow  median 12.310 ms (11.920-13.004, n 5; best 11.920)
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchmarks.records import alternate, orders, ratio_spread, spread


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
        s = self.spread(name, scale)
        f = f"{{:.{digits}f}}"
        return (f"{name:<{width}} median {f.format(s['median'])} {unit} "
                f"({f.format(s['min'])}-{f.format(s['max'])}, n {s['n']}; "
                f"best {f.format(s['min'])})")

    def record(self, scale: float = 1.0) -> dict[str, Any]:
        """What a JSON record keeps: every repetition, each side's spread, the orders."""
        return {"repetitions": {k: [v * scale for v in vs] for k, vs in self.times.items()},
                "spread": {k: self.spread(k, scale) for k in self.times},
                "orders": self.orders, "calls": self.calls}


def race(sides: dict[str, Callable[[int], Any]], reps: int, *, warmup: int = 0,
         measure: Callable[[Callable[[int], Any], int], float] | None = None,
         on_time: Callable[[str, int, float], None] | None = None) -> Race:
    """Warm every side up ``warmup`` times (alternating too), then time ``reps`` repetitions
    of each in alternating order (:func:`benchmarks.records.alternate`)."""
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
    """Whether ``calls`` ran as :func:`benchmarks.records.orders` says: each repetition the
    sides once, the order reversed on every other one."""
    n = len(names)
    if n == 0 or len(calls) % n:
        return False
    want = [x for o in orders(list(names), len(calls) // n) for x in o]
    return list(calls) == want
