"""benchmarks/sampling.py's sampling sections on a tiny graph: the order of the samplers
reversed every batch and every round, and medians of every timed repetition (no speed
asserted)."""

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_call_by_call_and_throughput_alternate_and_report_medians():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "sampling.py"), "--nodes", "3000",
         "--edges", "20000", "--batch", "256", "--batches", "3", "--throughput-batches", "2",
         "--rounds", "2", "--epochs", "0", "--threads", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # 2 warm-up batches (graphflow first, then DGL first), then 3 timed: the order reversed
    assert out["call_order"] == ["graphflow", "dgl", "dgl", "graphflow", "graphflow", "dgl"]
    assert out["call_ms_spread"]["dgl"]["n"] == 3
    ways = ["graphflow iterate", "DGL sample_blocks loop", "DGL DataLoader, 0 workers",
            "DGL DataLoader, 2 workers"]
    assert out["throughput_order"] == ways + ways[::-1]
    for way in ways:
        s = out["throughput_spread"][way]
        assert s["n"] == 2 and s["min"] <= s["median"] <= s["max"]
    best = out["dgl_best"]
    assert abs(out["dgl_best_edges_per_s"] - out["throughput_spread"][best]["median"]) \
        <= 1e-3 * out["dgl_best_edges_per_s"]
    assert out["hardware_comparison"] is False
    assert "HARDWARE COMPARISON" not in done.stdout
