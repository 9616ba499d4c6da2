"""Batches of whole graphs: the same block-diagonal graph as dgl.batch, cut without loops."""

import torch

from graphflow.compat.dgl import dgl
from graphflow.graphs.batch import GraphBatcher
from graphflow.sparse import Adjacency, spmm
from graphflow.sparse.ops import _kernel_index


def random_collection(num_graphs=20, seed=0):
    gen = torch.Generator().manual_seed(seed)
    graphs, offsets = [], [0]
    for _ in range(num_graphs):
        n = int(torch.randint(1, 9, (1,), generator=gen))
        m = int(torch.randint(0, 3 * n, (1,), generator=gen))
        src = torch.randint(0, n, (m,), generator=gen)
        dst = torch.randint(0, n, (m,), generator=gen)
        g = dgl.graph((src, dst), num_nodes=n)
        g.ndata["feat"] = torch.randn(n, 3, generator=gen)
        graphs.append(g)
        offsets.append(offsets[-1] + n)
    return graphs, torch.tensor(offsets)


def test_batch_equals_dgl_batch_of_the_same_graphs():
    graphs, ptr = random_collection()
    whole = dgl.batch(graphs)
    adj = Adjacency.from_graph(whole)
    batcher = GraphBatcher(adj, ptr, whole.ndata["feat"])
    sel = torch.tensor([7, 2, 19, 2, 0, 11])  # any order, repeats allowed
    batch = batcher.batch(sel)
    ref = dgl.batch([graphs[i] for i in sel.tolist()])
    expect = Adjacency.from_graph(ref)
    assert torch.equal(batch.adj.indptr, expect.indptr)
    assert torch.equal(batch.adj.indices, expect.indices)
    assert torch.equal(batch.x, ref.ndata["feat"])
    assert torch.equal(batch.ptr[1:] - batch.ptr[:-1], ref.batch_num_nodes())
    # The ready-made transposed CSR and row index equal the ones Adjacency would build.
    fresh = Adjacency(batch.adj.indptr, batch.adj.indices, batch.adj.eids, batch.adj.num_src,
                      batch.adj.num_dst)
    t, t2 = batch.adj.transposed(), fresh.transposed()
    assert torch.equal(t.indptr, t2.indptr) and torch.equal(t.indices, t2.indices)
    assert torch.equal(t.perm, t2.perm)
    assert torch.equal(batch.adj.row_index, fresh.row_index)
    assert torch.equal(batch.segment(), torch.repeat_interleave(
        torch.arange(sel.shape[0]), ref.batch_num_nodes()))


def test_gradients_through_a_batch_match_dgl():
    graphs, ptr = random_collection(seed=1)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    sel = torch.tensor([3, 4, 5, 18])
    batch = batcher.batch(sel)
    x = batch.x.clone().requires_grad_()
    spmm(batch.adj, x).pow(2).sum().backward()
    ref = dgl.batch([graphs[i] for i in sel.tolist()])
    x2 = ref.ndata["feat"].clone().requires_grad_()
    spmm(Adjacency.from_graph(ref), x2).pow(2).sum().backward()
    assert torch.allclose(x.grad, x2.grad, atol=1e-6)


def test_epoch_shuffles_by_the_generator_and_covers_every_graph():
    graphs, ptr = random_collection(seed=2)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    ids = torch.arange(20)
    a = [b.graphs for b in batcher.epoch(ids, 6, generator=torch.Generator().manual_seed(3))]
    b = [b.graphs for b in batcher.epoch(ids, 6, generator=torch.Generator().manual_seed(3))]
    assert all(torch.equal(x, y) for x, y in zip(a, b))
    assert [x.shape[0] for x in a] == [6, 6, 6, 2]
    assert sorted(torch.cat(a).tolist()) == list(range(20))
    assert not torch.equal(torch.cat(a), ids)


def undirected_collection(num_graphs=12, seed=4):
    graphs, ptr = random_collection(num_graphs, seed)
    out = []
    for g in graphs:
        src, dst = g.edges()
        h = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=g.num_nodes())
        h.ndata["feat"] = g.ndata["feat"]
        h.edata["w"] = torch.rand(h.num_edges(), generator=torch.Generator().manual_seed(5))
        out.append(h)
    return out, ptr


def test_background_workers_cut_the_same_batches_in_the_same_order():
    graphs, ptr = random_collection(seed=3)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    ids = torch.arange(20)
    inline = list(batcher.epoch(ids, 3, generator=torch.Generator().manual_seed(5)))
    for workers in (1, 2):
        ahead = list(batcher.epoch(ids, 3, generator=torch.Generator().manual_seed(5),
                                   workers=workers))
        assert len(ahead) == len(inline) == 7
        for a, b in zip(ahead, inline):
            assert torch.equal(a.graphs, b.graphs) and torch.equal(a.ptr, b.ptr)
            assert torch.equal(a.adj.indptr, b.adj.indptr)
            assert torch.equal(a.adj.indices, b.adj.indices)
            assert torch.equal(a.x, b.x) and torch.equal(a.nodes, b.nodes)
            assert torch.equal(a.adj.eids, b.adj.eids)  # the lazily cut parts too
            assert torch.equal(a.adj.transposed().perm, b.adj.transposed().perm)


def test_a_consumer_that_stops_early_leaves_no_cutting_thread_behind():
    import threading

    graphs, ptr = random_collection(seed=4)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    batches = batcher.epoch(torch.arange(20), 2, workers=2)
    next(batches)
    batches.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("graphflow-prefetch")]


def test_a_symmetric_collection_reuses_its_csr_as_the_transpose():
    graphs, ptr = undirected_collection()
    whole = dgl.batch(graphs)
    adj = Adjacency.from_graph(whole, weight="w")
    batcher = GraphBatcher(adj, ptr, whole.ndata["feat"])
    assert batcher.symmetric
    sel = torch.tensor([5, 0, 11, 3])
    batch = batcher.batch(sel)
    assert _kernel_index(batch.adj, True) is _kernel_index(batch.adj, False)
    # Cut on first use, the transpose's permutation and the edge ids equal fresh ones.
    fresh = Adjacency(batch.adj.indptr, batch.adj.indices, batch.adj.eids, batch.adj.num_src,
                      batch.adj.num_dst)
    t, t2 = batch.adj.transposed(), fresh.transposed()
    assert torch.equal(t.indptr, t2.indptr) and torch.equal(t.indices, t2.indices)
    assert torch.equal(t.perm, t2.perm)
    src, dst = whole.edges()  # each CSR entry is the collection edge its id names
    glob = batch.nodes
    assert torch.equal(src[batch.adj.eids], glob[batch.adj.indices])
    assert torch.equal(dst[batch.adj.eids], glob[batch.adj.row_index])
    # Weighted gradients (A^T's values through the cut permutation) match DGL's batch.
    ref = dgl.batch([graphs[i] for i in sel.tolist()])
    x = batch.x.clone().requires_grad_()
    spmm(batch.adj, x).pow(2).sum().backward()
    x2 = ref.ndata["feat"].clone().requires_grad_()
    spmm(Adjacency.from_graph(ref, weight="w"), x2).pow(2).sum().backward()
    assert torch.allclose(x.grad, x2.grad, atol=1e-5)


def test_a_directed_collection_cuts_its_own_transpose():
    graphs, ptr = random_collection(seed=6)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    assert not batcher.symmetric
    batch = batcher.batch(torch.tensor([1, 9, 4]))
    fresh = Adjacency(batch.adj.indptr, batch.adj.indices, batch.adj.eids, batch.adj.num_src,
                      batch.adj.num_dst)
    t, t2 = batch.adj.transposed(), fresh.transposed()
    assert torch.equal(t.indptr, t2.indptr) and torch.equal(t.indices, t2.indices)
    assert torch.equal(t.perm, t2.perm)


def test_the_compiled_cut_and_the_torch_calls_give_the_same_batches():
    # The CPU cuts in one compiled pass (graphflow.graphs.cut); other devices run the torch
    # calls, checked here on the CPU against it, field by field.
    for graphs, ptr, weight in ((*undirected_collection(), "w"), (*random_collection(seed=3), None)):
        whole = dgl.batch(graphs)
        if weight is None:
            whole.edata["w"] = torch.rand(whole.num_edges())
        adj = Adjacency.from_graph(whole, weight="w")
        compiled = GraphBatcher(adj, ptr, whole.ndata["feat"])
        torch_path = GraphBatcher(adj, ptr, whole.ndata["feat"])
        torch_path.compiled = False
        assert compiled.compiled
        for sel in (torch.tensor([5, 0, 11, 3]), torch.tensor([2]), torch.tensor([4, 4, 1]),
                    torch.arange(len(graphs)).flip(0)):
            a, b = compiled.batch(sel), torch_path.batch(sel)
            for name in ("x", "ptr", "graphs", "nodes"):
                assert torch.equal(getattr(a, name), getattr(b, name)), name
            assert torch.equal(a.segment(), b.segment())
            for name in ("indptr", "indices", "values", "eids", "row_index"):
                assert torch.equal(getattr(a.adj, name), getattr(b.adj, name)), name
            ta, tb = a.adj.transposed(), b.adj.transposed()
            for name in ("indptr", "indices", "perm"):
                assert torch.equal(getattr(ta, name), getattr(tb, name)), name


def test_edge_features_are_cut_with_the_edges():
    """The collection's edge features (CSR order) follow every batch's entries: each row is
    the feature of the collection edge at that entry, on both cutting paths."""
    graphs, ptr = random_collection(seed=5)
    whole = dgl.batch(graphs)
    whole.edata["edge_feat"] = torch.randn(whole.num_edges(), 4)
    adj = Adjacency.from_graph(whole, feat="edge_feat")
    batcher = GraphBatcher(adj, ptr, whole.ndata["feat"])
    sel = torch.tensor([3, 17, 0, 9, 3])
    for compiled in (batcher.compiled, False):
        batcher.compiled = compiled
        batch = batcher.batch(sel)
        assert batch.adj.edge_feat.shape == (batch.adj.nnz, 4)
        assert torch.equal(batch.adj.edge_feat, whole.edata["edge_feat"][batch.adj.eids])
    plain = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["feat"])
    assert plain.batch(sel).adj.edge_feat is None
