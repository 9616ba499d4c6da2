"""batch_parts.py's products-alone figure: the dense products of a step, recorded and replayed."""

import sys
from pathlib import Path

import torch
import torch.nn.functional as F

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.batch_parts import RecordProducts, replay  # noqa: E402


def test_records_every_product_of_forward_and_backward_with_its_layout():
    torch.manual_seed(0)
    lin1, lin2 = torch.nn.Linear(8, 16), torch.nn.Linear(16, 3, bias=False)
    x = torch.randn(10, 8)
    recorder = RecordProducts()
    with recorder:
        out = lin2(F.relu(lin1(x)))
        F.cross_entropy(out, torch.tensor([0, 1, 2, 0, 1, 2, 0, 1, 2, 0])).backward()
    names = [func._schema.name for func, _ in recorder.calls]
    # forward: addmm (lin1, bias), mm (lin2); backward: lin2's weight and input gradients,
    # lin1's weight gradient (x needs none)
    assert names.count("aten::addmm") == 1 and names.count("aten::mm") == 4
    (args, _), = [spec for func, spec in recorder.calls if func._schema.name == "aten::addmm"]
    assert args[1] == ("tensor", (10, 8), (8, 1), torch.float32)  # x, row-major
    assert args[2][1:3] == ((8, 16), (1, 8))  # lin1.weight.t(): a transposed view
    assert lin1.weight.grad is not None  # the real step ran under the recorder


def test_replay_runs_the_recorded_calls_on_fresh_tensors():
    recorder = RecordProducts()
    a, b = torch.randn(64, 32), torch.randn(32, 16)
    with recorder:
        torch.mm(a, b)
        torch.addmm(torch.zeros(16), a, b)
    assert len(recorder.calls) == 2
    seconds = replay(recorder.calls, rounds=2)
    assert 0 < seconds < 5


def test_budget_is_what_the_goal_leaves_after_the_model():
    from benchmarks.batch_parts import budget

    ours = {"sample": 10.0, "gather_1t": 4.0, "gather_2t": 3.0, "forward": 15.0,
            "backward": 16.0, "adam": 1.0}
    theirs = {"sample": 12.0, "gather": 7.0, "forward": 18.0, "backward": 20.0, "adam": 1.0}
    got = budget(ours, theirs, goal=1.5)
    assert got["graphflow_batch"] == 42.0  # sample + forward + backward + adam: no gather
    assert got["dgl_batch"] == 58.0  # DGL's step gathers its rows
    assert abs(got["ratio"] - 58.0 / 42.0) < 1e-12
    assert abs(got["budget"] - 58.0 / 1.5) < 1e-12
    assert got["model"] == 32.0
    assert abs(got["left"] - (58.0 / 1.5 - 32.0)) < 1e-12


def test_ceiling_is_dgl_batch_over_the_products_alone():
    from benchmarks.batch_parts import budget

    ours = {"sample": 4.0, "gather_1t": 3.0, "gather_2t": 2.0, "forward": 18.0,
            "backward": 21.0, "adam": 0.5}
    theirs = {"sample": 6.0, "gather": 5.0, "forward": 19.0, "backward": 24.0, "adam": 0.5}
    assert "ceiling" not in budget(ours, theirs)
    got = budget(ours, theirs, products=30.0)
    assert abs(got["ceiling"] - 54.5 / 30.0) < 1e-12
    # a goal above the ceiling cannot be met by any step running these products
    assert got["ceiling"] > got["ratio"]


def test_flops_count_the_recorded_products_from_their_shapes():
    from benchmarks.products import flops

    torch.manual_seed(0)
    lin = torch.nn.Linear(8, 16)
    x = torch.randn(10, 8, requires_grad=True)
    recorder = RecordProducts()
    with recorder:
        lin(x).sum().backward()
    # forward, input gradient and weight gradient: three 10 x 8 x 16 products
    assert flops(recorder.calls) == 3 * 2 * 10 * 8 * 16


def test_products_race_replays_both_sides_alternating():
    from benchmarks.products import race

    a, b = RecordProducts(), RecordProducts()
    with a:
        torch.mm(torch.randn(32, 16), torch.randn(16, 8))
    with b:
        torch.mm(torch.randn(8, 16), torch.randn(16, 32).t().contiguous().t())
    got = race({"ours": a.calls, "theirs": b.calls}, rounds=3, warmup=0)
    assert got.calls == ["ours", "theirs", "theirs", "ours", "ours", "theirs"]
    assert all(len(v) == 3 for v in got.times.values())


def test_a_tiny_run_times_both_sides_shares_alternating_and_their_medians():
    import json
    import statistics
    import subprocess

    done = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "batch_parts.py"), "--nodes", "3000",
         "--edges", "30000", "--batches", "2", "--warmup", "1", "--product-batches", "1",
         "--replay-rounds", "2", "--peak-reps", "1", "--threads", "1"],
        capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    # batch 0 (warm-up) DGL first, then graphflow first, then DGL first
    assert out["calls"] == ["graphflow", "dgl", "dgl", "graphflow"]
    for side in ("graphflow", "dgl"):
        assert len(out["step_ms"][side]) == 2
        assert out["step_spread"][side]["median"] == statistics.median(out["step_ms"][side])
        parts = out["shares"][side]
        assert set(parts) == {"sampling", "gathering", "products", "other passes", "optimizer"}
        assert abs(sum(p["share"] for p in parts.values()) - 1.0) < 1e-3
        assert parts["products"]["ms"] > 0  # the same products measured on both sides
        assert out["product_rates"][side]["flop_per_batch"] > 0
    assert out["replay"]["calls"] == ["graphflow", "dgl", "dgl", "graphflow"]
    assert out["peak"]["shape"] == [4096, 1024, 1024] and out["peak"]["gflops"] > 0
    assert "where the time goes" in done.stdout and "of the peak" in done.stdout


def test_time_parts_sums_the_timed_batches_of_both_sides_alternating():
    from benchmarks.batch_parts import time_parts

    ran = []

    def side(name, sample):
        def batch(i):
            ran.append((name, i))
            return {"sample": sample * (i + 1), "adam": 1.0, "flops": 10.0}
        return batch

    timed = time_parts({"graphflow": side("graphflow", 2.0), "dgl": side("dgl", 3.0)},
                       {"graphflow": ("sample",), "dgl": ("sample", "adam")}, warmup=1,
                       batches=2)
    # batch 0 (warm-up, not counted) DGL first, then graphflow first, then DGL first
    assert ran == [("dgl", 0), ("graphflow", 0), ("graphflow", 1), ("dgl", 1), ("dgl", 2),
                   ("graphflow", 2)]
    assert timed.calls == ["graphflow", "dgl", "dgl", "graphflow"]
    assert timed.steps == {"graphflow": [4e3, 6e3], "dgl": [7e3, 10e3]}  # ms: the step's parts
    assert timed.total["graphflow"] == {"sample": 10.0, "adam": 2.0, "flops": 20.0}
    assert timed.ms("dgl", ("sample", "adam"), 2) == {"sample": 7.5e3, "adam": 1e3}
    assert timed.faults >= 0
