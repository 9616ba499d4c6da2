"""benchmarks/graph_classification.py runs end to end on a small collection and reports both
sides' batching alone and their epochs (figures only: no speed is asserted)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from torch import nn

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks.graph_classification import (GraphBatcher, RECIPES, generate,  # noqa: E402
                                             recipe_model)
from graphflow.sparse import Adjacency  # noqa: E402


def test_a_small_run_reports_batching_and_epochs():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_classification.py"),
                           "--graphs", "300", "--epochs", "1", "--skip-quality",
                           "--threads", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["graphs"] == 300 and result["threads"] == 1
    assert set(result["batching_ms"]) == {"graphflow", "graphflow_torch_calls", "dgl"}
    assert all(v > 0 for v in result["batching_ms"].values())
    assert result["batching_ratio"] == result["batching_ms"]["dgl"] / \
        result["batching_ms"]["graphflow"]
    assert len(result["epoch_s_all"]["graphflow"]) == len(result["epoch_s_all"]["dgl"]) == 1
    assert result["ratio"] == result["epoch_s"]["dgl"] / result["epoch_s"]["graphflow"] > 0
    assert result["epoch_s_spread"]["graphflow"]["n"] == 1 and result["warmup_epochs"] == 1
    assert "batching alone, ms a batch" in done.stderr
    parts = result["parts"]  # graphflow's dense products replayed alone, against both batches
    assert parts["product_calls"] > 0 and 0 < parts["products_ms"]
    assert parts["ceiling"] == parts["dgl_batch_ms"] / parts["products_ms"]
    assert abs(parts["rest_ms"] + parts["products_ms"] - parts["graphflow_batch_ms"]) < 1e-9
    assert "ceiling (DGL's batch / the products alone)" in done.stderr


def test_epochs_alternate_which_side_goes_first_and_report_medians(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_classification.py"),
                           "--graphs", "100", "--epochs", "3", "--warmup", "0",
                           "--skip-quality", "--threads", "1", "--product-batches", "0"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["orders"] == [["graphflow", "dgl"], ["dgl", "graphflow"],
                                ["graphflow", "dgl"]]
    lines = [line.split(":")[0] for line in done.stderr.splitlines()
             if line.startswith("epoch ")]
    assert lines == ["epoch 1 graphflow", "epoch 1 dgl", "epoch 2 dgl", "epoch 2 graphflow",
                     "epoch 3 graphflow", "epoch 3 dgl"]
    for side, times in result["epoch_s_all"].items():
        assert result["epoch_s"][side] == sorted(times)[1]  # the median of three
        assert result["epoch_s_spread"][side]["max"] == max(times)


def test_graph_sizes_are_chosen_and_recorded():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_classification.py"),
                           "--graphs", "200", "--epochs", "1", "--skip-quality",
                           "--threads", "1", "--min-nodes", "2", "--max-nodes", "5",
                           "--product-batches", "0"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["graph_nodes"] == [2, 5]
    assert 2 * 200 <= result["nodes"] <= 5 * 200
    assert "parts" not in result  # --product-batches 0: no products replayed


def test_edge_features_train_gine_on_both_sides():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_classification.py"),
                           "--graphs", "200", "--epochs", "1", "--threads", "1",
                           "--edge-features", "3", "--product-batches", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["model"] == "gine" and result["edge_features"] == 3
    assert result["ratio"] > 0 and result["parts"]["product_calls"] > 0
    assert "mutag" not in result  # MUTAG has no edge features
    assert "quality part is skipped with --edge-features" in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--edge-features", "-2"], "--edge-features must be at least 0, got -2"),
    (["--min-nodes", "9", "--max-nodes", "3"], "need 1 <= --min-nodes <= --max-nodes, got 9 and 3"),
    (["--product-batches", "-1"], "--product-batches must be at least 0, got -1"),
    (["--batch", "0"], "--batch must be at least 1, got 0"),
])
def test_bad_options_are_refused_with_a_usage_line(args, message, refused):
    code, err = refused("graph_classification.py", *args)
    assert code == 2
    assert message in err and "Traceback" not in err


def test_the_batch_size_is_chosen_and_recorded():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "graph_classification.py"),
                           "--graphs", "100", "--epochs", "1", "--skip-quality",
                           "--threads", "1", "--batch", "40", "--product-batches", "1"],
                          capture_output=True, text=True, timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["batch_size"] == 40
    # one epoch of 100 graphs is 3 batches of at most 40 on both sides
    assert result["parts"]["graphflow_batch_ms"] == result["epoch_s"]["graphflow"] / 3 * 1e3
    assert result["parts"]["dgl_batch_ms"] == result["epoch_s"]["dgl"] / 3 * 1e3


def test_the_no_mlp_bias_side_drops_only_biases_that_batch_norm_cancels():
    g, ptr, _ = generate(6, 0, 3, 6)
    batch = GraphBatcher(Adjacency.from_graph(g), ptr, g.ndata["feat"]).batch(torch.arange(6))
    models = []
    for recipe in (RECIPES["graphflow"], RECIPES["graphflow-no-mlp-bias"]):
        torch.manual_seed(3)
        models.append(recipe_model(16, 2, batch, **recipe).train())
        models[-1].drop.p = 0.0
    ours, bare = models
    maps = [m for m in bare.encoder.modules() if isinstance(m, nn.Linear)]
    assert len(maps) == 8 and all(m.bias is None for m in maps)  # 4 layers, 2 maps each
    kept = dict(bare.named_parameters())  # every other initial value the same
    assert all(torch.equal(p, kept[k]) for k, p in ours.named_parameters() if k in kept)
    assert len(kept) == len(list(ours.parameters())) - 8
    torch.testing.assert_close(bare(batch)[0], ours(batch)[0])  # the same function
