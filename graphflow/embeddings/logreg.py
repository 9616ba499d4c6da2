"""L2-regularised logistic regression in torch (full-batch L-BFGS), for embedding evaluation.

Multi-class (softmax) for int64 labels ``(N,)``; one-vs-rest (independent sigmoids) for 0/1
label matrices ``(N, C)``, predicted as in the node2vec paper: each node gets its ``k`` top
scoring labels, ``k`` being its number of true labels. Features are standardised with the
training rows' mean and deviation. The objective, for weights :math:`W` (F, C) and bias
:math:`b`, is

.. math::

    \\frac{1}{n} \\sum_{i \\in \\text{train}} \\ell(x_i W + b, y_i)
    + \\frac{\\lambda}{2} \\lVert W \\rVert_2^2,

with :math:`\\ell` the cross-entropy (softmax or per-label sigmoid). ``lam = 1 / (C_sk * n)``
reproduces scikit-learn's ``LogisticRegression(C=C_sk)``.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch


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
