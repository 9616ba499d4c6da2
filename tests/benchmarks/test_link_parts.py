"""benchmarks/link_parts.py runs end to end on a tiny graph: both sides' parts, the same
products measured on both, the order of the sides reversed every batch (no speed asserted)."""

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_tiny_run_splits_both_sides_steps_alternating():
    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "link_parts.py"), "--nodes", "2000",
         "--edges", "12000", "--batches", "2", "--warmup", "1", "--product-batches", "1",
         "--replay-rounds", "2", "--peak-reps", "1", "--threads", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # batch 0 (warm-up) DGL first, then graphflow first, then DGL first
    assert out["calls"] == ["graphflow", "dgl", "dgl", "graphflow"]
    assert out["replay"]["calls"] == ["graphflow", "dgl", "dgl", "graphflow"]
    for side in ("graphflow", "dgl"):
        assert out["step_spread"][side]["n"] == 2
        assert out["step_spread"][side]["median"] == statistics.median(out["step_ms"][side])
        parts = out["shares"][side]
        assert abs(sum(p["share"] for p in parts.values()) - 1.0) < 1e-3
        assert parts["products"]["ms"] > 0 and out["product_rates"][side]["flop_per_batch"] > 0
    assert out["shares"]["graphflow"]["gathering"]["ms"] == 0.0  # read in place
    assert out["peak"]["gflops"] > 0
    assert "where the time goes" in done.stdout


def test_bad_counts_stop_in_one_usage_line(refused):
    code, err = refused("link_parts.py", "--batches", "0")
    assert code == 2 and "Traceback" not in err
    assert "--batches and --product-batches must be at least 1" in err
