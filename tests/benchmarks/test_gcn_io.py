"""benchmarks/gcn.py and benchmarks/io.py on tiny inputs: every side raced in alternating
order, graphflow's sparse and dense Cora input both printed, pandas' two engines both peers,
medians of every timed repetition (no speed asserted)."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

from graphflow.testing import planetoid_dir

ROOT = Path(__file__).resolve().parents[2]


def run(script: str, *args: str) -> tuple[dict, str]:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / script), *args],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1]), done.stdout


def test_gcn_cora_races_sparse_and_dense_inputs_in_alternating_order():
    if not (planetoid_dir() / "ind.cora.x").exists():
        pytest.skip("no raw Planetoid files in ../shared/data/planetoid")
    out, text = run("gcn.py", "--only", "cora", "--repeats", "3", "--warmup", "1",
                    "--threads", "1")
    (r,) = out["results"]
    sides = ["graphflow", "graphflow_dense", "dgl"]
    assert r["sides"] == sides and r["sparse_input"]
    assert r["inputs"] == {"graphflow": "sparse", "graphflow_dense": "dense", "dgl": "dense"}
    assert r["calls"] == sides + sides[::-1] + sides  # the order reversed every epoch
    for name in sides:
        epochs = r["epochs_ms"][name]
        assert len(epochs) == 3 and r["spread_ms"][name]["n"] == 3
        assert abs(r["ms"][name] - statistics.median(epochs)) < 1e-2
    assert set(r["ratios"]) == {"dgl/graphflow", "dgl/graphflow_dense"}
    assert r["hardware_comparison"] is False
    assert "graphflow (dense input)" in text and "caches them" in text


def test_io_races_graphflow_against_both_pandas_engines(tmp_path):
    out, text = run("io.py", "--edges", "5000", "--nodes", "500", "--repeats", "2",
                    "--warmup", "0", "--keep", str(tmp_path))
    names = ["graphflow", "pandas", "pandas_pyarrow"]
    assert out["calls"] == names + names[::-1]
    for name in names:
        reps = out["repetitions"][name]
        assert len(reps) == 2 and out["spread"][name]["n"] == 2
        assert out[f"{name}_s"] == round(statistics.median(reps), 3)
    assert set(out["ratio_spread"]) == {"pandas", "pandas_pyarrow"}
    assert "speed ratio graphflow / pandas_pyarrow" in text
