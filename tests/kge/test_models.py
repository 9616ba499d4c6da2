"""Every model's 1-N scores agree with its triple scores; gradients stay sparse."""

from __future__ import annotations

import pytest
import torch

from graphflow.kge.models import MODELS


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("reciprocal", [False, True])
def test_one_to_n_matches_triples(name, reciprocal):
    torch.manual_seed(0)
    model = MODELS[name](7, 3, 4, reciprocal=reciprocal, gamma=6.0)
    h, r = torch.tensor([0, 3, 6]), torch.tensor([0, 1, 2])
    every = torch.arange(7)
    tails = model.score_t(h, r)
    assert tails.shape == (3, 7)
    assert torch.allclose(tails, model.score_hrt(h[:, None], r[:, None], every[None]),
                          atol=1e-5)
    if not reciprocal:
        heads = model.score_h(r, h)
        assert torch.allclose(heads, model.score_hrt(every[None], r[:, None], h[:, None]),
                              atol=1e-5)
    else:
        inv = model.score_h(r, h)  # scored as (t, r + R, ?)
        assert torch.allclose(inv, model.score_hrt(h[:, None], r[:, None] + 3, every[None]),
                              atol=1e-5)


@pytest.mark.parametrize("name", sorted(MODELS))
@pytest.mark.parametrize("sides", ["mixed", "heads", "tails"])
def test_corrupted_triples_score_and_train_as_the_triples_they_stand_for(name, sides):
    """score_negatives (one lookup, one query per triple against its own candidates) equals
    scoring the triples and every corrupted triple (h', r, t') itself, in value and in every
    embedding's gradient."""
    torch.manual_seed(0)
    h, r, t = torch.tensor([0, 3, 6, 2]), torch.tensor([0, 1, 2, 1]), torch.tensor([5, 1, 4, 2])
    cand = torch.randint(0, 9, (4, 5))
    head = {"mixed": torch.tensor([True, False, False, True]),
            "heads": torch.ones(4, dtype=torch.bool), "tails": torch.zeros(4, dtype=torch.bool)}[sides]
    grads = []
    for fast in (True, False):
        model = MODELS[name](9, 3, 4, gamma=6.0, sparse=False)
        torch.manual_seed(1)
        model.reset_parameters()
        if fast:
            pos, neg = model.score_negatives(h, r, t, cand, head)
        else:
            hn = torch.where(head[:, None], cand, h[:, None])
            tn = torch.where(head[:, None], t[:, None], cand)
            pos, neg = model.score_hrt(h, r, t), model.score_hrt(hn, r[:, None], tn)
        ((neg * torch.linspace(-1, 1, 20).view(4, 5)).sum() - (pos * pos).sum()).backward()
        grads.append((pos.detach(), neg.detach(), model.entity.weight.grad,
                      model.relation.weight.grad))
    for fast, slow in zip(*grads):
        assert torch.allclose(fast, slow, atol=1e-5)


def test_sparse_gradients_touch_only_used_rows():
    model = MODELS["distmult"](50, 2, 8)
    model.score_hrt(torch.tensor([1, 2]), torch.tensor([0, 0]), torch.tensor([3, 4])).sum().backward()
    grad = model.entity.weight.grad
    assert grad.is_sparse and set(grad.coalesce().indices()[0].tolist()) == {1, 2, 3, 4}


def test_rotate_initialisation():
    model = MODELS["rotate"](10, 3, 5, gamma=6.0)
    bound = (6.0 + 2.0) / 5
    assert model.entity.weight.shape == (10, 10) and model.relation.weight.shape == (3, 5)
    assert float(model.entity.weight.detach().abs().max()) <= bound
