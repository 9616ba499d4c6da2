"""The one objective module: every kind's loss against torch's functions written out by hand,
missing targets masked, predictions, figures and the monitored score."""

import pytest
import torch
import torch.nn.functional as F

from graphflow.train import metrics
from graphflow.train.objective import Objective, ScoredPairs
from graphflow.train.task import lower_is_better

NAN = float("nan")
GEN = torch.Generator().manual_seed(0)
SCORES = torch.randn(6, 3, generator=GEN)


def test_classes_cross_entropy_weights_predictions_and_figures():
    y = torch.tensor([0, 1, 2, 0, 1, 1])
    w = torch.tensor([1.0, 0.5, 2.0])
    logp = SCORES.log_softmax(1)
    by_hand = -(w[y] * logp[torch.arange(6), y]).sum() / w[y].sum()
    objective = Objective("classes", 3, weight=w)
    torch.testing.assert_close(objective.loss(SCORES, y), by_hand)
    assert torch.equal(objective.predict(SCORES), SCORES.argmax(1))
    report = objective.report(SCORES, y)
    assert set(report) == set(objective.figures) == {"acc", "f1_macro"}
    assert report["acc"] == objective.accuracy(SCORES, y) == \
        float((SCORES.argmax(1) == y).float().mean())
    assert objective.score_name == "acc"
    assert not lower_is_better(f"val_{objective.score_name}")  # the monitor rule maximises it
    # two classes add the ROC AUC of the margin of class 1
    two = Objective("classes", 2)
    y2 = torch.tensor([0, 1, 0, 1, 1, 0])
    margin = SCORES[:, 1] - SCORES[:, 0]
    assert two.report(SCORES[:, :2], y2)["roc_auc"] == \
        metrics.roc_auc(margin[y2 == 1], margin[y2 == 0])


@pytest.mark.parametrize("kind", ["multilabel", "binary"])
def test_masked_binary_cross_entropy_leaves_missing_targets_out(kind):
    y = torch.tensor([[1.0, 0.0, NAN], [0.0, NAN, 1.0], [1.0, 1.0, 0.0],
                      [NAN, 0.0, 0.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]])
    pos = torch.tensor([2.0, 1.0, 0.5])
    p = torch.sigmoid(SCORES)
    terms = -(pos * y * p.log() + (1 - y) * (1 - p).log())  # (6, 3), NaN where missing
    objective = Objective(kind, 3, weight=pos)
    torch.testing.assert_close(objective.loss(SCORES, y), terms[~torch.isnan(y)].mean())
    # without missing entries: torch's function on the whole matrix
    full = torch.nan_to_num(y, nan=0.0)
    torch.testing.assert_close(objective.loss(SCORES, full),
                               F.binary_cross_entropy_with_logits(SCORES, full, pos_weight=pos))
    assert torch.equal(objective.predict(SCORES), (SCORES > 0).float())
    assert set(objective.report(SCORES, full)) == set(objective.figures)
    assert objective.score_name == ("f1_micro" if kind == "multilabel" else "roc_auc")
    # no present target in a batch: zero loss that still back-propagates
    s = SCORES.clone().requires_grad_()
    loss = objective.loss(s, torch.full_like(y, NAN))
    loss.backward()
    assert float(loss.detach()) == 0.0 and torch.equal(s.grad, torch.zeros_like(s))


def test_binary_accuracy_counts_the_present_entries():
    y = torch.tensor([[1.0, NAN], [0.0, 1.0]])
    s = torch.tensor([[2.0, 5.0], [1.0, 1.0]])  # right, (missing), wrong, right
    assert Objective("binary", 2).accuracy(s, y) == pytest.approx(2 / 3)


@pytest.mark.parametrize("loss", ["mse", "l1"])
def test_regression_with_missing_targets(loss):
    y = torch.tensor([[1.0, NAN, 0.5], [NAN, 2.0, 1.0], [0.0, 1.0, NAN],
                      [1.0, 1.0, 1.0], [2.0, NAN, 0.0], [0.5, 0.5, 0.5]])
    present = ~torch.isnan(y)
    err = (SCORES - y)[present]
    by_hand = err.square().mean() if loss == "mse" else err.abs().mean()
    objective = Objective("regression", 3, loss)
    torch.testing.assert_close(objective.loss(SCORES, y), by_hand)
    report = objective.report(SCORES, y)
    assert report["mae"] == pytest.approx(float(err.abs().mean()))
    assert report["rmse"] == pytest.approx(float(err.square().mean().sqrt()))
    assert torch.equal(objective.predict(SCORES), SCORES)
    assert objective.score_name == "mae"
    assert lower_is_better(f"val_{objective.score_name}")  # the monitor rule minimises it


def test_autocast_scores_give_a_float32_loss():
    y = torch.tensor([0, 1, 2, 0, 1, 1])
    half = SCORES.bfloat16()
    got = Objective("classes", 3).loss(half, y)
    assert got.dtype == torch.float32
    torch.testing.assert_close(got, F.cross_entropy(half.float(), y))


def test_scored_pairs_bce_and_margin():
    pos = torch.tensor([2.0, -0.5, 1.0])
    neg = torch.tensor([-1.0, 0.5, 0.0, -2.0, 1.5, -0.5])  # k = 2, source-major
    bce = -(F.logsigmoid(pos).mean() + F.logsigmoid(-neg).mean())
    torch.testing.assert_close(ScoredPairs("bce").loss(pos, neg, 2), bce)
    bpr = -F.logsigmoid(pos.unsqueeze(1) - neg.view(3, 2)).mean()
    torch.testing.assert_close(ScoredPairs("bpr").loss(pos, neg, 2), bpr)
    report = ScoredPairs.report(pos, neg)
    assert report["auc"] == metrics.roc_auc(pos, neg)
    assert report["ap"] == metrics.average_precision(pos, neg)
    torch.testing.assert_close(ScoredPairs.predict(pos), torch.sigmoid(pos))
    assert ScoredPairs(monitor="mrr").score_name == "mrr"


def test_node_labels_pick_their_kind():
    assert Objective.for_nodes(4, False).kind == "classes"
    multi = Objective.for_nodes(4, True)
    assert multi.kind == "multilabel" and multi.multilabel and multi.num_classes == 4
