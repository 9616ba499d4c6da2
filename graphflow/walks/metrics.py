"""Ranking metric of link prediction: ROC AUC in torch.

Classification metrics (accuracy, micro/macro-F1) are :mod:`graphflow.train.metrics`', shared
with ``node_classification`` so that ``emb_macro_f1`` and ``f1_macro`` mean the same thing.
"""

from __future__ import annotations

import torch


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
