"""The metrics of every task, in plain torch (any device, no Python loop over nodes or pairs).

**Classification** (``node_classification``, embedding evaluation). Single-label targets are int64 class ids ``(n,)``; predictions are class ids ``(n,)``.
Multi-label targets and predictions are 0/1 ``(n, C)``.

* accuracy: the fraction of rows predicted exactly (for multi-label: subset accuracy, as
  ``sklearn.metrics.accuracy_score``).
* macro-F1: the unweighted mean over classes of ``F1_c = 2 TP_c / (2 TP_c + FP_c + FN_c)``;
  a class with no true and no predicted member scores 0 (sklearn's ``zero_division=0``).
* micro-F1: ``2 TP / (2 TP + FP + FN)`` summed over all classes (multi-label; for single-label
  it equals accuracy).

**Binary scoring** (link prediction: positive pairs against negative pairs).

* ROC AUC: ``P(s_pos > s_neg) + P(s_pos = s_neg) / 2`` over all (positive, negative) pairs,
  computed from average ranks (Mann-Whitney U), equal to ``sklearn.metrics.roc_auc_score``.
* average precision: ``sum_k (R_k - R_{k-1}) P_k`` over the distinct score thresholds in
  decreasing order (tied scores form one threshold), equal to
  ``sklearn.metrics.average_precision_score`` (no interpolation).

**Ranking** (link prediction, OGB's ``Evaluator`` for ``ogbl-citation2``): each positive
``i`` with score ``p_i`` is ranked against its own ``K`` negatives ``n_ij``::

    rank_i = 1 + (#{j: n_ij > p_i} + #{j: n_ij >= p_i}) / 2      # ties count half
    MRR    = mean_i 1 / rank_i
    Hits@k = mean_i [rank_i <= k]

A positive tied with every negative thus ranks ``1 + K / 2``, neither first nor last.

**Graph-level targets** (``graph_classification``, ``graph_regression``). Float targets
``(n, T)`` mark a missing value with NaN (as molecule sets do); every figure then counts the
present entries only.

* multi-task ROC AUC: the mean over tasks of :func:`roc_auc` on the task's present entries,
  skipping tasks without both a positive and a negative there (OGB's ``ogbg-molhiv``
  evaluator); NaN when no task qualifies.
* multi-task average precision: the same over the same tasks (OGB's ``ap``).
* MAE: ``mean |y_hat - y|``; RMSE: ``sqrt(mean (y_hat - y)^2)``, both over the present
  entries of every task together; NaN when no entry is present. ``rmse_tasks`` /
  ``mae_tasks``: each task's figure over its own present entries, averaged over the tasks
  (OGB's ``rmse``, :mod:`graphflow.graphs.evaluate`).
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


def _check_binary(pos: torch.Tensor, neg: torch.Tensor) -> None:
    if pos.numel() == 0 or neg.numel() == 0:
        raise ValueError("AUC and AP need at least one positive and one negative score")


def roc_auc(pos: torch.Tensor, neg: torch.Tensor) -> float:
    """Area under the ROC curve: P(score of a positive > score of a negative), ties count 1/2.

    Mann-Whitney U from average ranks.

    :param pos: float (P,) scores of the positives.
    :param neg: float (Q,) scores of the negatives.
    :raises ValueError: without a positive or without a negative.
    """
    _check_binary(pos, neg)
    scores = torch.cat([pos.flatten(), neg.flatten()]).double()
    order = torch.argsort(scores)
    # Average rank (1-based) of each group of tied scores.
    _, inverse, counts = torch.unique_consecutive(scores[order], return_inverse=True,
                                                  return_counts=True)
    ends = torch.cumsum(counts, 0).double()
    avg_rank = ends - (counts.double() - 1) / 2  # (groups,)
    ranks = torch.empty_like(scores)
    ranks[order] = avg_rank[inverse]
    n_pos, n_neg = pos.numel(), neg.numel()
    u = ranks[:n_pos].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def average_precision(pos: torch.Tensor, neg: torch.Tensor) -> float:
    """Average precision ``sum_k (R_k - R_{k-1}) P_k`` over the thresholds of distinct scores.

    Thresholds go from the highest score down; all pairs tied at a score enter together
    (sklearn's ``average_precision_score``, no interpolation).

    :param pos: float (P,) scores of the positives.
    :param neg: float (Q,) scores of the negatives.
    :raises ValueError: without a positive or without a negative.
    """
    _check_binary(pos, neg)
    scores = torch.cat([pos.flatten(), neg.flatten()]).double()
    label = torch.cat([torch.ones(pos.numel(), dtype=torch.float64, device=scores.device),
                       torch.zeros(neg.numel(), dtype=torch.float64, device=scores.device)])
    order = torch.argsort(scores, descending=True)
    _, counts = torch.unique_consecutive(scores[order], return_counts=True)
    last = torch.cumsum(counts, 0) - 1  # (T,) position of each threshold's last pair
    tp = torch.cumsum(label[order], 0)[last]  # (T,) true positives at each threshold
    precision = tp / (last + 1).double()
    recall_step = torch.diff(tp, prepend=tp.new_zeros(1)) / pos.numel()
    return float((recall_step * precision).sum())


def ranks(pos: torch.Tensor, neg: torch.Tensor) -> torch.Tensor:
    """float (P,) rank of each positive among its own negatives, ties counting half.

    ``rank_i = 1 + (#{j: neg_ij > pos_i} + #{j: neg_ij >= pos_i}) / 2`` (OGB).

    :param pos: float (P,) positive scores.
    :param neg: float (P, K) the scores of each positive's K negatives.
    """
    if neg.dim() != 2 or neg.shape[0] != pos.shape[0]:
        raise ValueError(f"ranking needs (P,) positive and (P, K) negative scores, got "
                         f"{tuple(pos.shape)} and {tuple(neg.shape)}")
    p = pos.unsqueeze(1)
    above = (neg > p).sum(1).double()
    tied_or_above = (neg >= p).sum(1).double()
    return 1.0 + (above + tied_or_above) / 2  # (P,)


def mrr(rank: torch.Tensor) -> float:
    """Mean reciprocal rank of ``rank`` (P,) from :func:`ranks` (0.0 for no positive)."""
    return float((1.0 / rank.double()).mean()) if rank.numel() else 0.0


def hits_at(rank: torch.Tensor, k: int) -> float:
    """Fraction of positives whose rank (from :func:`ranks`) is at most ``k`` (0.0 for none)."""
    return float((rank <= k).double().mean()) if rank.numel() else 0.0


def _binary_tasks(scores: torch.Tensor, target: torch.Tensor, figure) -> float:
    """Mean of ``figure(pos, neg)`` over the tasks (columns) of ``target`` (n, T) 0/1, NaN =
    missing, that hold a 1 and a 0 among their present entries; NaN when none does."""
    if target.dim() == 1:
        scores, target = scores.reshape(-1, 1), target.reshape(-1, 1)
    present = ~torch.isnan(target)  # (n, T)
    pos = present & (target == 1)
    neg = present & (target == 0)
    usable = (pos.any(0) & neg.any(0)).nonzero().squeeze(1)  # (T',) tasks with both classes
    if usable.numel() == 0:
        return float("nan")
    # One rank pass per task; the tasks are few (12 for Tox21, 128 for MUV).
    values = [figure(scores[pos[:, t], t], scores[neg[:, t], t]) for t in usable.tolist()]
    return float(sum(values) / len(values))


def roc_auc_tasks(scores: torch.Tensor, target: torch.Tensor) -> float:
    """Mean ROC AUC over the tasks (columns) of ``target`` (n, T) 0/1 with NaN = missing.

    A task counts when its present entries hold at least one 1 and one 0; the others are
    skipped (sklearn would raise for them). NaN when no task counts. OGB's ``Evaluator``
    ``rocauc`` (``ogbg-mol*``), which raises instead of NaN.

    :param scores: float (n, T) scores (logits or probabilities: only their order matters).
    """
    return _binary_tasks(scores, target, roc_auc)


def average_precision_tasks(scores: torch.Tensor, target: torch.Tensor) -> float:
    """Mean average precision over the tasks of ``target`` (n, T), the same tasks as
    :func:`roc_auc_tasks` (OGB's ``Evaluator`` ``ap``, ``ogbg-molpcba``)."""
    return _binary_tasks(scores, target, average_precision)


def _per_task(pred: torch.Tensor, target: torch.Tensor, squared: bool) -> float:
    if target.dim() == 1:
        pred, target = pred.reshape(-1, 1), target.reshape(-1, 1)
    present = ~torch.isnan(target)  # (n, T)
    diff = torch.where(present, pred.reshape(target.shape).double() - target.double(), 0.0)
    count = present.sum(0)  # (T,)
    err = diff.pow(2) if squared else diff.abs()
    mean = err.sum(0) / count.clamp(min=1)  # (T,)
    per = mean.sqrt() if squared else mean
    per = per[count > 0]
    return float(per.mean()) if per.numel() else float("nan")


def rmse_tasks(pred: torch.Tensor, target: torch.Tensor) -> float:
    """The mean over tasks (columns) of each task's RMSE over its present entries: OGB's
    ``Evaluator`` ``rmse`` (``ogbg-molesol``, ``-molfreesolv``, ``-mollipo``). A task without
    entries is left out (OGB's mean would be NaN); NaN when every task is empty. For one task,
    :func:`rmse`."""
    return _per_task(pred, target, squared=True)


def mae_tasks(pred: torch.Tensor, target: torch.Tensor) -> float:
    """The mean over tasks of each task's MAE over its present entries (as
    :func:`rmse_tasks`); for one task, :func:`mae`."""
    return _per_task(pred, target, squared=False)


def _present(pred: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    diff = pred.reshape(target.shape).double() - target.double()
    return diff[~torch.isnan(target)]


def mae(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Mean absolute error over the present (non-NaN) entries of ``target``; NaN for none."""
    diff = _present(pred, target)
    return float(diff.abs().mean()) if diff.numel() else float("nan")


def rmse(pred: torch.Tensor, target: torch.Tensor) -> float:
    """Root mean squared error over the present (non-NaN) entries of ``target``; NaN for
    none."""
    diff = _present(pred, target)
    return float(diff.pow(2).mean().sqrt()) if diff.numel() else float("nan")
