"""F1, accuracy and AUC against scikit-learn."""

from __future__ import annotations

import pytest
import torch

from graphflow.walks.metrics import accuracy, f1_scores, roc_auc

metrics = pytest.importorskip("sklearn.metrics")


def test_f1_multiclass_matches_sklearn():
    gen = torch.Generator().manual_seed(0)
    true = torch.randint(0, 5, (200,), generator=gen)
    pred = torch.where(torch.rand(200, generator=gen) < 0.6, true,
                       torch.randint(0, 5, (200,), generator=gen))
    pred[pred == 4] = 3  # class 4 never predicted: its F1 is 0
    micro, macro = f1_scores(pred, true, 5)
    assert micro == pytest.approx(metrics.f1_score(true, pred, average="micro"))
    assert macro == pytest.approx(metrics.f1_score(true, pred, average="macro"))
    assert accuracy(pred, true) == pytest.approx(metrics.accuracy_score(true, pred))


def test_f1_multilabel_matches_sklearn():
    gen = torch.Generator().manual_seed(1)
    true = (torch.rand(100, 6, generator=gen) < 0.3).float()
    pred = (torch.rand(100, 6, generator=gen) < 0.3).float()
    micro, macro = f1_scores(pred, true, 6)
    assert micro == pytest.approx(metrics.f1_score(true, pred, average="micro"))
    assert macro == pytest.approx(metrics.f1_score(true, pred, average="macro", zero_division=0))


def test_auc_with_ties_matches_sklearn():
    gen = torch.Generator().manual_seed(2)
    pos = torch.randint(0, 10, (300,), generator=gen).double() + 2
    neg = torch.randint(0, 10, (500,), generator=gen).double()
    y = torch.cat([torch.ones(300), torch.zeros(500)])
    s = torch.cat([pos, neg])
    assert roc_auc(pos, neg) == pytest.approx(metrics.roc_auc_score(y, s))
    assert roc_auc(torch.tensor([2.0]), torch.tensor([1.0])) == 1.0
    with pytest.raises(ValueError, match="at least one positive and one negative"):
        roc_auc(torch.tensor([]), torch.tensor([1.0]))
