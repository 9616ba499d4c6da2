"""EpochLoop options: values no loop can run with are refused whoever builds them."""

from __future__ import annotations

import pytest

from graphflow.train.loop import LoopOptions


@pytest.mark.parametrize("kwargs", [{"epochs": -1}, {"epochs": 3, "eval_every": 0},
                                    {"epochs": 3, "patience": -2}])
def test_impossible_loop_options_are_refused(kwargs):
    with pytest.raises(ValueError, match="LoopOptions: need epochs >= 0, eval_every >= 1, "
                                         "patience >= 0"):
        LoopOptions(**kwargs)
    assert LoopOptions(epochs=0).eval_every == 1  # zero epochs is a valid (empty) run


def test_every_epoch_logs_its_training_and_evaluation_seconds(run_toml, tmp_path):
    import json
    pipeline = """
[pipeline]
seed = 0
[load]
type = "synthetic"
nodes = 200
[model]
type = "gcn"
hidden = 8
[train]
type = "node_classification"
epochs = 4
eval_every = 2
checkpoint = false
"""
    run_toml(pipeline, out_dir=tmp_path / "out")
    lines = [json.loads(x) for x in (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()]
    assert [x["epoch"] for x in lines] == [1, 2, 3, 4]
    assert all(x["train_s"] > 0 for x in lines)
    # evaluation runs every second epoch, and only those epochs time it
    assert [("eval_s" in x, "val_acc" in x) for x in lines] == [(False, False), (True, True)] * 2
    assert all(x["eval_s"] > 0 for x in lines if "eval_s" in x)


def test_resume_drops_only_the_resumed_folds_later_epochs(tmp_path):
    """A cross-validated stage logs every fold's epochs under one section: resuming fold 1
    after epoch 2 drops fold 1's epochs past 2 and keeps the finished fold 0's lines."""
    import json
    from types import SimpleNamespace

    from graphflow.train.loop import _drop_epochs_after

    path = tmp_path / "metrics.jsonl"
    lines = [{"stage": "train", "epoch": e, "fold": float(f), "loss": 1.0}
             for f in (0, 1) for e in (1, 2, 3)]
    lines.append({"stage": "other", "epoch": 3, "loss": 1.0})
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    _drop_epochs_after(SimpleNamespace(metrics_path=path), "train", 2, fold=1)
    kept = [json.loads(line) for line in path.read_text().splitlines()]
    assert [(r.get("fold"), r["epoch"]) for r in kept] == [
        (0.0, 1), (0.0, 2), (0.0, 3), (1.0, 1), (1.0, 2), (None, 3)]
    _drop_epochs_after(SimpleNamespace(metrics_path=path), "other", 2)  # no folds: as before
    assert [r["stage"] for r in map(json.loads, path.read_text().splitlines())].count("other") == 0
