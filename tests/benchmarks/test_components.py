"""The component benchmarks (sparsity.py, dropout.py, gemm.py, records.race) alternate which side
goes first and report the medians of every timed repetition (tiny sizes; no speed asserted)."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import records  # noqa: E402


def run(script: str, *args: str) -> dict:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_race_warms_up_then_times_every_side_in_alternating_order():
    ran: list[tuple[str, int]] = []
    clock = iter(range(1, 100))
    got = records.race({"a": lambda rep: ran.append(("a", rep)),
                        "b": lambda rep: ran.append(("b", rep))}, 3, warmup=1,
                       measure=lambda fn, rep: (fn(rep), float(next(clock)))[1])
    assert ran[:2] == [("a", -1), ("b", -1)]  # the untimed warm-up
    assert got.calls == ["a", "b", "b", "a", "a", "b"]
    assert records.is_alternating(got.calls, ["a", "b"])
    assert not records.is_alternating(["a", "b", "a", "b"], ["a", "b"])
    assert got.times == {"a": [1.0, 4.0, 5.0], "b": [2.0, 3.0, 6.0]}
    assert got.spread("a") == {"median": 4.0, "min": 1.0, "max": 5.0, "n": 3}
    assert got.summary("b", unit="s", digits=1) == \
        "b          median 3.0 s (2.0-6.0, n 3; best 2.0)"
    assert got.ratio("b", "a")["median"] == 3.0 / 4.0


def test_sparsity_rounds_alternate_and_report_medians():
    out = run("sparsity.py", "--device", "cpu", "--widths", "32", "--rows", "16",
              "--depth", "1", "--repeats", "1", "--rounds", "3")
    (row,) = out["results"]
    assert row["calls"] == ["dense", "sparse", "sparse", "dense", "dense", "sparse"]
    for name in ("dense", "sparse"):
        reps = row["repetitions"][name]
        assert len(reps) == 3 and abs(row[f"{name}_ms"] - statistics.median(reps)) < 1e-9


def test_dropout_rounds_alternate_and_report_medians():
    out = run("dropout.py", "--p", "0.5", "--rounds", "2")
    for row in out["results"]:
        assert row["calls"] == ["torch", "graphflow", "graphflow", "torch"]
        for name in ("torch", "graphflow"):
            assert row[f"{name}_ms"] == round(statistics.median(row["repetitions"][name]), 3)


def test_gemm_reports_every_call_s_range():
    out = run("gemm.py", "--calls", "2", "--threads", "1")
    out.pop("machine")
    for shape in out.values():
        for part in shape.values():
            for backend in ("torch", "onednn"):
                s = part["spread_ms"][backend]
                assert s["n"] == 2 and s["min"] <= s["median"] <= s["max"]
