"""WalkGraph: CSR layout, weights, edge multiplicities, and clear errors for bad weights."""

from __future__ import annotations

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.walks.csr import from_dgl, from_edges


def test_rows_are_sorted_and_pointers_right():
    src = torch.tensor([2, 0, 0, 1, 0, 2])
    dst = torch.tensor([0, 2, 1, 2, 2, 1])
    g = from_edges(src, dst, 4, torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert g.indptr.tolist() == [0, 3, 4, 6, 6]
    assert g.indices.tolist() == [1, 2, 2, 2, 0, 1]
    assert g.out_degrees().tolist() == [3, 1, 2, 0]
    assert g.out_strength().tolist() == [10.0, 4.0, 7.0, 0.0]
    assert g.in_strength().tolist() == [1.0, 9.0, 11.0, 0.0]
    s, d, w = g.edge_list()
    assert sorted(zip(s.tolist(), d.tolist(), w.tolist())) == sorted(
        zip(src.tolist(), dst.tolist(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))


def test_edge_set_holds_multiplicities_and_weight_sums():
    src, dst = torch.tensor([0, 0, 1]), torch.tensor([1, 1, 0])
    unweighted = from_edges(src, dst, 2).with_edge_set()
    found, value = unweighted.edges.lookup(torch.tensor([0 * 2 + 1, 1 * 2 + 0, 1 * 2 + 1]))
    assert found.tolist() == [True, True, False]
    assert value.tolist() == [2.0, 1.0, 0.0]
    weighted = from_edges(src, dst, 2, torch.tensor([0.5, 2.0, 1.0])).with_edge_set()
    assert weighted.edges.lookup(torch.tensor([1]))[1].tolist() == [2.5]


def test_from_dgl_and_back():
    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])), num_nodes=4)
    g.edata["w"] = torch.tensor([[1.0], [2.0], [3.0]])
    walk = from_dgl(g, "w")
    assert walk.num_nodes == 4 and walk.weighted
    back = walk.to_dgl()
    assert back.num_edges() == 3 and torch.equal(back.edata["weight"], torch.tensor([1.0, 2.0, 3.0]))


def test_missing_weight_names_the_edge_data():
    g = dgl.graph((torch.tensor([0]), torch.tensor([1])))
    g.edata["score"] = torch.ones(1)
    with pytest.raises(DataError, match=r'edge data "weight" not found .*edge data: score'):
        from_dgl(g, "weight")


@pytest.mark.parametrize("bad,message", [
    (torch.tensor([1.0, -2.0]), r'edata\["w"\]: edge weights must be >= 0 .*1 negative .*edge 1'),
    (torch.tensor([float("nan"), 1.0]), r'edata\["w"\]: edge weights must be finite.*edge 0'),
    (torch.tensor([1.0]), r'edata\["w"\]: expected one weight per edge, shape \(2,\)'),
])
def test_bad_weights_are_data_errors(bad, message):
    with pytest.raises(DataError, match=message):
        from_edges(torch.tensor([0, 1]), torch.tensor([1, 0]), 2, bad, where='edata["w"]')
