"""benchmarks/hetero.py's sampled case on a tiny generated typed graph: the peers' epochs in
alternating order, medians of every timed epoch (no speed asserted)."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_sampled_epochs_alternate_and_report_medians():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "hetero.py"), "--skip-full", "--edges",
         "6000", "--scale", "0.02", "--epochs", "3", "--threads", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    sampled = json.loads(done.stdout.strip().splitlines()[-1])["sampled"]
    assert sampled["calls"] == ["dgl", "graphflow", "graphflow", "dgl", "dgl", "graphflow"]
    for name in ("dgl", "graphflow"):
        epochs = sampled["repetitions"][name]
        assert len(epochs) == 3
        assert sampled[f"{name}_epoch_s"] == round(statistics.median(epochs), 4)
    assert sampled["ratio_spread"]["n"] == 3
