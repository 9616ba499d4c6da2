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
