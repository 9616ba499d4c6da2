import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError, DeviceError
from graphflow.sampling.block import Block
from graphflow.sparse import Adjacency

# 5 nodes; node 4 has no in-edges, node 3 no out-edges; (0 -> 1) appears twice.
SRC = torch.tensor([0, 1, 2, 0, 2, 0, 4, 1])
DST = torch.tensor([1, 2, 0, 2, 3, 1, 3, 0])


def dense(adj: Adjacency, values: torch.Tensor | None = None) -> torch.Tensor:
    """(num_dst, num_src) dense matrix of a CSR, duplicates summed."""
    v = adj.ones(torch.float64) if values is None else values.double()
    out = torch.zeros(adj.num_dst, adj.num_src, dtype=torch.float64)
    return out.index_put((adj.row_index, adj.indices), v, accumulate=True)


def test_from_edges_builds_sorted_csr_with_edge_ids():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    assert (adj.num_src, adj.num_dst, adj.nnz) == (5, 5, 8)
    assert adj.indptr.tolist() == [0, 2, 4, 6, 8, 8]
    assert adj.indices.tolist() == [1, 2, 0, 0, 0, 1, 2, 4]
    # eids point back at the input edges, so (src, dst)[eids] is the CSR in COO form.
    assert torch.equal(SRC[adj.eids], adj.indices)
    assert torch.equal(DST[adj.eids], adj.row_index)
    assert adj.values is None and adj.device == torch.device("cpu")
    assert adj.in_degrees().tolist() == [2, 2, 2, 2, 0]
    assert adj.out_degrees().tolist() == [3, 2, 2, 0, 1]


def test_values_follow_csr_order():
    w = torch.arange(8, dtype=torch.float32)
    adj = Adjacency.from_edges(SRC, DST, 5, 5, values=w)
    assert torch.equal(adj.values, w[adj.eids])


def test_transposed_is_csr_of_the_transpose():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    t = adj.transposed()
    assert t is adj.transposed()  # built once
    rows = torch.repeat_interleave(torch.arange(5), t.indptr[1:] - t.indptr[:-1])
    tdense = torch.zeros(5, 5, dtype=torch.float64).index_put(
        (rows, t.indices), adj.ones(torch.float64)[t.perm], accumulate=True)
    assert torch.equal(tdense, dense(adj).T)
    assert torch.equal(adj.indices[t.perm], rows)


@pytest.mark.parametrize("num_cols", [1, 700, 1 << 16, (1 << 16) + 1, 200_000])
def test_group_by_column_is_the_stable_sort(num_cols):
    """The uint16 radix path (<= 2^16 columns) and torch's sort give the same permutation."""
    from graphflow.sparse.adjacency import group_by_column
    ids = torch.randint(0, num_cols, (30_000,), generator=torch.Generator().manual_seed(num_cols))
    ids[:3] = num_cols - 1  # the largest id, repeated: ties keep their order
    perm = group_by_column(ids, num_cols)
    assert perm.dtype == torch.int64
    assert torch.equal(perm, torch.sort(ids, stable=True).indices)
    assert group_by_column(ids[:0], num_cols).numel() == 0


def test_norms_follow_dgl_graphconv_semantics():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    a = dense(adj)
    din = a.sum(1).clamp(min=1)
    dout = a.sum(0).clamp(min=1)
    sym = din.rsqrt()[:, None] * a * dout.rsqrt()[None, :]
    assert torch.allclose(dense(adj, adj.norm("sym", dtype=torch.float64)), sym)
    assert torch.allclose(dense(adj, adj.norm("row", dtype=torch.float64)), a / din[:, None])
    assert torch.equal(dense(adj, adj.norm("none")), a)
    sym_in = din.rsqrt()[:, None] * a * din.rsqrt()[None, :]
    assert torch.allclose(dense(adj, adj.norm("sym_in", dtype=torch.float64)), sym_in)
    assert adj.norm("sym") is adj.norm("sym")  # cached
    assert adj.norm("sym").dtype == torch.float32


def test_norm_multiplies_values_or_weight():
    w = torch.rand(8)
    adj = Adjacency.from_edges(SRC, DST, 5, 5, values=w)
    plain = Adjacency.from_edges(SRC, DST, 5, 5)
    assert torch.allclose(adj.norm("sym"), plain.norm("sym") * w[adj.eids])
    ew = torch.rand(8, requires_grad=True)
    out = plain.norm("row", ew)
    assert out.requires_grad and torch.allclose(out, plain.norm("row") * ew)


def test_sym_in_needs_square_and_unknown_kind():
    adj = Adjacency.from_edges(torch.tensor([0, 3]), torch.tensor([1, 0]), 4, 2)
    with pytest.raises(DataError, match="square adjacency"):
        adj.norm("sym_in")
    with pytest.raises(DataError, match='unknown normalisation "both"'):
        adj.norm("both")  # type: ignore[arg-type]


def test_from_graph_matches_dgl_edges_and_weights():
    g = dgl.graph((SRC, DST), num_nodes=6)  # node 5 isolated
    g.edata["w"] = torch.rand(8)
    adj = Adjacency.from_graph(g, weight="w")
    assert adj.shape == (6, 6)
    s, d = g.find_edges(adj.eids)
    assert torch.equal(s, adj.indices) and torch.equal(d, adj.row_index)
    assert torch.equal(adj.values, g.edata["w"][adj.eids])
    assert torch.equal(adj.in_degrees(), g.in_degrees())
    assert torch.equal(adj.out_degrees(), g.out_degrees())


def test_from_graph_bad_weight_name():
    g = dgl.graph((SRC, DST))
    g.edata["weight"] = torch.rand(8)
    with pytest.raises(DataError, match=r'edge field "wieght" not found.*\[\'weight\'\]'):
        Adjacency.from_graph(g, weight="wieght")


def test_from_block_and_dgl_block_agree():
    g = dgl.graph((SRC, DST), num_nodes=5)
    seeds = torch.tensor([0, 2, 3])
    blk = dgl.to_block(dgl.in_subgraph(g, seeds), dst_nodes=seeds)
    src, dst = blk.edges()
    eids = blk.edata[dgl.EID]
    assert blk.num_edges() == 6
    via_graph = Adjacency.from_graph(blk)
    assert via_graph.shape == (3, blk.num_src_nodes())
    # The same edges as a graphflow Block: CSR over the destinations.
    ref = Adjacency.from_edges(src, dst, blk.num_src_nodes(), 3)
    block = Block(src_nodes=blk.srcdata[dgl.NID], num_dst=3, indptr=ref.indptr,
                  indices=ref.indices, eids=eids[ref.eids])
    adj = Adjacency.from_block(block)
    assert adj.shape == (3, blk.num_src_nodes()) and adj.nnz == blk.num_edges()
    assert torch.equal(adj.indices, via_graph.indices)
    assert torch.equal(adj.eids, eids[via_graph.eids])
    assert torch.equal(adj.in_degrees(), blk.in_degrees())
    assert torch.equal(adj.out_degrees(), blk.out_degrees())


def test_from_block_checks_shapes():
    block = Block(src_nodes=torch.arange(4), num_dst=2, indptr=torch.tensor([0, 1]),
                  indices=torch.tensor([3]), eids=torch.tensor([0]))
    with pytest.raises(DataError, match=r"indptr has shape \(2,\) but num_dst is 2"):
        Adjacency.from_block(block, values=torch.ones(1))  # checked with values too


def test_from_block_carries_edge_values():
    block = Block(src_nodes=torch.arange(4), num_dst=2, indptr=torch.tensor([0, 1, 3]),
                  indices=torch.tensor([3, 0, 2]), eids=torch.tensor([7, 1, 4]))
    weights = torch.arange(8.0)  # (E,) per graph edge, looked up by the block's edge ids
    adj = Adjacency.from_block(block, values=weights[block.eids])
    assert adj.values.tolist() == [7.0, 1.0, 4.0]
    assert Adjacency.from_block(block).values is None


def test_empty_graphs():
    none = torch.zeros(0, dtype=torch.int64)
    adj = Adjacency.from_edges(none, none, 3, 2)
    assert adj.nnz == 0 and adj.indptr.tolist() == [0, 0, 0]
    assert adj.norm("sym").shape == (0,) and adj.transposed().indptr.tolist() == [0, 0, 0, 0]
    zero = Adjacency.from_edges(none, none, 0, 0)
    assert zero.shape == (0, 0) and zero.in_degrees().shape == (0,)


def test_to_moves_tensors_and_caches():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    adj.norm("sym")
    assert adj.to("cpu") is adj
    meta = adj.to("meta")
    assert meta.device.type == "meta" and meta.indptr.device.type == "meta"
    assert meta._cache[("norm", "sym", torch.float32)].device.type == "meta"


@pytest.mark.parametrize("src, dst, message", [
    (torch.tensor([0, 5]), torch.tensor([1, 1]), r"source id 5 is out of range for 5 source"),
    (torch.tensor([0, 1]), torch.tensor([-1, 1]), r"destination id -1 is out of range"),
    (torch.tensor([0, 1]), torch.tensor([1]), r"src has 2 ids but dst has 1"),
    (torch.tensor([0.0, 1.0]), torch.tensor([1, 1]), r"src ids must be integers"),
    (torch.tensor([[0, 1]]), torch.tensor([1, 1]), r"src must be 1-D"),
])
def test_from_edges_rejects_bad_edges(src, dst, message):
    with pytest.raises(DataError, match=message):
        Adjacency.from_edges(src, dst, 5, 5)


def test_from_edges_rejects_mixed_devices_and_bad_values():
    with pytest.raises(DeviceError, match="src is on cpu but dst is on meta"):
        Adjacency.from_edges(SRC, DST.to("meta"), 5, 5)
    with pytest.raises(DataError, match=r"values must have shape \(8,\)"):
        Adjacency.from_edges(SRC, DST, 5, 5, values=torch.ones(7))
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    with pytest.raises(DataError, match=r"edge weight must have shape \(8,\)"):
        adj.norm("sym", torch.ones(3))
    with pytest.raises(DeviceError, match="edge weights are on meta but the adjacency is on cpu"):
        adj.norm("sym", torch.ones(8, device="meta"))


def test_from_graph_rejects_heterographs():
    g = dgl.heterograph({("user", "follows", "user"): ([0], [1]),
                         ("user", "buys", "item"): ([0], [0])})
    with pytest.raises(DataError, match="needs a homogeneous graph, got node types"):
        Adjacency.from_graph(g)


def test_from_block_checks_ids_and_devices():
    mismatch = Block(src_nodes=torch.arange(4), num_dst=2, indptr=torch.tensor([0, 1, 2]),
                     indices=torch.tensor([3, 2]), eids=torch.tensor([0]))
    with pytest.raises(DataError, match="block has 2 indices but 1 edge ids"):
        Adjacency.from_block(mismatch)
    split = Block(src_nodes=torch.arange(4), num_dst=2, indptr=torch.tensor([0, 1, 2]),
                  indices=torch.tensor([3, 2], device="meta"), eids=torch.tensor([0, 1]))
    with pytest.raises(DeviceError, match="block indptr is on cpu but its indices are on meta"):
        Adjacency.from_block(split)


def test_from_edges_rejects_non_tensors_and_negative_counts():
    with pytest.raises(DataError, match="edge src must be a torch tensor, got list"):
        Adjacency.from_edges([0, 1], DST, 5, 5)  # type: ignore[arg-type]
    with pytest.raises(DataError, match="node counts must be >= 0, got num_src=-1"):
        Adjacency.from_edges(SRC, DST, -1, 5)
    with pytest.raises(DataError, match="values must be a floating-point tensor"):
        Adjacency.from_edges(SRC, DST, 5, 5, values=torch.ones(8, dtype=torch.int64))


def test_edge_ids_and_the_transpose_may_be_cut_on_first_use():
    calls = []

    def eids():
        calls.append("eids")
        return torch.tensor([1, 0, 2])

    adj = Adjacency(torch.tensor([0, 1, 2, 3]), torch.tensor([1, 2, 0]), eids, 3, 3)
    assert calls == []
    assert torch.equal(adj.eids, torch.tensor([1, 0, 2])) and adj.eids is adj.eids
    assert calls == ["eids"]
    fresh = Adjacency(adj.indptr, adj.indices, adj.eids, 3, 3).transposed()
    adj._cache["t_index"] = (fresh.indptr, fresh.indices)
    adj._cache["t"] = lambda: calls.append("t") or fresh
    assert adj.transposed_index() == (fresh.indptr, fresh.indices) and calls == ["eids"]
    assert adj.transposed() is fresh and adj.transposed() is fresh
    assert calls == ["eids", "t"]
    moved = adj.to("meta")
    assert moved.eids.device.type == "meta"


def test_from_graph_carries_edge_features_in_csr_order():
    g = dgl.graph((SRC, DST), num_nodes=6)
    g.edata["edge_feat"] = torch.arange(16, dtype=torch.float64).reshape(8, 2)
    adj = Adjacency.from_graph(g, feat="edge_feat")
    assert adj.edge_feat.dtype == torch.float32
    assert torch.equal(adj.edge_feat, g.edata["edge_feat"].float()[adj.eids])
    assert "edge_feat=2" in repr(adj)
    assert adj.to("meta").edge_feat.device.type == "meta"
    assert Adjacency.from_graph(g).edge_feat is None  # carried only when asked for
    g.edata["edge_feat"] = torch.arange(8)  # (E,) labels: one column
    assert Adjacency.from_graph(g, feat="edge_feat").edge_feat.shape == (8, 1)
    assert Adjacency.from_graph(dgl.graph((SRC, DST)), feat="edge_feat").edge_feat is None


def test_non_finite_edge_features_name_the_field_and_the_edge():
    g = dgl.graph((SRC, DST), num_nodes=6)
    g.edata["edge_feat"] = torch.ones(8, 2)
    g.edata["edge_feat"][5, 1] = float("nan")
    with pytest.raises(DataError, match=r'edge field "edge_feat": edge 5 has a non-finite'):
        Adjacency.from_graph(g, feat="edge_feat")
