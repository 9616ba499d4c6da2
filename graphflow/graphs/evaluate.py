"""OGB's ``graphproppred.Evaluator`` figures for graph-level predictions.

``evaluate(metric, y_true, y_pred)`` takes OGB's arrays (numpy or torch, (n, T), NaN =
missing) and returns ``{metric: value}`` as ``Evaluator(name).eval({"y_true": ..., "y_pred":
...})`` does (``ogb/graphproppred/evaluate.py``):

* ``rocauc``: per task with a 1 and a 0 among its labels, ``roc_auc_score`` over its present
  entries; the mean over those tasks (Tox21: tasks are left out of a split that holds one
  class only);
* ``ap``: the same with ``average_precision_score``;
* ``rmse``: per task, the RMSE over its present entries; the mean over tasks;
* ``mae``: the same with the mean absolute error (OGB's ``pcqm4m`` figure, per task).

The graph tasks report the same figures (``roc_auc``, ``ap``, ``rmse``, ``mae`` in
``val_*`` / ``test_*``; :mod:`graphflow.train.metrics`); this module gives them under OGB's
names for scripts and benchmarks that compare with OGB's numbers. Unlike OGB, which raises,
no qualifying task stops with a :class:`~graphflow.errors.DataError` in one line.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import torch

from graphflow.errors import DataError
from graphflow.train import metrics

METRICS = {"rocauc": metrics.roc_auc_tasks, "ap": metrics.average_precision_tasks,
           "rmse": metrics.rmse_tasks, "mae": metrics.mae_tasks}


def _tensor(a: Any) -> torch.Tensor:
    t = torch.as_tensor(np.asarray(a) if not isinstance(a, torch.Tensor) else a)
    t = t.double()
    return t.reshape(-1, 1) if t.dim() == 1 else t


def evaluate(metric: str, y_true: Any, y_pred: Any) -> dict[str, float]:
    """``{metric: value}`` as OGB's ``Evaluator`` (see the module docstring)."""
    if metric not in METRICS:
        raise DataError(f"unknown metric {metric!r}; choose one of {', '.join(METRICS)}")
    t, p = _tensor(y_true), _tensor(y_pred)
    if t.shape != p.shape:
        raise DataError(f"y_true {tuple(t.shape)} and y_pred {tuple(p.shape)} differ in shape")
    value = METRICS[metric](p, t)
    if math.isnan(value):
        raise DataError(f"{metric}: no task has " + ("both a positive and a negative label"
                        if metric in ("rocauc", "ap") else "a label"))
    return {metric: value}
