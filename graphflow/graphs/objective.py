"""Losses, predictions and metrics of graph-level targets.

Three kinds, from the collection's labels:

* ``classes``: int64 (G,) class ids: cross-entropy; accuracy, macro-F1, and ROC AUC for two
  classes (the score of class 1 against class 0);
* ``binary``: float (G, T) 0/1 targets with NaN = missing (multi-task molecule sets): binary
  cross-entropy over the present entries; mean ROC AUC over the tasks, and accuracy of the
  present entries;
* ``regression``: float (G, T) targets, NaN = missing: mean squared (or absolute) error over
  the present entries; MAE and RMSE. With a per-target ``scale`` (the training targets'
  standard deviation) the loss is taken on the errors in standard units, ``(s - y) / scale``.

A ``weight`` weighs the classes (cross-entropy's ``weight``) or each task's positives (binary
cross-entropy's ``pos_weight``): :mod:`graphflow.train.balance`.

Every figure comes from :mod:`graphflow.train.metrics`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from graphflow.train import metrics

TargetKind = Literal["classes", "binary", "regression"]


@dataclass
class GraphObjective:
    kind: TargetKind
    out_dim: int
    regression_loss: Literal["mse", "l1"] = "mse"
    scale: torch.Tensor | None = None  # (T,): regression errors divided by it in the loss
    weight: torch.Tensor | None = None  # (C,) class weights, or (T,) pos_weight (binary)

    def loss(self, scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        if self.kind == "classes":
            return F.cross_entropy(scores, target, weight=self.weight)
        y = target.reshape(scores.shape)
        present = ~torch.isnan(y)
        if not bool(present.any()):
            return scores.sum() * 0.0  # a batch without any target: no gradient
        s, t = scores[present], y[present]
        if self.scale is not None and self.kind == "regression":  # standard units
            unit = self.scale.expand_as(y)[present]
            s, t = s / unit, t / unit
        if self.kind == "binary":
            pos = None if self.weight is None else self.weight.expand_as(y)[present]
            return F.binary_cross_entropy_with_logits(s, t, pos_weight=pos)
        return F.mse_loss(s, t) if self.regression_loss == "mse" else F.l1_loss(s, t)

    def predict(self, scores: torch.Tensor) -> torch.Tensor:
        """int64 (B,) classes, float (B, T) 0/1 (binary) or the float (B, T) estimates."""
        if self.kind == "classes":
            return scores.argmax(dim=1)
        if self.kind == "binary":
            return (scores > 0).float()
        return scores

    def report(self, scores: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        if self.kind == "classes":
            pred = scores.argmax(dim=1)
            out = {"acc": metrics.accuracy(pred, target),
                   "f1_macro": metrics.f1_macro(pred, target, self.out_dim)}
            if self.out_dim == 2:
                margin = scores[:, 1] - scores[:, 0]
                pos, neg = margin[target == 1], margin[target == 0]
                out["roc_auc"] = metrics.roc_auc(pos, neg) if pos.numel() and neg.numel() \
                    else float("nan")
            return out
        y = target.reshape(scores.shape)
        if self.kind == "binary":
            present = ~torch.isnan(y)
            hit = ((scores > 0).float() == y) & present
            acc = float(hit.sum() / present.sum().clamp(min=1))
            return {"roc_auc": metrics.roc_auc_tasks(scores, y), "acc": acc}
        return {"mae": metrics.mae(scores, y), "rmse": metrics.rmse(scores, y)}

    @property
    def figures(self) -> tuple[str, ...]:
        """The figures :meth:`report` gives for these targets (``loss`` besides)."""
        if self.kind == "classes":
            return ("acc", "f1_macro") + (("roc_auc",) if self.out_dim == 2 else ())
        return ("roc_auc", "acc") if self.kind == "binary" else ("mae", "rmse")

    @property
    def score_name(self) -> str:
        """The validation figure that picks the best model by default."""
        return {"classes": "acc", "binary": "roc_auc", "regression": "mae"}[self.kind]

    @property
    def minimize(self) -> bool:
        return self.kind == "regression"


def standard_units(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(mean, std)`` (T,) of float (n, T) targets over their present entries (NaN =
    missing): what :meth:`GraphModel.scale_targets
    <graphflow.graphs.model.GraphModel.scale_targets>` takes. A target without entries gets
    (0, 1); one that does not vary (std at most 1e-6 of its size) keeps a std of 1."""
    present = ~torch.isnan(y)
    count = present.sum(0).clamp(min=1)
    mean = torch.where(present, y, 0.0).sum(0) / count
    std = (torch.where(present, y - mean, 0.0).square().sum(0) / count).sqrt()
    flat = ~(std > 1e-6 * (mean.abs() + 1.0))  # NaN-safe: a NaN std counts as flat
    return mean, torch.where(flat, torch.ones_like(std), std)
