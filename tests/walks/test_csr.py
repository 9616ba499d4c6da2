"""WalkGraph: CSR layout, weights, edge multiplicities, the DGL copy, and bad node ids."""

from __future__ import annotations

import pytest
import torch

from graphflow.errors import DataError
from graphflow.walks.csr import from_edges


def test_rows_are_sorted_and_pointers_right():
    src = torch.tensor([2, 0, 0, 1, 0, 2])
    dst = torch.tensor([0, 2, 1, 2, 2, 1])
    g = from_edges(src, dst, 4, torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0, 6.0]))
    assert g.indptr.tolist() == [0, 3, 4, 6, 6]
    assert g.indices.tolist() == [1, 2, 2, 2, 0, 1]
    assert g.out_degrees().tolist() == [3, 1, 2, 0]
    assert g.cumweight.tolist() == [0.0, 3.0, 5.0, 10.0, 14.0, 15.0, 21.0]  # rows 10, 4, 7, 0
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


def test_to_dgl_keeps_edges_nodes_and_weights():
    walk = from_edges(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]), 4,
                      torch.tensor([1.0, 2.0, 3.0]))
    back = walk.to_dgl()
    assert back.num_nodes() == 4 and back.num_edges() == 3
    assert [tuple(t.tolist()) for t in back.edges()] == [(0, 1, 2), (1, 2, 0)]
    assert torch.equal(back.edata["weight"], torch.tensor([1.0, 2.0, 3.0]))
    assert "weight" not in from_edges(torch.tensor([0]), torch.tensor([1]), 2).to_dgl().edata


@pytest.mark.parametrize("src,dst,message", [
    ([0, 5], [1, 0], r"walk graph: edge source id 5 is out of range for 3 nodes "
                     r"\(ids must lie in \[0, 3\)\)"),
    ([0, 1], [1, 3], r"walk graph: edge destination id 3 is out of range for 3 nodes"),
    ([0, -1], [1, 0], r"walk graph: edge source id -1 is out of range for 3 nodes"),
])
def test_node_ids_out_of_range_are_data_errors(src, dst, message):
    with pytest.raises(DataError, match=message):
        from_edges(torch.tensor(src), torch.tensor(dst), 3)


def test_weights_must_match_the_edges():
    with pytest.raises(ValueError, match=r"from_edges: expected one weight per edge, shape "
                                         r"\(2,\), got \(1,\)"):
        from_edges(torch.tensor([0, 1]), torch.tensor([1, 0]), 2, torch.tensor([1.0]))
