"""ROC AUC against scikit-learn (classification metrics: tests/train/test_metrics.py)."""

from __future__ import annotations

import pytest
import torch

from graphflow.walks.metrics import roc_auc

metrics = pytest.importorskip("sklearn.metrics")


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
