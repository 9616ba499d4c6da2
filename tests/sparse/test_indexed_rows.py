"""IndexedRows: rows of a feature table read in place by the first layer's SpMM."""

from __future__ import annotations

import pytest
import torch

from graphflow.errors import DataError, DeviceError
from graphflow.nn.gcn import GCNConv
from graphflow.nn.sage import SAGEConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency, spmm, spmm_cat
from graphflow.sparse.features import dropout, linear, matmul, to_dense
from graphflow.sparse.indexed_rows import IndexedRows, materialize


def case(seed: int = 0, num_src: int = 20, num_dst: int = 8, edges: int = 60, feats: int = 6):
    g = torch.Generator().manual_seed(seed)
    table = torch.randn(50, feats, generator=g)
    index = torch.randperm(50, generator=g)[:num_src]  # (num_src,) rows of the table
    src = torch.randint(0, num_src, (edges,), generator=g)
    dst = torch.randint(0, num_dst, (edges,), generator=g)
    return table, index, Adjacency.from_edges(src, dst, num_src, num_dst), g


def test_tensor_facts_slicing_and_materialize():
    table, index, _, _ = case()
    x = IndexedRows(table, index)
    assert x.shape == (20, 6) and x.dim() == 2 and len(x) == 20
    assert x.dtype == table.dtype and x.device == table.device
    head = x[:5]
    assert isinstance(head, IndexedRows) and torch.equal(head.materialize(), table[index[:5]])
    assert torch.equal(x.to(torch.float64), table[index].double())
    assert torch.equal(materialize(x), table[index]) and materialize(table) is table
    with pytest.raises(TypeError, match="call materialize"):
        x[torch.tensor([0, 1])]
    with pytest.raises(DataError, match="2-D float table"):
        IndexedRows(torch.arange(6), index)
    with pytest.raises(DataError, match="1-D index"):
        IndexedRows(table, index.view(4, 5))


@pytest.mark.parametrize("reduce", ["sum", "mean"])
@pytest.mark.parametrize("weighted", [False, True])
def test_spmm_on_rows_is_bitwise_the_spmm_on_the_gathered_rows(reduce, weighted):
    table, index, adj, g = case()
    values = torch.rand(adj.nnz, generator=g) if weighted else None
    x, dense = IndexedRows(table, index), table[index]
    assert torch.equal(spmm(adj, x, values, reduce), spmm(adj, dense, values, reduce))
    assert torch.equal(spmm_cat(adj, x, values, reduce), spmm_cat(adj, dense, values, reduce))


def test_a_table_that_needs_a_gradient_gets_it_through_the_gather():
    table, index, adj, _ = case()
    t1, t2 = table.clone().requires_grad_(), table.clone().requires_grad_()
    spmm(adj, IndexedRows(t1, index), reduce="mean").square().sum().backward()
    spmm(adj, t2[index], reduce="mean").square().sum().backward()
    torch.testing.assert_close(t1.grad, t2.grad)


def test_row_count_and_device_mismatches_are_one_line_errors():
    table, index, adj, _ = case()
    with pytest.raises(DataError, match="features have 19 rows but the adjacency has 20"):
        spmm(adj, IndexedRows(table, index[:19]))
    elsewhere = IndexedRows(table.to("meta"), index.to("meta"))  # any device but the CPU
    with pytest.raises(DeviceError, match="features are on meta but the adjacency is on cpu"):
        spmm(adj, elsewhere)


def test_feature_helpers_gather_when_they_must():
    table, index, _, _ = case()
    x = IndexedRows(table, index)
    w = torch.randn(3, 6)
    assert torch.equal(linear(x, w), torch.nn.functional.linear(table[index], w))
    assert torch.equal(matmul(x, w.t()), table[index] @ w.t())
    assert torch.equal(to_dense(x), table[index])
    assert dropout(x, 0.5, training=False) is x and dropout(x, 0.0, training=True) is x
    dropped = dropout(x, 0.5, training=True)
    assert isinstance(dropped, torch.Tensor) and dropped.shape == (20, 6)


@pytest.mark.parametrize("out_dim", [9, 3])  # aggregate first / project first (in 6 > out 3)
def test_sage_layer_on_rows_equals_it_on_the_gathered_rows(out_dim):
    table, index, adj, _ = case()
    layer = SAGEConv(6, out_dim)
    grads = []
    for x in (IndexedRows(table, index), table[index]):
        layer.zero_grad()
        out = layer(adj, x)
        out.square().sum().backward()
        grads.append((out.detach(), [p.grad.clone() for p in layer.parameters()]))
    assert torch.equal(grads[0][0], grads[1][0])
    for a, b in zip(grads[0][1], grads[1][1]):
        assert torch.equal(a, b)


def test_stack_takes_rows_only_when_its_first_layer_does():
    table, index, adj, _ = case(num_dst=20)  # square: two layers on the same adjacency
    torch.manual_seed(0)
    sage = GNNStack([SAGEConv(6, 8), SAGEConv(8, 3)], [6, 8, 3], dropout=0.0)
    gcn = GNNStack([GCNConv(6, 8), GCNConv(8, 3)], [6, 8, 3], dropout=0.0)
    assert sage.accepts_rows and not gcn.accepts_rows
    for stack in (sage, gcn):  # the GCN stack gathers first; both equal the dense forward
        assert torch.equal(stack([adj, adj], IndexedRows(table, index)),
                           stack([adj, adj], table[index]))
