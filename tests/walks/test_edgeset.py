"""EdgeSet: the vectorised hash set answers like a Python dict, including long probe chains."""

from __future__ import annotations

import torch

from graphflow.walks.edgeset import EdgeSet


def test_lookup_and_contains_agree_with_a_dict():
    gen = torch.Generator().manual_seed(0)
    keys = torch.unique(torch.randint(0, 10**12, (20_000,), generator=gen))
    values = torch.rand(keys.numel(), generator=gen)
    table = EdgeSet(keys, values)
    absent = torch.randint(0, 10**12, (20_000,), generator=gen)
    absent = absent[~torch.isin(absent, keys)]
    query = torch.cat([keys, absent])[torch.randperm(keys.numel() + absent.numel(), generator=gen)]
    found, value = table.lookup(query)
    truth = dict(zip(keys.tolist(), values.tolist()))
    assert found.tolist() == [k in truth for k in query.tolist()]
    expected = torch.tensor([truth.get(k, 0.0) for k in query.tolist()])
    assert torch.equal(value, expected)
    assert torch.equal(table.contains(query), found)


def test_keys_that_collide_still_resolve():
    probe = EdgeSet(torch.arange(8))  # 8 keys -> 32 slots (load <= 0.25)
    assert probe.bits == 5
    home = probe._hash(torch.arange(20000))
    same = (home == home[0]).nonzero().squeeze(1)  # keys sharing one home slot
    members, strangers = same[:12], same[12:20]
    table = EdgeSet(members)
    assert table.max_probe == 12  # one chain of 12: two probe windows of 8
    assert bool(table.contains(members).all())
    assert not bool(table.contains(strangers).any())
    found, value = table.lookup(torch.cat([strangers[:2], members[-1:]]))
    assert found.tolist() == [False, False, True] and value.tolist() == [0.0, 0.0, 1.0]


def test_empty_set_and_tiny_table():
    empty = EdgeSet(torch.zeros(0, dtype=torch.int64))
    assert empty.contains(torch.tensor([0, 5, 7])).tolist() == [False, False, False]
    full = EdgeSet(torch.arange(16))  # load factor 0.25 at 64 slots
    assert bool(full.contains(torch.arange(16)).all())
    assert not bool(full.contains(torch.arange(16, 100)).any())
