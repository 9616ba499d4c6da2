"""benchmarks/explain.py on a tiny BA-Shapes: both sides alternate, ROC-AUCs in [0, 1]
(no speed asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

ROOT = Path(__file__).resolve().parents[2]


def test_alternates_and_reports_roc_auc():
    pytest.importorskip("torch_geometric")
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "explain.py"), "--tiny",
                           "--reps", "2", "--threads", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["calls"] == ["graphflow", "pyg", "pyg", "graphflow"]
    assert result["explained"] == 8 * 5
    for name in ("graphflow", "pyg"):
        assert 0.0 <= result["roc_auc"][name] <= 1.0
        assert len(result["repetitions"][name]) == 2 and result[f"{name}_s_per_node"] > 0


def test_pgexplainer_side_alone_reports_its_roc_auc(capsys):
    from benchmarks.explain import main

    threads = torch.get_num_threads()
    try:
        result = main(["--tiny", "--method", "pgexplainer", "--sides", "graphflow",
                       "--reps", "1", "--threads", "1"])
    finally:
        torch.set_num_threads(threads)
    assert result["method"] == "pgexplainer" and result["calls"] == ["graphflow"]
    assert result["explained"] == 8 * 5 and 0.0 <= result["roc_auc"]["graphflow"] <= 1.0
    assert "ratio_spread" not in result and result["settings"]["epochs"] == 2


def test_model_without_self_term_matches_its_pyg_twin_and_checks_the_truth():
    """--no-self (the paper code's h' = A h W + b): main asserts the PyG twin's outputs
    equal graphflow's; truth_check reports shares in [0, 1]; objective_check the loss at
    three masks (the motif-only and every-edge losses include their size terms)."""
    pytest.importorskip("torch_geometric")
    from benchmarks.explain import main

    threads = torch.get_num_threads()
    try:
        result = main(["--tiny", "--no-self", "--explained", "first", "--objective",
                       "--reps", "1", "--threads", "1"])
    finally:
        torch.set_num_threads(threads)
    assert result["settings"]["self_term"] is False and result["explained"] == 8
    check = result["truth_check"]
    shares = ("motif_only", "motif_only_prob", "uniform_half", "uniform_half_prob")
    assert all(0.0 <= check[k] <= 1.0 for k in shares)
    assert 0 < check["motif_edges_per_node"] <= check["edges_per_node"]
    objective = result["objective"]
    assert all(objective[k] > 0 for k in ("explainer", "motif_only", "all_edges"))
    assert 0.0 <= objective["motif_below_explainer"] <= 1.0
