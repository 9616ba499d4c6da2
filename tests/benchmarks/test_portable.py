"""benchmarks/portable.py runs its graph-model race end to end (a tiny collection), and its
flags stop in one argparse line."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "benchmarks" / "portable.py"


def test_graph_models_race_the_exports_on_a_collection():
    done = subprocess.run([sys.executable, str(SCRIPT), "--graphs", "30", "--repeats", "2",
                           "--threads", "1"], capture_output=True, text=True, timeout=300,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["graphs"] == 30 and summary["nodes"] >= 300
    race = summary["results"]["gin_graphs"]
    names = ["graphflow (1024 a batch)", "graphflow (one batch)", "torchscript", "onnxruntime"]
    assert set(race["seconds"]) == set(names)
    assert max(race["max_abs_diff"].values()) < 1e-3
    # the order of the peers reversed on the second call, and the medians of every call
    assert race["calls"] == names + names[::-1]
    for name in names:
        reps = race["repetitions"][name]
        assert len(reps) == 2 and race["spread"][name]["n"] == 2
        assert race["seconds"][name] == statistics.median(reps)
        assert race["spread"][name]["min"] == min(reps)


def test_bad_graph_counts_are_one_line(refused):
    code, err = refused("portable.py", "--graphs", "-1")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "portable.py: error: --graphs must be at least 0, got -1"
    code, err = refused("portable.py", "--graphs", "5", "--graph-batch", "0")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "portable.py: error: --graph-batch must be at least 1, got 0"
