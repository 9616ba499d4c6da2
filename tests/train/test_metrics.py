"""Metrics agree with scikit-learn on single- and multi-label data."""

import pytest
import torch
from sklearn.metrics import accuracy_score, f1_score

from graphflow.train.metrics import accuracy, classification_report, f1_macro, f1_micro


def test_single_label_matches_sklearn():
    gen = torch.Generator().manual_seed(0)
    target = torch.randint(0, 5, (200,), generator=gen)
    pred = torch.where(torch.rand(200, generator=gen) < 0.6, target,
                       torch.randint(0, 5, (200,), generator=gen))
    pred[pred == 4] = 3  # class 4 is never predicted: its F1 is 0 (zero_division=0)
    assert accuracy(pred, target) == pytest.approx(accuracy_score(target, pred))
    assert f1_macro(pred, target, 5) == pytest.approx(
        f1_score(target, pred, average="macro", labels=range(5), zero_division=0))
    assert f1_micro(pred, target, 5) == pytest.approx(accuracy_score(target, pred))


def test_multilabel_matches_sklearn():
    gen = torch.Generator().manual_seed(1)
    target = (torch.rand(100, 6, generator=gen) < 0.3).float()
    flip = torch.rand(100, 6, generator=gen) < 0.2
    pred = torch.where(flip, 1 - target, target)
    report = classification_report(pred, target, 6, multilabel=True)
    assert report["acc"] == pytest.approx(accuracy_score(target.numpy(), pred.numpy()))
    assert report["f1_macro"] == pytest.approx(
        f1_score(target.numpy(), pred.numpy(), average="macro", zero_division=0))
    assert report["f1_micro"] == pytest.approx(
        f1_score(target.numpy(), pred.numpy(), average="micro", zero_division=0))


def test_empty_subset_scores_zero():
    empty = torch.zeros(0, dtype=torch.long)
    assert classification_report(empty, empty, 3, multilabel=False) == {"acc": 0.0,
                                                                        "f1_macro": 0.0}
