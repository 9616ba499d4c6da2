"""Class weights for imbalanced labels: one rule for node and graph classification.

``class_weights = "balanced"`` weighs each class inversely to its frequency among the training
rows, as scikit-learn's ``class_weight="balanced"``: ``w_c = n / (C * n_c)``, so every class
carries the same total weight in the loss (cross-entropy's ``weight``; its mean divides by the
batch's summed weights). For 0/1 targets (multi-label nodes, multi-task graphs) each column
gets BCE's ``pos_weight = n_neg / n_pos`` over its present entries (NaN = missing), which
gives its positives the weight of its negatives.
"""

from __future__ import annotations

from typing import Literal

import torch

ClassWeights = Literal["none", "balanced"]
CLASS_WEIGHTS_HELP = ('"balanced": weigh each class by n / (C n_c) over the training rows '
                      "(0/1 targets: BCE's pos_weight = negatives / positives per column), for "
                      'imbalanced labels; "none": every row alike.')


def balanced_class_weights(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """(C,) float ``n / (C * n_c)`` of int64 (n,) class ids; a class without training rows
    gets ``n / C`` (it has no term in the training loss)."""
    counts = torch.bincount(labels, minlength=num_classes).clamp(min=1)
    return labels.shape[0] / (num_classes * counts.float())


def balanced_pos_weight(targets: torch.Tensor) -> torch.Tensor:
    """(T,) float ``n_neg / n_pos`` per column of float (n, T) 0/1 targets, NaN = missing; a
    column without positives or negatives gets 1."""
    present = ~torch.isnan(targets)
    pos = (present & (targets > 0.5)).sum(0)
    neg = present.sum(0) - pos
    weight = neg.float() / pos.clamp(min=1).float()
    return torch.where((pos > 0) & (neg > 0), weight, torch.ones_like(weight))


def balanced(labels: torch.Tensor, num_classes: int) -> torch.Tensor:
    """The weights ``"balanced"`` gives: class weights of (n,) class ids, or the per-column
    ``pos_weight`` of (n, T) 0/1 targets."""
    if labels.dim() == 1 and not labels.is_floating_point():
        return balanced_class_weights(labels, num_classes)
    return balanced_pos_weight(labels.float().reshape(labels.shape[0], -1))
