"""AUC and AP against scikit-learn; MRR and Hits@K on hand-worked ranks (OGB's tie rule)."""

from __future__ import annotations

import pytest
import torch

from graphflow.train.metrics import average_precision, hits_at, mrr, ranks, roc_auc

metrics = pytest.importorskip("sklearn.metrics")


@pytest.mark.parametrize("ties", [False, True])
def test_auc_and_ap_match_sklearn(ties):
    gen = torch.Generator().manual_seed(2)
    if ties:  # few distinct scores: many ties across the classes
        pos = torch.randint(0, 10, (300,), generator=gen).double() + 2
        neg = torch.randint(0, 10, (500,), generator=gen).double()
    else:
        pos = torch.randn(300, generator=gen, dtype=torch.float64) + 1
        neg = torch.randn(500, generator=gen, dtype=torch.float64)
    y = torch.cat([torch.ones(300), torch.zeros(500)]).numpy()
    s = torch.cat([pos, neg]).numpy()
    assert roc_auc(pos, neg) == pytest.approx(metrics.roc_auc_score(y, s), abs=1e-12)
    assert average_precision(pos, neg) == pytest.approx(
        metrics.average_precision_score(y, s), abs=1e-12)


def test_auc_and_ap_edge_cases():
    assert roc_auc(torch.tensor([2.0]), torch.tensor([1.0])) == 1.0
    assert roc_auc(torch.tensor([1.0]), torch.tensor([1.0])) == 0.5  # a tie counts half
    assert average_precision(torch.tensor([2.0, 1.0]), torch.tensor([0.0])) == 1.0
    # Positive and negative tied at the top: one threshold, precision 1/2 at recall 1.
    assert average_precision(torch.tensor([1.0]), torch.tensor([1.0])) == 0.5
    for fn in (roc_auc, average_precision):
        with pytest.raises(ValueError, match="at least one positive and one negative"):
            fn(torch.tensor([]), torch.tensor([1.0]))


def test_mrr_and_hits_on_a_hand_worked_case():
    pos = torch.tensor([0.9, 0.5, 0.1, 0.3])
    neg = torch.tensor([[0.1, 0.2, 0.3],    # none above: rank 1
                        [0.6, 0.7, 0.1],    # two above: rank 3
                        [0.2, 0.3, 0.4],    # all above: rank 4
                        [0.3, 0.3, 0.0]])   # two tied: 1 + (0 + 2) / 2 = rank 2
    r = ranks(pos, neg)
    assert r.tolist() == [1.0, 3.0, 4.0, 2.0]
    assert mrr(r) == pytest.approx((1 + 1 / 3 + 1 / 4 + 1 / 2) / 4)
    assert hits_at(r, 1) == 0.25
    assert hits_at(r, 2) == 0.5
    assert hits_at(r, 3) == 0.75
    assert hits_at(r, 10) == 1.0
    # Tied with every negative: neither first nor last, 1 + K / 2.
    assert ranks(torch.tensor([1.0]), torch.ones(1, 4)).item() == 3.0
    assert mrr(torch.tensor([])) == 0.0 and hits_at(torch.tensor([]), 1) == 0.0
    with pytest.raises(ValueError, match=r"\(P, K\) negative"):
        ranks(pos, neg[:2])
