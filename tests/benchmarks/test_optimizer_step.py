"""benchmarks/optimizer_step.py runs and says which form make_optimizer took for each case
(figures only: no speed is asserted)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "benchmarks" / "optimizer_step.py"),
                           *args], capture_output=True, text=True, timeout=120, cwd=ROOT)


def test_optimizer_step_benchmark_runs_and_names_each_form():
    done = run("--steps", "3", "--rounds", "1", "--threads", "1")
    assert done.returncode == 0, done.stderr
    cases = json.loads(done.stdout.strip().splitlines()[-1])["cases"]
    assert len(cases) == 4
    gin = cases["GIN, 5 layers x 64 (24 tensors)"]
    assert gin["make_optimizer"]["gathered"] and gin["make_optimizer"]["tensors_stepped"] == 1
    sage = cases["GraphSAGE, 3 layers x 256 (6 tensors)"]
    assert not sage["make_optimizer"]["gathered"] and sage["torch"]["tensors_stepped"] == 6


def test_forms_alternate_and_report_medians_of_every_round():
    done = run("--steps", "2", "--rounds", "2", "--threads", "1")
    assert done.returncode == 0, done.stderr
    forms = ["make_optimizer", "gathered", "torch"]
    for case in json.loads(done.stdout.strip().splitlines()[-1])["cases"].values():
        assert case["calls"] == forms + forms[::-1]  # the order reversed on the second round
        for form in forms:
            warm = case[form]["warm_spread"]
            assert warm["n"] == 2 and warm["min"] <= case[form]["warm_us"] <= warm["max"]
            assert case[form]["warm_us"] == warm["median"]
