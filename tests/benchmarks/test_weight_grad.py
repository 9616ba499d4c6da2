"""benchmarks/weight_grad.py runs, reports both orientations per shape and the one
graphflow's dispatch takes (figures only: no speed is asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import torch

from graphflow.sparse import gemm

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "weight_grad.py"), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)


def test_a_short_run_reports_every_shape_and_the_dispatch():
    done = run("--rounds", "1", "--calls", "1", "--threads", "1")
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["threads"] == 1 and len(result["shapes"]) >= 5
    for s in result["shapes"]:
        assert s["autograd_us"] > 0 and s["input_major_us"] > 0 and s["ratio"] > 0
        x = torch.empty(s["rows"], s["in"])
        w = torch.empty(s["out"], s["in"], requires_grad=True)
        assert s["takes"] == ("input_major" if gemm._input_major_weight_grad(x, w, None)
                              else "autograd")
    assert {s["takes"] for s in result["shapes"]} == {"input_major", "autograd"}


def test_bad_counts_stop_in_one_usage_line(refused):
    code, err = refused("weight_grad.py", "--rounds", "0")
    assert code == 2
    assert "--rounds and --calls must be at least 1, got 0 and 40" in err
    assert "Traceback" not in err


def test_orientations_alternate_and_report_medians_of_every_round():
    done = run("--rounds", "3", "--calls", "1", "--threads", "1")
    assert done.returncode == 0, done.stderr
    for s in json.loads(done.stdout.strip().splitlines()[-1])["shapes"]:
        ways = ["autograd", "input_major"]
        assert s["calls"] == ways + ways[::-1] + ways  # the order reversed every round
        for way in ways:
            reps = s["repetitions"][way]
            assert len(reps) == 3 and s[f"{way}_us"] == sorted(reps)[1]
            assert s["spread"][way] == {"median": sorted(reps)[1], "min": min(reps),
                                        "max": max(reps), "n": 3}
