"""Losses, predictions and figures of every supervised task, in one place.

:class:`Objective` covers per-row targets (nodes or graphs), by ``kind``:

* ``classes``: int64 (n,) class ids: cross-entropy (``weight``: per-class weights);
  predictions are the argmax; figures ``acc``, ``f1_macro`` and, for two classes, ``roc_auc``
  (the margin of class 1 over class 0);
* ``multilabel``: float (n, C) 0/1 labels, NaN = missing: one-vs-rest binary cross-entropy
  over the present entries (``weight``: each label's ``pos_weight``); predictions are the
  labels whose logit is > 0; figures ``acc``, ``f1_macro``, ``f1_micro`` (node labels);
* ``binary``: float (n, T) 0/1 tasks, NaN = missing (multi-task molecule sets): the same
  masked binary cross-entropy; figures the mean ``roc_auc`` and ``ap`` over the tasks with
  both classes (OGB's ``Evaluator``) and the ``acc`` of the present entries;
* ``regression``: float (n, T) targets, NaN = missing: mean squared (``mse``) or absolute
  (``l1``) error over the present entries; figures ``mae`` and ``rmse`` over the present
  entries of every target together (for one target OGB's ``rmse``; for several, OGB's mean
  over targets is ``graphflow.graphs.evaluate``'s). With a per-target
  ``scale`` (the training targets' standard deviation) the loss is taken on the errors in
  standard units, ``(s - y) / scale``.

A batch without any present target has a zero loss (no gradient). The loss is computed in
float32 whatever the autocast dtype of the scores (bfloat16 or float16 logits are cast up).

:class:`ScoredPairs` is the objective of link prediction: positive pair scores ``p`` (B,)
against ``k`` negatives per positive ``q`` (B, k), source-major:

* ``bce``: :math:`-\\frac1B \\sum_i \\log\\sigma(p_i) - \\frac1{Bk} \\sum_{ij} \\log(1 - \\sigma(q_{ij}))`
  (positives and negatives weigh the same whatever ``k``);
* ``bpr``: :math:`-\\frac1{Bk} \\sum_{ij} \\log\\sigma(p_i - q_{ij})` (Rendle et al. 2009), the
  pairwise margin loss.

Every figure comes from :mod:`graphflow.train.metrics`; balanced weights from
:mod:`graphflow.train.balance`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from graphflow.train import metrics

TargetKind = Literal["classes", "multilabel", "binary", "regression"]
RegressionLoss = Literal["mse", "l1"]
PairLoss = Literal["bce", "bpr"]


@dataclass
class Objective:
    """Loss, prediction and figures of per-row targets (see the module docstring)."""

    kind: TargetKind
    out_dim: int  # classes, labels or targets per row
    regression_loss: RegressionLoss = "mse"
    scale: torch.Tensor | None = None  # (T,): regression errors divided by it in the loss
    weight: torch.Tensor | None = None  # (C,) class weights, or (C,)/(T,) pos_weight

    @classmethod
    def for_nodes(cls, num_classes: int, multilabel: bool,
                  weight: torch.Tensor | None = None) -> Objective:
        """Node labels: ``classes`` or ``multilabel``."""
        return cls("multilabel" if multilabel else "classes", num_classes, weight=weight)

    @property
    def num_classes(self) -> int:
        return self.out_dim

    @property
    def multilabel(self) -> bool:
        return self.kind == "multilabel"

    def loss(self, scores: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean loss of (n, C) scores against the targets (see the module docstring)."""
        dtype = torch.promote_types(scores.dtype, torch.float32)  # float32 under autocast
        scores = scores.to(dtype)
        weight = None if self.weight is None else self.weight.to(scores.device, dtype)
        if self.kind == "classes":
            return F.cross_entropy(scores, target, weight=weight)
        y = target.to(dtype).reshape(scores.shape)
        present = ~torch.isnan(y)
        if bool(present.all()):  # the common case: no boolean gather
            s, t, pos = scores, y, weight
            if self.kind != "regression" or self.scale is None:
                return self._masked(s, t, pos)
        if not bool(present.any()):
            return scores.sum() * 0.0  # a batch without any target: no gradient
        s, t = scores[present], y[present]
        pos = None if weight is None else weight.expand_as(y)[present]
        return self._masked(s, t, pos, present=present, shape=y)

    def _masked(self, s: torch.Tensor, t: torch.Tensor, pos: torch.Tensor | None, *,
                present: torch.Tensor | None = None, shape: torch.Tensor | None = None
                ) -> torch.Tensor:
        if self.kind == "regression":
            if self.scale is not None:  # standard units
                unit = self.scale.to(s.device, s.dtype).expand_as(shape)
                unit = unit[present] if present is not None else unit
                s, t = s / unit, t / unit
            return F.mse_loss(s, t) if self.regression_loss == "mse" else F.l1_loss(s, t)
        return F.binary_cross_entropy_with_logits(s, t, pos_weight=pos)

    def predict(self, scores: torch.Tensor) -> torch.Tensor:
        """int64 (n,) class ids, float32 (n, C) 0/1 (a label where its score > 0), or the
        float (n, T) estimates."""
        if self.kind == "classes":
            return scores.argmax(dim=-1)
        if self.kind in ("multilabel", "binary"):
            return (scores > 0).float()
        return scores

    def accuracy(self, scores: torch.Tensor, target: torch.Tensor) -> float:
        """The share of rows predicted right (classes; multi-label: every label of the row
        right), or of the present 0/1 entries (binary): the cheap figure of a training batch.
        NaN for regression."""
        if self.kind in ("classes", "multilabel"):
            return metrics.accuracy(self.predict(scores), target)
        if self.kind == "regression":
            return float("nan")
        y = target.reshape(scores.shape)
        present = ~torch.isnan(y.float())
        hit = ((scores > 0).float() == y) & present
        return float(hit.sum() / present.sum().clamp(min=1))

    def report(self, scores: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        """The figures of these rows (:attr:`figures`)."""
        if self.kind == "classes":
            pred = scores.argmax(dim=-1)
            out = {"acc": metrics.accuracy(pred, target),
                   "f1_macro": metrics.f1_macro(pred, target, self.out_dim)}
            if self.out_dim == 2:
                margin = (scores[:, 1] - scores[:, 0]).float()
                pos, neg = margin[target == 1], margin[target == 0]
                out["roc_auc"] = metrics.roc_auc(pos, neg) if pos.numel() and neg.numel() \
                    else float("nan")
            return out
        y = target.reshape(scores.shape)
        if self.kind == "multilabel":
            return metrics.classification_report(self.predict(scores), y, self.out_dim,
                                                 multilabel=True)
        if self.kind == "binary":
            return {"roc_auc": metrics.roc_auc_tasks(scores.float(), y),
                    "ap": metrics.average_precision_tasks(scores.float(), y),
                    "acc": self.accuracy(scores, target)}
        return {"mae": metrics.mae(scores.float(), y), "rmse": metrics.rmse(scores.float(), y)}

    @property
    def figures(self) -> tuple[str, ...]:
        """The figures :meth:`report` gives for these targets (``loss`` besides)."""
        if self.kind == "classes":
            return ("acc", "f1_macro") + (("roc_auc",) if self.out_dim == 2 else ())
        if self.kind == "multilabel":
            return ("acc", "f1_macro", "f1_micro")
        return ("roc_auc", "ap", "acc") if self.kind == "binary" else ("mae", "rmse")

    @property
    def score_name(self) -> str:
        """The validation figure that picks the best model by default."""
        return {"classes": "acc", "multilabel": "f1_micro", "binary": "roc_auc",
                "regression": "mae"}[self.kind]


@dataclass
class ScoredPairs:
    """Loss, prediction and figures of scored node pairs (link prediction; see the module
    docstring)."""

    loss_name: PairLoss = "bce"
    monitor: Literal["auc", "mrr"] = "auc"

    def loss(self, pos: torch.Tensor, neg: torch.Tensor, k: int) -> torch.Tensor:
        """The loss of scores ``pos`` (B,) and ``neg`` (B * k,), source-major, in float32."""
        pos, neg = pos.float(), neg.float()
        if self.loss_name == "bpr":
            return -F.logsigmoid(pos.unsqueeze(1) - neg.view(-1, k)).mean()
        return (F.binary_cross_entropy_with_logits(pos, torch.ones_like(pos))
                + F.binary_cross_entropy_with_logits(neg, torch.zeros_like(neg)))

    @staticmethod
    def predict(scores: torch.Tensor) -> torch.Tensor:
        """The probability that each pair is an edge, float32 (n,)."""
        return torch.sigmoid(scores.float())

    @staticmethod
    def report(pos: torch.Tensor, neg: torch.Tensor) -> dict[str, float]:
        """``auc`` and ``ap`` of positive against negative pair scores."""
        pos, neg = pos.float(), neg.float()
        return {"auc": metrics.roc_auc(pos, neg), "ap": metrics.average_precision(pos, neg)}

    @property
    def score_name(self) -> str:
        return self.monitor
