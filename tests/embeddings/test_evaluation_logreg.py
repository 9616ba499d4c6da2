"""Torch logistic regression against scikit-learn's, multi-class and one-vs-rest top-k."""

from __future__ import annotations

import pytest
import torch

from graphflow.embeddings.evaluation import LogisticRegression


def blobs(n=300, classes=4, dim=10, seed=0):
    gen = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=gen)
    centers = torch.randn(classes, dim, generator=gen) * 1.5
    return centers[y] + torch.randn(n, dim, generator=gen), y


def test_multiclass_matches_sklearn_on_the_same_objective():
    sklearn = pytest.importorskip("sklearn.linear_model")
    x, y = blobs()
    z = (x - x.mean(0)) / x.std(0, unbiased=False)
    c = 0.5
    ours = LogisticRegression(l2=1.0 / (c * len(x)), max_iter=500).fit(x, y)
    theirs = sklearn.LogisticRegression(C=c, max_iter=2000, tol=1e-10).fit(z.numpy(), y.numpy())
    ref = torch.from_numpy(theirs.decision_function(z.numpy())).double()
    assert torch.equal(ours.predict(x), torch.from_numpy(theirs.predict(z.numpy())))
    # Softmax logits are defined up to a per-row constant: compare centred logits.
    a = ours.scores(x) - ours.scores(x).mean(1, keepdim=True)
    b = ref - ref.mean(1, keepdim=True)
    assert torch.allclose(a, b, atol=2e-3)


def test_multilabel_predicts_each_rows_top_k():
    x, y = blobs(classes=5)
    targets = torch.nn.functional.one_hot(y, 5).float()
    targets[:, 0] = 1.0  # every node also has label 0: two labels per row
    clf = LogisticRegression(l2=0.01).fit(x, targets)
    pred = clf.predict(x, targets.sum(1).long())
    assert pred.shape == targets.shape
    assert torch.equal(pred.sum(1), targets.sum(1))
    assert float((pred == targets).all(1).float().mean()) > 0.8
    assert bool((pred[:, 0] == 1).all())


def test_stronger_penalty_shrinks_weights():
    x, y = blobs()
    weak = LogisticRegression(l2=1e-3).fit(x, y)
    strong = LogisticRegression(l2=10.0).fit(x, y)
    assert strong.weight.norm() < weak.weight.norm() / 5
