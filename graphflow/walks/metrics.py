"""Classification and ranking metrics in torch: accuracy, micro/macro F1, ROC AUC."""

from __future__ import annotations

import torch


def one_hot(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """float (n, C) 0/1 from int64 (n,) classes (a 0/1 matrix passes through)."""
    if labels.dim() == 2:
        return labels.float()
    return torch.nn.functional.one_hot(labels.long(), num_classes).float()


def f1_scores(pred: torch.Tensor, true: torch.Tensor, num_classes: int) -> tuple[float, float]:
    """``(micro_f1, macro_f1)`` of predictions against targets.

    Both are int64 (n,) classes or float (n, C) 0/1 label matrices. Micro-F1 pools the
    true/false positives of all classes; macro-F1 averages the per-class F1 over the classes
    that occur in ``true`` or ``pred`` (scikit-learn's convention with ``labels`` unset).
    """
    p, t = one_hot(pred, num_classes), one_hot(true, num_classes)  # (n, C)
    tp = (p * t).sum(0)  # (C,)
    fp = (p * (1 - t)).sum(0)
    fn = ((1 - p) * t).sum(0)
    denom = 2 * tp + fp + fn
    micro = float(2 * tp.sum() / denom.sum()) if float(denom.sum()) > 0 else 0.0
    present = denom > 0
    per_class = torch.where(present, 2 * tp / denom.clamp(min=1e-12), torch.zeros_like(tp))
    macro = float(per_class[present].mean()) if bool(present.any()) else 0.0
    return micro, macro


def accuracy(pred: torch.Tensor, true: torch.Tensor) -> float:
    """Fraction of rows predicted exactly (all labels right, for 0/1 matrices)."""
    if len(true) == 0:
        return 0.0
    if true.dim() == 2:
        return float((pred == true).all(1).float().mean())
    return float((pred == true).float().mean())


def roc_auc(pos: torch.Tensor, neg: torch.Tensor) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties count 1/2.

    Mann-Whitney U from average ranks; :param pos: float (P,), :param neg: float (Q,).
    """
    if pos.numel() == 0 or neg.numel() == 0:
        raise ValueError("AUC needs at least one positive and one negative score")
    scores = torch.cat([pos, neg]).double()
    order = torch.argsort(scores)
    sorted_scores = scores[order]
    # Average rank (1-based) of each group of tied scores.
    _, inverse, counts = torch.unique_consecutive(sorted_scores, return_inverse=True,
                                                  return_counts=True)
    ends = torch.cumsum(counts, 0).double()
    avg_rank = ends - (counts.double() - 1) / 2  # (groups,)
    ranks = torch.empty_like(scores)
    ranks[order] = avg_rank[inverse]
    n_pos, n_neg = pos.numel(), neg.numel()
    u = ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))
