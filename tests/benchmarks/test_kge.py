"""benchmarks/kge.py on a tiny generated graph: alternating epochs, MRR per epoch, medians
(no speed asserted)."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def test_alternates_and_reports_mrr():
    pytest.importorskip("pykeen")
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "kge.py"), "--tiny", "60", "--epochs", "2",
         "--dim", "8", "--negatives", "4", "--batch", "64", "--threads", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["calls"] == ["graphflow", "pykeen", "pykeen", "graphflow"]
    for name in ("graphflow", "pykeen"):
        assert len(result["repetitions"][name]) == 2 and len(result["mrr"][name]) == 2
        assert all(0 < m <= 1 for m in result["mrr"][name])
        assert result[f"{name}_epoch_s"] == round(statistics.median(
            result["repetitions"][name]), 4)
