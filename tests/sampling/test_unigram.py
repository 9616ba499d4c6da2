"""Unigram^0.75 noise table: the law by chi-square and by slot counts, nodes of weight 0
never drawn, an empty graph refused."""

from __future__ import annotations

import pytest
import torch
from scipy import stats

from graphflow.sampling.unigram import UnigramTable


def test_draws_follow_degree_to_the_three_quarters():
    degree = torch.tensor([0.0, 1.0, 2.0, 5.0, 10.0, 40.0])
    table = UnigramTable(degree)
    draws = table.sample(200_000, torch.Generator().manual_seed(0))
    counts = torch.bincount(draws, minlength=6).double()
    assert counts[0] == 0
    law = degree[1:].double() ** 0.75
    expected = law / law.sum() * counts.sum()
    assert stats.chisquare(counts[1:], expected).pvalue > 1e-3
    slots = torch.bincount(table.table.long(), minlength=6).double()
    assert slots[0] == 0 and int(slots.sum()) == table.size
    assert bool(((slots[1:] - law / law.sum() * table.size).abs() <= 1).all())


def test_table_counts_are_exact_to_one_slot_and_empty_graph_is_uniform():
    table = UnigramTable(torch.tensor([1.0, 3.0, 7.0]), size=1000)
    counts = torch.bincount(table.table.long(), minlength=3)
    law = torch.tensor([1.0, 3.0, 7.0]) ** 0.75
    assert int(counts.sum()) == 1000
    assert bool(((counts - law / law.sum() * 1000).abs() <= 1).all())
    flat = UnigramTable(torch.zeros(4), size=1000)
    assert torch.bincount(flat.table.long(), minlength=4).tolist() == [250, 250, 250, 250]


def test_no_nodes_is_refused():
    with pytest.raises(ValueError, match="cannot draw negatives from an empty graph"):
        UnigramTable(torch.zeros(0))
