"""Relabelling sampled sources: destinations first, each source once, both code paths equal."""

from __future__ import annotations

import torch

from graphflow.compat.dgl import dgl
from graphflow.sampling import relabel as relabel_mod
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.relabel import relabel


def empty_csc(num_nodes: int) -> CSCGraph:
    return CSCGraph.from_dgl(dgl.graph(([], []), num_nodes=num_nodes))


def test_destinations_are_the_prefix_and_local_ids_map_back():
    csc = empty_csc(100)
    dst = torch.tensor([42, 7, 99])
    nbr = torch.tensor([7, 55, 3, 55, 42, 0, 3])
    src_nodes, local = relabel(csc, dst, nbr)
    assert src_nodes.tolist() == [42, 7, 99, 0, 3, 55]  # new sources in id order
    assert torch.equal(src_nodes[local], nbr)
    assert not csc.scratch("flags", torch.bool, 0).any(), "flags must be restored"


def test_sort_path_and_scan_path_agree(monkeypatch):
    gen = torch.Generator().manual_seed(0)
    csc = empty_csc(5000)
    dst = torch.randperm(5000, generator=gen)[:300]
    nbr = torch.randint(0, 5000, (2000,), generator=gen)
    monkeypatch.setattr(relabel_mod, "SCAN_RATIO", 10**9)  # always the flags scan
    a = relabel(csc, dst, nbr)
    monkeypatch.setattr(relabel_mod, "SCAN_RATIO", 0)  # always the unique() path
    b = relabel(csc, dst, nbr)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])
    assert torch.equal(a[0][a[1]], nbr)
    assert a[0].unique().numel() == a[0].numel()


def test_no_neighbors_gives_only_destinations():
    csc = empty_csc(10)
    src_nodes, local = relabel(csc, torch.tensor([3, 1]), torch.zeros(0, dtype=torch.int64))
    assert src_nodes.tolist() == [3, 1] and local.numel() == 0


def test_the_table_is_int32_below_two_to_the_31_nodes_and_local_ids_are_int64():
    csc = empty_csc(100)
    src_nodes, local = relabel(csc, torch.tensor([9, 4]), torch.tensor([4, 70, 70, 12]))
    assert local.dtype == torch.int64 and src_nodes.dtype == torch.int64
    assert local.tolist() == [1, 3, 3, 2]
    assert csc.scratch("table", torch.int32, -1).dtype == torch.int32  # the one relabel made
    assert relabel_mod.index_dtype(2**31 - 1) == torch.int32
    assert relabel_mod.index_dtype(2**31) == torch.int64
