"""Context pairs: exact sets, padding never paired, blocks equal to explicit pairs, subsampling."""

from __future__ import annotations

from collections import Counter

import pytest
import torch

from graphflow.embeddings.context_pairs import context_blocks, context_pairs, keep_probability, subsample


def block_pairs(blocks):
    g, c, j = blocks.positive.nonzero(as_tuple=True)
    return Counter(zip(blocks.centers[g, c].tolist(), blocks.context[g, j].tolist()))


def test_pairs_of_a_short_walk_with_padding():
    walks = torch.tensor([[10, 11, 12, -1, -1]])
    center, context = context_pairs(walks, 2)
    assert sorted(zip(center.tolist(), context.tolist())) == sorted(
        [(10, 11), (11, 10), (11, 12), (12, 11), (10, 12), (12, 10)])


def test_no_pair_touches_padding():
    gen = torch.Generator().manual_seed(0)
    walks = torch.randint(0, 50, (30, 12), generator=gen)
    stop = torch.randint(1, 13, (30, 1), generator=gen)
    walks[torch.arange(12)[None, :] >= stop] = -1  # ragged walks
    center, context = context_pairs(walks, 4)
    assert bool((center >= 0).all()) and bool((context >= 0).all())
    blocks = context_blocks(walks, 4, chunk=5)
    g, c, j = blocks.positive.nonzero(as_tuple=True)
    assert bool((blocks.centers[g, c] >= 0).all()) and bool((blocks.context[g, j] >= 0).all())


@pytest.mark.parametrize("chunk", [3, 5, 7, 12, 64])
@pytest.mark.parametrize("dynamic", [False, True])
def test_blocks_hold_exactly_the_explicit_pairs(chunk, dynamic):
    gen = torch.Generator().manual_seed(1)
    walks = torch.randint(0, 40, (20, 12), generator=gen)
    walks[3, 7:] = -1
    walks[5, 1:] = -1
    radius = torch.randint(1, 4, walks.shape, generator=gen) if dynamic else None
    center, context = context_pairs(walks, 3, radius)
    expected = Counter(zip(center.tolist(), context.tolist()))
    blocks = context_blocks(walks, 3, chunk, radius)
    assert block_pairs(blocks) == expected
    # Every walk position is the center of exactly one block row.
    assert Counter(blocks.centers[blocks.centers >= 0].tolist()) == \
        Counter(walks[walks >= 0].tolist())


def test_dynamic_radius_limits_each_center():
    walks = torch.tensor([[1, 2, 3, 4, 5]])
    radius = torch.tensor([[1, 1, 2, 1, 1]])
    center, context = context_pairs(walks, 2, radius)
    got = sorted(zip(center.tolist(), context.tolist()))
    assert (3, 1) in got and (3, 5) in got  # node 3 reaches two steps
    assert (1, 3) not in got and (5, 3) not in got  # the others one step only


def test_subsample_drops_closes_gaps_and_keeps_order():
    walks = torch.tensor([[0, 1, 2, 1, 3, -1], [1, 1, 1, 2, -1, -1]])
    keep = torch.tensor([1.0, 0.0, 1.0, 1.0])  # drop every 1
    out = subsample(walks, keep, torch.Generator().manual_seed(0))
    assert out.tolist() == [[0, 2, 3, -1, -1, -1], [2, -1, -1, -1, -1, -1]]
    assert torch.equal(subsample(walks, torch.ones(4)), walks)


def test_keep_probability_is_word2vec_formula():
    freq = torch.tensor([0.5, 1e-3, 1e-5, 0.0], dtype=torch.float64)
    prob = keep_probability(freq, 1e-3)
    t = 1e-3
    assert prob[0].item() == pytest.approx(((0.5 / t) ** 0.5 + 1) * t / 0.5)
    assert prob[1:].tolist() == [1.0, 1.0, 1.0]
    assert torch.equal(keep_probability(freq, 0.0), torch.ones(4, dtype=torch.float64))
