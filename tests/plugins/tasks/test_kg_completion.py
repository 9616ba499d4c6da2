"""kg_completion: triples in, a KGE model trained on the spine, filtered figures out."""

from __future__ import annotations

import json

import pytest

TRAIN = "".join(f"e{i}\tnext\te{(i + 1) % 12}\ne{i}\tprev\te{(i - 1) % 12}\n" for i in range(12))


@pytest.fixture
def kg_dir(tmp_path):
    folder = tmp_path / "kg"
    folder.mkdir()
    (folder / "train.txt").write_text(TRAIN)
    (folder / "valid.txt").write_text("e0\tnext\te1\n")
    (folder / "test.txt").write_text("e3\tnext\te4\ne5\tprev\te4\n")
    return folder


def pipeline(folder, model="distmult", train=""):
    return f"""
[pipeline]
name = "kg"
seed = 0
[load]
type = "triples"
path = "{folder}"
[model]
type = "{model}"
dim = 8
gamma = 4.0
[train]
type = "kg_completion"
epochs = 2
batch_size = 8
negatives = 4
{train}
"""


@pytest.mark.parametrize("model, train", [
    ("distmult", 'loss = "ce"\nshared_negatives = true\nreciprocal = true'),
    ("rotate", 'adversarial_temperature = 1.0\ncorrupt = "bernoulli"\noptimizer = "sparse_adam"'),
    ("complex", 'scoring = "1-n"\nloss = "bce"\nlabel_smoothing = 0.1'),
    ("transe", 'loss = "margin"\nregularizer = "l2"\nreg_weight = 0.01'),
])
def test_trains_and_reports_filtered_figures(run_toml, kg_dir, model, train):
    metrics = run_toml(pipeline(kg_dir, model, train)).ctx.metrics
    for name in ("test_mrr", "test_mr", "test_hits@1", "test_hits@10", "test_mrr/next",
                 "test_mrr/prev"):
        assert name in metrics
    assert 0 < metrics["test_mrr"] <= 1 and 1 <= metrics["test_mr"] <= 12


def test_seeded_runs_repeat(run_toml, kg_dir, tmp_path):
    text = pipeline(kg_dir)
    a = run_toml(text, out_dir=tmp_path / "a").ctx.metrics
    b = run_toml(text, out_dir=tmp_path / "b").ctx.metrics
    assert a["test_mrr"] == b["test_mrr"]


def test_refuses_a_gnn_model(cli, kg_dir, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(kg_dir).replace('type = "distmult"\ndim = 8\ngamma = 4.0',
                                             'type = "gcn"'))
    code, out, err = cli("run", path, "--out", tmp_path / "o")
    assert code == 1 and "kg_completion trains a knowledge-graph embedding [model]" in err
    assert "Traceback" not in err


def test_monitor_picks_a_validation_figure(run_toml, kg_dir):
    result = run_toml(pipeline(kg_dir, train='monitor = "val_mr"\nepochs = 3').replace(
        "epochs = 2\n", ""))
    lines = [json.loads(x) for x in result.ctx.metrics_path.read_text().splitlines()]
    val_mr = {e["epoch"]: e["val_mr"] for e in lines if "val_mr" in e}
    assert len(val_mr) == 3 and all("val_hits@10" in e for e in lines if "val_mr" in e)
    best = int(result.ctx.metrics["best_epoch"])
    assert val_mr[best] == min(val_mr.values())  # minimised, as every *_mr figure


def test_an_rgcn_encoder_trains_on_the_triples_graph(run_toml, kg_dir):
    text = pipeline(kg_dir).replace('type = "distmult"\ndim = 8\ngamma = 4.0',
                                    'type = "rgcn"\nhidden = 8').replace("batch_size = 8\n", "")
    metrics = run_toml(text).ctx.metrics
    assert 0 < metrics["test_mrr"] <= 1
    assert {"test_mrr/next", "test_mrr/prev"} <= set(metrics)
