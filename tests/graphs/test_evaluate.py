"""graphflow.graphs.evaluate against ogb.graphproppred.Evaluator on random inputs."""

import os

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import would ask PyPI for its version

import numpy as np
import pytest
import torch

from graphflow.errors import DataError
from graphflow.graphs.evaluate import evaluate

graphproppred = pytest.importorskip("ogb.graphproppred")


def random_labels(rng, n, t, missing=0.2):
    y = rng.integers(0, 2, (n, t)).astype(float)
    y[rng.random((n, t)) < missing] = np.nan
    y[:, 0] = 1.0  # task 0 has one class only: left out by both
    y[rng.random(n) < 0.5, 0] = np.nan
    return y


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("name, metric", [("ogbg-moltox21", "rocauc"),
                                          ("ogbg-molpcba", "ap")])
def test_binary_figures_match_ogb(seed, name, metric):
    rng = np.random.default_rng(seed)
    y = random_labels(rng, 60, 12)
    pred = rng.normal(size=(60, 12))
    pred[:10] = np.round(pred[:10])  # some ties
    ogb = graphproppred.Evaluator(name)
    # OGB checks the task count of the data set; compare on 12 columns with a set of 12
    # tasks (tox21), on pcba's 128 by tiling
    if name == "ogbg-molpcba":
        y, pred = np.tile(y, (1, 11))[:, :128], np.tile(pred, (1, 11))[:, :128]
    want = ogb.eval({"y_true": y, "y_pred": pred})[metric]
    assert evaluate(metric, y, pred)[metric] == pytest.approx(want, abs=1e-12)
    assert evaluate(metric, torch.from_numpy(y), torch.from_numpy(pred))[metric] == \
        pytest.approx(want, abs=1e-12)


@pytest.mark.parametrize("seed", range(3))
def test_rmse_matches_ogb(seed):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(40, 1))
    pred = rng.normal(size=(40, 1))
    want = graphproppred.Evaluator("ogbg-molesol").eval({"y_true": y, "y_pred": pred})["rmse"]
    assert evaluate("rmse", y, pred)["rmse"] == pytest.approx(want, abs=1e-12)
    # several tasks with missing entries: each task's RMSE, then their mean (OGB's loop)
    y = rng.normal(size=(40, 3))
    y[rng.random((40, 3)) < 0.3] = np.nan
    pred = rng.normal(size=(40, 3))
    per = [np.sqrt(np.nanmean((y[:, i] - pred[:, i]) ** 2)) for i in range(3)]
    assert evaluate("rmse", y, pred)["rmse"] == pytest.approx(np.mean(per), abs=1e-12)
    per = [np.nanmean(np.abs(y[:, i] - pred[:, i])) for i in range(3)]
    assert evaluate("mae", y, pred)["mae"] == pytest.approx(np.mean(per), abs=1e-12)


def test_no_task_with_both_classes_is_one_line():
    with pytest.raises(DataError, match="no task has both a positive and a negative"):
        evaluate("rocauc", np.ones((4, 2)), np.zeros((4, 2)))
