"""Edge hold-out: undirected pairs removed both ways, nobody isolated, non-edges are non-edges."""

from __future__ import annotations

import pytest
import torch

from graphflow.io.synthetic import sbm
from graphflow.walks.holdout import hold_out_edges, sample_non_edges


def test_holdout_removes_whole_pairs_and_isolates_nobody():
    g = sbm(200, 2, 0, p_in=0.05, p_out=0.01, seed=0)
    w = torch.arange(g.src.numel()).float()
    split = hold_out_edges(g.src, g.dst, 200, w, 0.3, torch.Generator().manual_seed(0))
    pairs = {tuple(p) for p in split.pairs.t().tolist()}
    assert all(u < v for u, v in pairs)
    undirected = g.src.numel() // 2
    assert 0.2 * undirected < len(pairs) <= 0.3 * undirected + 1
    kept = set(zip(split.src.tolist(), split.dst.tolist()))
    assert not any((u, v) in kept or (v, u) in kept for u, v in pairs)
    assert len(kept) + 2 * len(pairs) == g.src.numel()
    degree_before = torch.bincount(g.src, minlength=200) > 0
    degree_after = torch.bincount(split.src, minlength=200) > 0
    assert torch.equal(degree_before, degree_after)
    # Weights travel with the edges that stay.
    index = {(s, d): i for i, (s, d) in enumerate(zip(g.src.tolist(), g.dst.tolist()))}
    assert split.weight.tolist() == [float(index[e]) for e in zip(split.src.tolist(),
                                                                 split.dst.tolist())]


def test_holdout_rejects_bad_fractions():
    with pytest.raises(ValueError, match=r"must lie in \(0, 1\)"):
        hold_out_edges(torch.tensor([0]), torch.tensor([1]), 2, None, 1.0)


def test_non_edges_are_distinct_and_not_edges():
    g = sbm(100, 2, 0, p_in=0.1, p_out=0.01, seed=1)
    neg = sample_non_edges(g.src, g.dst, 100, 500, torch.Generator().manual_seed(0))
    assert neg.shape == (2, 500)
    pairs = [tuple(p) for p in neg.t().tolist()]
    edges = set(zip(g.src.tolist(), g.dst.tolist()))
    assert len(set(pairs)) == 500 and all(u < v for u, v in pairs)
    assert not any((u, v) in edges for u, v in pairs)


def test_too_many_non_edges_is_an_error():
    src, dst = torch.tensor([0, 1, 1, 2, 0, 2]), torch.tensor([1, 0, 2, 1, 2, 0])
    with pytest.raises(ValueError, match="only 0"):
        sample_non_edges(src, dst, 3, 1)
