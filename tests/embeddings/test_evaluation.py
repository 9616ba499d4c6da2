"""Embedding evaluation: splits, penalty choice without the test set, multi-label, link AUC."""

from __future__ import annotations

import pytest
import torch

from graphflow.embeddings.evaluation import choose_l2, classify, link_auc, random_split
from graphflow.embeddings.evaluation import LogisticRegression


def clustered(n=200, classes=4, dim=8, noise=0.6, seed=0):
    gen = torch.Generator().manual_seed(seed)
    y = torch.randint(0, classes, (n,), generator=gen)
    centers = torch.randn(classes, dim, generator=gen) * 2
    return centers[y] + noise * torch.randn(n, dim, generator=gen), y


def test_random_split_is_a_seeded_partition():
    nodes = torch.arange(10, 30)
    a, b = random_split(nodes, 0.25, torch.Generator().manual_seed(0))
    assert a.numel() == 5 and b.numel() == 15
    assert sorted(torch.cat([a, b]).tolist()) == list(range(10, 30))
    again = random_split(nodes, 0.25, torch.Generator().manual_seed(0))
    assert torch.equal(a, again[0])
    with pytest.raises(ValueError, match=r"train_fraction must lie in \(0, 1\), got 1.0"):
        random_split(nodes, 1.0)


def test_classify_clustered_embeddings():
    x, y = clustered()
    train, test = random_split(torch.arange(200), 0.5, torch.Generator().manual_seed(1))
    r = classify(x, y, train, test, generator=torch.Generator().manual_seed(0))
    assert r.accuracy > 0.95 and r.micro_f1 == r.accuracy and 0.9 < r.macro_f1 <= 1.0
    assert r.train_size == 100 and r.test_size == 100


def test_macro_f1_averages_over_all_classes_as_node_classification():
    # Class 3 has no test node and (well separated) is never predicted there: it scores 0 and
    # still counts, as in graphflow.train.metrics.f1_macro (sklearn: labels = all classes).
    metrics = pytest.importorskip("sklearn.metrics")
    x, y = clustered()
    train = torch.arange(100)
    test = 100 + (y[100:] != 3).nonzero().squeeze(1)
    r = classify(x, y, train, test, l2=0.1, num_classes=4)
    pred = LogisticRegression(l2=0.1).fit(x[train].double(), y[train]).predict(x[test].double())
    assert 3 not in pred.tolist() and 3 not in y[test].tolist()
    assert r.macro_f1 == pytest.approx(metrics.f1_score(y[test], pred, labels=range(4),
                                                        average="macro", zero_division=0))
    assert r.macro_f1 <= 0.75 < metrics.f1_score(y[test], pred, average="macro")
    assert r.micro_f1 == pytest.approx(metrics.accuracy_score(y[test], pred)) == r.accuracy


def test_penalty_is_chosen_without_looking_at_the_test_nodes():
    x, y = clustered(noise=1.5)
    train, test = torch.arange(0, 100), torch.arange(100, 200)
    scrambled = y.clone()
    scrambled[test] = scrambled[test][torch.randperm(100, generator=torch.Generator().manual_seed(0))]
    gen = lambda: torch.Generator().manual_seed(3)  # noqa: E731
    assert choose_l2(x.double(), y, train, None, 4, gen()) == \
        choose_l2(x.double(), scrambled, train, None, 4, gen())
    val = torch.arange(100, 150)
    assert classify(x, y, train, test, val=val, generator=gen()).l2 == \
        choose_l2(x.double(), y, train, val, 4, gen())


def test_multilabel_uses_top_k():
    x, y = clustered(classes=3)
    labels = torch.nn.functional.one_hot(y, 3).float()
    labels[::2, (y[::2] + 1) % 3] = 1.0  # half the nodes have a second label
    train, test = torch.arange(0, 100), torch.arange(100, 200)
    r = classify(x, labels, train, test, l2=0.1)
    assert 0.5 < r.micro_f1 <= 1.0 and r.macro_f1 > 0.4


def test_link_auc_orders_close_pairs_first():
    emb = torch.tensor([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.1, 0.9]])
    positive = torch.tensor([[0, 2], [1, 3]])
    negative = torch.tensor([[0, 1], [2, 3]])
    assert link_auc(emb, positive, negative) == 1.0
    assert link_auc(emb, negative, positive) == 0.0
