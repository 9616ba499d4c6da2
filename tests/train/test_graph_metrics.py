"""Graph-level metrics against scikit-learn."""

import math

import numpy as np
import pytest
import torch

from graphflow.train.metrics import mae, rmse, roc_auc_tasks

sk = pytest.importorskip("sklearn.metrics")


def test_multi_task_auc_skips_missing_entries_and_one_class_tasks():
    gen = np.random.default_rng(0)
    y = gen.integers(0, 2, size=(50, 4)).astype(np.float32)
    y[gen.random((50, 4)) < 0.3] = np.nan
    y[:, 3] = np.where(np.isnan(y[:, 3]), np.nan, 1.0)  # task 3: positives only -> skipped
    s = gen.normal(size=(50, 4)).astype(np.float32)
    s[:10, 0] = s[10:20, 0]  # ties
    expect = np.mean([sk.roc_auc_score(y[~np.isnan(y[:, t]), t], s[~np.isnan(y[:, t]), t])
                      for t in range(3)])
    assert roc_auc_tasks(torch.from_numpy(s), torch.from_numpy(y)) == pytest.approx(expect)


def test_auc_without_a_usable_task_is_nan():
    y = torch.tensor([[1.0], [float("nan")], [1.0]])
    assert math.isnan(roc_auc_tasks(torch.randn(3, 1), y))


def test_mae_and_rmse_over_present_entries():
    gen = np.random.default_rng(1)
    y = gen.normal(size=(40, 3))
    p = gen.normal(size=(40, 3))
    y[gen.random((40, 3)) < 0.2] = np.nan
    keep = ~np.isnan(y)
    assert mae(torch.from_numpy(p), torch.from_numpy(y)) == pytest.approx(
        sk.mean_absolute_error(y[keep], p[keep]))
    assert rmse(torch.from_numpy(p), torch.from_numpy(y)) == pytest.approx(
        math.sqrt(sk.mean_squared_error(y[keep], p[keep])))
    assert math.isnan(mae(torch.zeros(2), torch.tensor([float("nan")] * 2)))
