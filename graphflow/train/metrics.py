"""Classification metrics in plain torch (any device, no Python loop over nodes).

Single-label targets are int64 class ids ``(n,)``; predictions are class ids ``(n,)``.
Multi-label targets and predictions are 0/1 ``(n, C)``.

* accuracy: the fraction of rows predicted exactly (for multi-label: subset accuracy, as
  ``sklearn.metrics.accuracy_score``).
* macro-F1: the unweighted mean over classes of ``F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c)``;
  a class with no true and no predicted member scores 0 (sklearn's ``zero_division=0``).
* micro-F1: ``2 TP / (2 TP + FP + FN)`` summed over all classes (multi-label; for single-label
  it equals accuracy).
"""

from __future__ import annotations

import torch


def accuracy(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Fraction of rows whose prediction equals the target (0.0 for no rows)."""
    if target.shape[0] == 0:
        return 0.0
    equal = pred == target
    if equal.dim() == 2:
        equal = equal.all(dim=1)  # (n,) subset accuracy
    return equal.float().mean().item()


def confusion_counts(pred: torch.Tensor, target: torch.Tensor,
                     num_classes: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Per-class true positives, false positives and false negatives, each int64 ``(C,)``."""
    if target.dim() == 2:  # multi-label 0/1 (n, C)
        p, t = pred.bool(), target.bool()
        tp = (p & t).sum(0)
        fp = (p & ~t).sum(0)
        fn = (~p & t).sum(0)
        return tp, fp, fn
    hit = pred == target  # (n,)
    tp = torch.bincount(target[hit], minlength=num_classes)
    predicted = torch.bincount(pred, minlength=num_classes)
    actual = torch.bincount(target, minlength=num_classes)
    return tp, predicted - tp, actual - tp


def f1_macro(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> float:
    """Unweighted mean of the per-class F1 scores (classes absent from both count as 0)."""
    if target.shape[0] == 0:
        return 0.0
    tp, fp, fn = confusion_counts(pred, target, num_classes)
    denom = (2 * tp + fp + fn).double()
    f1 = torch.where(denom > 0, 2 * tp.double() / denom.clamp(min=1), torch.zeros_like(denom))
    return f1.mean().item()


def f1_micro(pred: torch.Tensor, target: torch.Tensor, num_classes: int) -> float:
    """F1 of the pooled counts over all classes."""
    if target.shape[0] == 0:
        return 0.0
    tp, fp, fn = (c.sum().double() for c in confusion_counts(pred, target, num_classes))
    denom = 2 * tp + fp + fn
    return (2 * tp / denom).item() if denom > 0 else 0.0


def classification_report(pred: torch.Tensor, target: torch.Tensor, num_classes: int, *,
                          multilabel: bool) -> dict[str, float]:
    """``acc`` and ``f1_macro`` (plus ``f1_micro`` for multi-label) of one node subset."""
    figures = {
        "acc": accuracy(pred, target),
        "f1_macro": f1_macro(pred, target, num_classes),
    }
    if multilabel:
        figures["f1_micro"] = f1_micro(pred, target, num_classes)
    return figures
