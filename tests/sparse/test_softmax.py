import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.sparse import Adjacency, edge_softmax

# Node 3 has no in-edges; node 1 has three (one duplicate).
SRC = torch.tensor([0, 0, 2, 3, 1, 3, 2])
DST = torch.tensor([1, 1, 1, 0, 2, 2, 0])


@pytest.mark.parametrize("shape", [(), (3,), (2, 1)])
def test_matches_dgl_edge_softmax_and_its_gradient(shape):
    g = dgl.graph((SRC, DST), num_nodes=4)
    adj = Adjacency.from_graph(g)
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn((7,) + shape, generator=gen, dtype=torch.float64) * 3
    s1, s2 = scores.clone().requires_grad_(), scores.clone().requires_grad_()
    out = edge_softmax(adj, s1[adj.eids])  # CSR order
    ref = dgl.nn.functional.edge_softmax(g, s2)  # edge-id order
    torch.testing.assert_close(out, ref[adj.eids])
    up = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    (out * up[adj.eids]).sum().backward()
    (ref * up).sum().backward()
    torch.testing.assert_close(s1.grad, s2.grad)


def test_rows_sum_to_one_and_are_stable_for_large_scores():
    adj = Adjacency.from_edges(SRC, DST, 4, 4)
    scores = torch.tensor([1000.0, 999.0, 0.0, -1000.0, 5.0, 5.0, 3.0])[:, None]
    out = edge_softmax(adj, scores)
    assert torch.isfinite(out).all()
    sums = torch.zeros(4, 1).index_add_(0, adj.row_index, out)
    torch.testing.assert_close(sums.flatten(), torch.tensor([1.0, 1.0, 1.0, 0.0]))


def test_empty_graph_and_bad_shape():
    none = torch.zeros(0, dtype=torch.int64)
    empty = Adjacency.from_edges(none, none, 2, 2)
    assert edge_softmax(empty, torch.zeros(0, 2)).shape == (0, 2)
    adj = Adjacency.from_edges(SRC, DST, 4, 4)
    with pytest.raises(DataError, match=r"edge_softmax needs \(7, \.\.\.\) scores in CSR order, "
                                        r"got \(6,\)"):
        edge_softmax(adj, torch.zeros(6))
