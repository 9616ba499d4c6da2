"""Evaluate node embeddings: node classification by logistic regression, link prediction AUC.

**Node classification** (DeepWalk / node2vec protocol): fit
:class:`~graphflow.embeddings.logreg.LogisticRegression` on the training nodes' embeddings, predict
the test nodes. Multi-label data is one-vs-rest with top-``k`` prediction (``k`` = the node's
number of true labels). The L2 penalty, unless given, is picked from :data:`L2_GRID` by
accuracy on the validation nodes when there are some, else by 5-fold cross-validation on the
training nodes; the test nodes are never looked at to choose it.

**Link prediction**: score a pair by the cosine similarity of its embeddings and report the ROC
AUC of held-out edges against as many sampled non-edges (see :mod:`graphflow.walks.holdout`).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.train.metrics import accuracy, f1_macro, f1_micro, roc_auc
from graphflow.embeddings.logreg import LogisticRegression

L2_GRID = (0.01, 0.03, 0.1, 0.3, 1.0, 3.0)
"""Candidate L2 penalties (features are standardised, so one grid fits most embeddings)."""

FOLDS = 5


@dataclass
class ClassificationResult:
    """Test figures of one node-classification evaluation."""

    accuracy: float
    micro_f1: float
    macro_f1: float
    l2: float
    train_size: int
    test_size: int


def labelled(labels: torch.Tensor) -> torch.Tensor:
    """bool (N,): nodes with a label (class >= 0, or at least one 1 in a 0/1 row)."""
    if labels.dim() == 2:
        return labels.sum(1) > 0
    return labels >= 0


def random_split(nodes: torch.Tensor, train_fraction: float,
                 generator: torch.Generator | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """Shuffle ``nodes`` (int64 (n,)) and cut: ``(train, test)`` index tensors."""
    if not 0.0 < train_fraction < 1.0:
        raise ValueError(f"train_fraction must lie in (0, 1), got {train_fraction}")
    perm = nodes[torch.randperm(nodes.numel(), generator=generator)]
    cut = min(max(int(round(train_fraction * nodes.numel())), 1), nodes.numel() - 1)
    return perm[:cut], perm[cut:]


def _fit(x_train: torch.Tensor, y_train: torch.Tensor, l2: float) -> LogisticRegression:
    return LogisticRegression(l2=l2).fit(x_train, y_train)


def _predict(clf: LogisticRegression, x_test: torch.Tensor, y_test: torch.Tensor) -> torch.Tensor:
    k = y_test.sum(1).long() if y_test.dim() == 2 else None
    return clf.predict(x_test, k)


def _log_loss(clf: LogisticRegression, x: torch.Tensor, y: torch.Tensor) -> float:
    """Mean cross-entropy of ``clf`` on ``(x, y)``."""
    logits = clf.scores(x)
    if y.dim() == 2:
        return float(torch.nn.functional.binary_cross_entropy_with_logits(logits, y.double()))
    if logits.shape[1] <= int(y.max()):  # a class unseen in training: no probability for it
        return float("inf")
    return float(torch.nn.functional.cross_entropy(logits, y.long()))


def choose_l2(x: torch.Tensor, y: torch.Tensor, train: torch.Tensor, val: torch.Tensor | None,
              num_classes: int, generator: torch.Generator | None = None,
              grid: tuple[float, ...] = L2_GRID) -> float:
    """The penalty of ``grid`` with the best validation micro-F1 (= accuracy for one label per
    node), ties broken by the lower validation cross-entropy.

    Validates on ``val`` when given (non-empty), else by ``FOLDS``-fold cross-validation on
    ``train``.
    """
    if val is not None and val.numel() > 0:
        splits = [(train, val)]
    else:
        perm = train[torch.randperm(train.numel(), generator=generator)]
        folds = [f for f in perm.chunk(min(FOLDS, train.numel())) if f.numel()]
        splits = [(torch.cat([g for j, g in enumerate(folds) if j != i]), f)
                  for i, f in enumerate(folds) if len(folds) > 1]
    if not splits or any(_one_class(y[tr]) for tr, _ in splits):
        return grid[len(grid) // 2]
    best, best_key = grid[0], (-1.0, float("-inf"))
    for l2 in grid:
        f1 = loss = 0.0
        for tr, te in splits:
            clf = _fit(x[tr], y[tr], l2)
            f1 += f1_micro(_predict(clf, x[te], y[te]), y[te], num_classes) * te.numel()
            loss += _log_loss(clf, x[te], y[te]) * te.numel()
        key = (round(f1, 9), -loss)
        if key > best_key:
            best, best_key = l2, key
    return best


def _one_class(y: torch.Tensor) -> bool:
    return y.dim() == 1 and torch.unique(y).numel() < 2


def classify(embeddings: torch.Tensor, labels: torch.Tensor, train: torch.Tensor,
             test: torch.Tensor, *, val: torch.Tensor | None = None, l2: float | None = None,
             num_classes: int | None = None,
             generator: torch.Generator | None = None) -> ClassificationResult:
    """Logistic regression on ``embeddings`` (float (N, D)) of ``train`` nodes, tested on ``test``.

    :param labels: int64 (N,) classes or float (N, C) 0/1 labels.
    :param train: / :param test: / :param val: int64 node indices.
    :param l2: the penalty, or None to pick one by validation (see :func:`choose_l2`).
    :param num_classes: ``C``; default: the labels' width or largest class + 1. Macro-F1
        averages over all ``C`` classes, a class with no true and no predicted test node
        scoring 0 (:func:`graphflow.train.metrics.f1_macro`, as ``node_classification``).
    """
    x = embeddings.double()
    if num_classes is None:
        num_classes = labels.shape[1] if labels.dim() == 2 else int(labels.max()) + 1
    if l2 is None:
        l2 = choose_l2(x, labels, train, val, num_classes, generator)
    pred = _predict(_fit(x[train], labels[train], l2), x[test], labels[test])
    true = labels[test]
    return ClassificationResult(accuracy=accuracy(pred, true),
                                micro_f1=f1_micro(pred, true, num_classes),
                                macro_f1=f1_macro(pred, true, num_classes), l2=l2,
                                train_size=int(train.numel()), test_size=int(test.numel()))


def cosine_scores(embeddings: torch.Tensor, pairs: torch.Tensor) -> torch.Tensor:
    """float (P,) cosine similarity of the embeddings of each pair (int64 (2, P))."""
    z = torch.nn.functional.normalize(embeddings.double(), dim=1)
    return (z[pairs[0]] * z[pairs[1]]).sum(1)


def link_auc(embeddings: torch.Tensor, positive: torch.Tensor, negative: torch.Tensor) -> float:
    """ROC AUC of cosine scores: held-out edges ``positive`` against ``negative`` (int64 (2, P))."""
    return roc_auc(cosine_scores(embeddings, positive), cosine_scores(embeddings, negative))
