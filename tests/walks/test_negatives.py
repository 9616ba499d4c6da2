"""Unigram^0.75 noise table: the law by chi-square, nodes of weight 0 never drawn."""

from __future__ import annotations

import torch
from scipy import stats

from graphflow.walks.negatives import UnigramTable


def test_draws_follow_degree_to_the_three_quarters():
    degree = torch.tensor([0.0, 1.0, 2.0, 5.0, 10.0, 40.0])
    table = UnigramTable(degree)
    draws = table.sample(200_000, torch.Generator().manual_seed(0))
    counts = torch.bincount(draws, minlength=6).double()
    assert counts[0] == 0
    law = degree[1:].double() ** 0.75
    expected = law / law.sum() * counts.sum()
    assert stats.chisquare(counts[1:], expected).pvalue > 1e-3
    assert torch.allclose(table.probs[1:].double(), law / law.sum(), atol=1e-6)


def test_table_counts_are_exact_to_one_slot_and_empty_graph_is_uniform():
    table = UnigramTable(torch.tensor([1.0, 3.0, 7.0]), size=1000)
    counts = torch.bincount(table.table.long(), minlength=3)
    law = torch.tensor([1.0, 3.0, 7.0]) ** 0.75
    assert int(counts.sum()) == 1000
    assert bool(((counts - law / law.sum() * 1000).abs() <= 1).all())
    flat = UnigramTable(torch.zeros(4))
    assert torch.allclose(flat.probs, torch.full((4,), 0.25))
