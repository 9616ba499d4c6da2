"""Evaluate node embeddings: node classification by logistic regression, link prediction AUC.

**Node classification** (DeepWalk / node2vec protocol): fit :class:`LogisticRegression` on the
training nodes' embeddings, predict the test nodes. Multi-label data is one-vs-rest with
top-``k`` prediction (``k`` = the node's number of true labels). The L2 penalty, unless given,
is picked from :data:`L2_GRID` by accuracy on the validation nodes when there are some, else by
5-fold cross-validation on the training nodes; the test nodes are never looked at to choose it.

**Link prediction**: score a pair by the cosine similarity of its embeddings and report the ROC
AUC of the held-out test edges against their fixed negatives (the ``link_split`` transform's
:class:`~graphflow.linkpred.held_out.LinkSplit` on the graph).

**Logistic regression** (:class:`LogisticRegression`): L2-regularised, in torch (full-batch
L-BFGS). Multi-class (softmax) for int64 labels ``(N,)``; one-vs-rest (independent sigmoids) for 0/1
label matrices ``(N, C)``, predicted as in the node2vec paper: each node gets its ``k`` top
scoring labels, ``k`` being its number of true labels. Features are standardised with the
training rows' mean and deviation. The objective, for weights :math:`W` (F, C) and bias
:math:`b`, is

.. math::

    \\frac{1}{n} \\sum_{i \\in \\text{train}} \\ell(x_i W + b, y_i)
    + \\frac{\\lambda}{2} \\lVert W \\rVert_2^2,

with :math:`\\ell` the cross-entropy (softmax or per-label sigmoid). ``lam = 1 / (C_sk * n)``
reproduces scikit-learn's ``LogisticRegression(C=C_sk)``.

:func:`evaluate_embeddings` runs what :class:`EvalOptions` asks for (the ``embedding_eval``
task, and ``skipgram`` with ``eval = true``).
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean, pstdev

import torch

from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError
from graphflow.options import option
from graphflow.sampling.sampler import intra_op_threads
from graphflow.train.metrics import accuracy, f1_macro, f1_micro, roc_auc

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


# Logistic regression


@dataclass
class LogisticRegression:
    """Fit with :meth:`fit`, then :meth:`predict` / :meth:`scores`.

    :ivar l2: the penalty :math:`\\lambda`. :ivar max_iter: L-BFGS iterations.
    """

    l2: float = 1e-4
    max_iter: int = 100

    def fit(self, x: torch.Tensor, y: torch.Tensor) -> LogisticRegression:
        """:param x: float (n, F) features. :param y: int64 (n,) classes or float (n, C) 0/1."""
        x = x.double()
        self.multilabel = y.dim() == 2
        self.mean = x.mean(0)
        self.std = x.std(0, unbiased=False).clamp(min=1e-8)
        z = (x - self.mean) / self.std  # (n, F)
        classes = y.shape[1] if self.multilabel else int(y.max()) + 1
        self.weight = torch.zeros(z.shape[1], classes, dtype=torch.float64, requires_grad=True)
        self.bias = torch.zeros(classes, dtype=torch.float64, requires_grad=True)
        target = y.double() if self.multilabel else y.long()
        opt = torch.optim.LBFGS([self.weight, self.bias], lr=1.0, max_iter=self.max_iter,
                                tolerance_grad=1e-5, tolerance_change=1e-9,
                                history_size=20, line_search_fn="strong_wolfe")

        def closure() -> torch.Tensor:
            opt.zero_grad()
            logits = z @ self.weight + self.bias  # (n, C)
            if self.multilabel:
                loss = torch.nn.functional.binary_cross_entropy_with_logits(
                    logits, target, reduction="sum") / len(z)
            else:
                loss = torch.nn.functional.cross_entropy(logits, target)
            loss = loss + 0.5 * self.l2 * (self.weight ** 2).sum()
            loss.backward()
            return loss

        opt.step(closure)
        self.weight.requires_grad_(False)
        self.bias.requires_grad_(False)
        return self

    def scores(self, x: torch.Tensor) -> torch.Tensor:
        """float64 (n, C) logits."""
        return ((x.double() - self.mean) / self.std) @ self.weight + self.bias

    def predict(self, x: torch.Tensor, k: torch.Tensor | None = None) -> torch.Tensor:
        """int64 (n,) classes; multi-label: float (n, C) 0/1 with each row's ``k`` top labels.

        :param k: int64 (n,) labels to predict per row (multi-label only; default 1).
        """
        s = self.scores(x)
        if not self.multilabel:
            return s.argmax(1)
        if k is None:
            k = torch.ones(len(s), dtype=torch.int64)
        rank = torch.argsort(torch.argsort(s, dim=1, descending=True), dim=1)  # (n, C) 0 = best
        return (rank < k[:, None]).to(torch.float32)


# The evaluations a run asks for

@dataclass
class EvalOptions:
    classification: bool = option(True, "Node classification by logistic regression on the "
                                  "embeddings (needs node labels).")
    train_fraction: float = option(0.5, "Training share of the labelled nodes when the graph has "
                                   "no train_mask/test_mask (a seeded random split).")
    splits: int = option(1, "Random splits averaged (graphs without train_mask/test_mask), "
                         "as in the DeepWalk and node2vec papers; each metric is the mean.")
    l2: float | None = option(None, "L2 penalty of the logistic regression (features "
                              "standardised). Default: chosen by validation (val_mask, or 5-fold "
                              "cross-validation on the training nodes).")
    link_prediction: bool = option(False, "ROC AUC of the held-out test edges against their "
                                   "fixed negatives, by cosine similarity; needs the "
                                   "link_split transform before the embeddings' stage.")

    def __post_init__(self) -> None:
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(f"train_fraction = {self.train_fraction}: must lie in (0, 1)")
        if self.splits < 1:
            raise ValueError(f"splits = {self.splits}: must be >= 1")
        if self.l2 is not None and self.l2 < 0:
            raise ValueError(f"l2 = {self.l2}: must be >= 0")


def evaluate_embeddings(ctx: RunContext, embeddings: torch.Tensor, options: EvalOptions) -> dict:
    """Run the evaluations ``options`` asks for, log them with ``ctx.log_metrics``, return them."""
    if not options.classification and not options.link_prediction:
        raise ConfigError(f"nothing to evaluate: set classification = true "
                          f"and/or link_prediction = true")
    data = ctx.graph()
    if embeddings.shape[0] != data.num_nodes:
        raise DataError(f"embeddings have {embeddings.shape[0]} rows but the graph has "
                        f"{data.num_nodes} nodes; the graph changed after the embeddings were "
                        f"made")
    gen = torch.Generator().manual_seed(ctx.seed)
    metrics: dict[str, float] = {}
    with intra_op_threads(1):  # small dense problems: threads cost more than they give
        if options.classification:
            metrics.update(_classification(data, embeddings, options, gen))
        if options.link_prediction:
            metrics["link_auc"] = _link_prediction(ctx, embeddings)
    ctx.log_metrics(**metrics)
    ctx.info("  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return metrics


def _classification(data, embeddings: torch.Tensor, options: EvalOptions,
                    gen: torch.Generator) -> dict[str, float]:
    g = data.graph
    if "label" not in g.ndata:
        raise DataError(f"node classification needs node labels (ndata['label']) "
                        f"and this graph has none; load a labelled graph or set "
                        f"classification = false")
    labels = g.ndata["label"]
    has = labelled(labels)
    if "train_mask" in g.ndata and "test_mask" in g.ndata:
        train = (g.ndata["train_mask"] & has).nonzero().squeeze(1)
        test = (g.ndata["test_mask"] & has).nonzero().squeeze(1)
        val = (g.ndata["val_mask"] & has).nonzero().squeeze(1) if "val_mask" in g.ndata else None
        if train.numel() == 0 or test.numel() == 0:
            raise DataError(f"train_mask/test_mask select {train.numel()}/"
                            f"{test.numel()} labelled nodes; both need at least one")
    else:
        nodes = has.nonzero().squeeze(1)
        if nodes.numel() < 2:
            raise DataError(f"{nodes.numel()} labelled node(s); node classification "
                            f"needs at least 2")
        results = []
        for _ in range(options.splits):
            train, test = random_split(nodes, options.train_fraction, gen)
            results.append(classify(embeddings, labels, train, test, l2=options.l2,
                                    num_classes=data.num_classes, generator=gen))
        out = {"emb_test_acc": mean(r.accuracy for r in results),
               "emb_micro_f1": mean(r.micro_f1 for r in results),
               "emb_macro_f1": mean(r.macro_f1 for r in results)}
        if options.splits > 1:
            out["emb_test_acc_std"] = pstdev(r.accuracy for r in results)
        return out
    result = classify(embeddings, labels, train, test, val=val, l2=options.l2,
                      num_classes=data.num_classes, generator=gen)
    return {"emb_test_acc": result.accuracy, "emb_micro_f1": result.micro_f1,
            "emb_macro_f1": result.macro_f1, "emb_l2": result.l2}


def _link_prediction(ctx: RunContext, embeddings: torch.Tensor) -> float:
    links = ctx.graph().links
    if links is None or links.test.num_pos == 0:
        raise ConfigError('link_prediction = true needs held-out edges: add a [[transform]] '
                          'type = "link_split" (e.g. val = 0.0, test = 0.1) before the stage '
                          'that makes the embeddings, so that the walks never see them')
    return link_auc(embeddings, links.test.pos, links.test.neg)
