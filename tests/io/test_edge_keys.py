"""Pair keys and first occurrences: the one dedup shared by loading, transforms and hold-out."""

import torch

from graphflow.io.edge_keys import first_occurrences, first_occurrences_with_slots, undirected_keys


def test_undirected_keys_ignore_direction():
    src, dst = torch.tensor([0, 2, 1, 3]), torch.tensor([2, 0, 1, 4])
    assert undirected_keys(src, dst, 5).tolist() == [2, 2, 6, 19]


def test_first_occurrences_keep_input_order_and_map_every_element():
    key = torch.tensor([7, 3, 7, 9, 3, 3, 1])
    assert first_occurrences(key).tolist() == [0, 1, 3, 6]
    keep, slot = first_occurrences_with_slots(key)
    assert keep.tolist() == [0, 1, 3, 6]
    assert slot.tolist() == [0, 1, 0, 2, 1, 1, 3]
    assert torch.equal(key[keep[slot]], key)


def test_first_occurrences_of_nothing():
    keep, slot = first_occurrences_with_slots(torch.zeros(0, dtype=torch.int64))
    assert keep.tolist() == [] and slot.tolist() == []
    assert first_occurrences(torch.zeros(0, dtype=torch.int64)).tolist() == []
