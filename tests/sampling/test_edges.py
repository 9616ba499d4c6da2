"""Edge-seeded batches: a batch's blocks never hold its own edges or their reverses."""

from __future__ import annotations

import torch

from graphflow.compat.dgl import dgl
from graphflow.graph import GraphData, NodeIds
from graphflow.linkpred.negatives import NegativeSampler
from graphflow.sampling.edges import EdgeBatches, reverse_edge_ids
from graphflow.sampling.neighbor import sample_blocks
from graphflow.sampling.csc import CSCGraph
from graphflow.sparse.indexed_rows import IndexedRows
from graphflow_plugins.samplers.dgl_neighbor import DGLNeighborSampler
from graphflow_plugins.samplers.neighbor import NeighborSampler


def graph(n=60, m=300, seed=0) -> GraphData:
    gen = torch.Generator().manual_seed(seed)
    u, v = torch.randint(n, (m,), generator=gen), torch.randint(n, (m,), generator=gen)
    g = dgl.graph((torch.cat([u, v]), torch.cat([v, u])), num_nodes=n)
    g.ndata["feat"] = torch.randn(n, 4, generator=gen)
    return GraphData(g, NodeIds.identity(n))


def test_reverse_edge_ids():
    src, dst = torch.tensor([0, 1, 2, 2]), torch.tensor([1, 0, 3, 0])
    assert reverse_edge_ids(src, dst, 4).tolist() == [1, 0, -1, -1]


def test_sample_blocks_exclude_drops_exactly_those_edges():
    data = graph()
    csc = CSCGraph.from_dgl(data.graph)
    seeds = torch.arange(0, 60, 3)
    full = sample_blocks(csc, seeds, [-1, -1])
    exclude = full[-1].eids[::2]  # half the last layer's edges
    cut = sample_blocks(csc, seeds, [-1, -1], exclude=exclude)
    for b in cut:
        assert not torch.isin(b.eids, exclude).any()
        assert int(b.indptr[-1]) == b.num_edges
    kept = full[-1].eids[~torch.isin(full[-1].eids, exclude)]
    assert torch.equal(torch.sort(cut[-1].eids).values, torch.sort(kept).values)


def test_batches_exclude_their_positives_and_reverses():
    data = graph()
    src, dst = data.graph.edges()
    rev = reverse_edge_ids(src, dst, data.num_nodes)
    for cls in (NeighborSampler, DGLNeighborSampler):
        sampler = cls(cls.Options(fanouts=[-1, -1], batch_size=32))
        prepared = sampler.prepare(data, torch.device("cpu"))
        edges = EdgeBatches(sampler, prepared, src, dst, rev,
                            NegativeSampler("uniform", data.num_nodes), k=2)
        batches = list(edges.iterate(torch.arange(src.numel()), torch.Generator().manual_seed(0)))
        assert sum(mb.eids.numel() for mb in batches) == src.numel()
        for mb in batches:
            banned = torch.cat([mb.eids, rev[mb.eids]])
            for b in mb.blocks:
                assert not torch.isin(b.eids, banned).any()
            # Pairs index the batch's nodes: positives are the batch's edges.
            assert torch.equal(mb.seeds[mb.pos[0]], src[mb.eids])
            assert torch.equal(mb.seeds[mb.pos[1]], dst[mb.eids])
            assert mb.neg.shape == (2, 2 * mb.eids.numel())
            assert torch.equal(mb.seeds[mb.neg[0]], src[mb.eids].repeat_interleave(2))
            assert torch.equal(mb.blocks[-1].dst_nodes, mb.seeds)
            # With full fanouts everything else around the seeds is still there.
            others = sample_blocks(CSCGraph.from_dgl(data.graph), mb.seeds, [-1])[0].eids
            assert torch.equal(torch.sort(mb.blocks[-1].eids).values,
                               torch.sort(others[~torch.isin(others, banned)]).values)


def test_edge_batches_are_deterministic_with_a_seed():
    data = graph()
    src, dst = data.graph.edges()
    sampler = NeighborSampler(NeighborSampler.Options(fanouts=[3, 3], batch_size=50))
    prepared = sampler.prepare(data, torch.device("cpu"))
    rev = reverse_edge_ids(src, dst, data.num_nodes)

    def run():
        edges = EdgeBatches(sampler, prepared, src, dst, rev,
                            NegativeSampler("degree", data.num_nodes,
                                            data.graph.in_degrees().float()), k=1)
        return [(mb.eids, mb.neg, mb.blocks[0].eids)
                for mb in edges.iterate(torch.arange(src.numel()),
                                        torch.Generator().manual_seed(5))]

    for a, b in zip(run(), run()):
        assert all(torch.equal(x, y) for x, y in zip(a, b))


def test_rows_leave_the_features_in_the_table_when_sampling_inline():
    data = graph(seed=3)
    src, dst = data.graph.edges()
    sampler = NeighborSampler(NeighborSampler.Options(fanouts=[3, 3], batch_size=40))
    prepared = sampler.prepare(data, torch.device("cpu"))
    rev = reverse_edge_ids(src, dst, data.num_nodes)

    def run(rows, workers):
        edges = EdgeBatches(sampler, prepared, src, dst, rev,
                            NegativeSampler("uniform", data.num_nodes), k=1)
        return list(edges.iterate(torch.arange(src.numel()), torch.Generator().manual_seed(2),
                                  workers=workers, rows=rows))

    plain, lazy, worker = run(False, 0), run(True, 0), run(True, 1)
    assert all(isinstance(mb.features, IndexedRows) for mb in lazy)
    assert all(isinstance(mb.features, torch.Tensor) for mb in plain + worker)
    for a, b, c in zip(plain, lazy, worker):  # the same batches, the same rows
        assert torch.equal(a.input_nodes, b.input_nodes)
        assert torch.equal(a.features, b.features.materialize())
        assert torch.equal(a.features, c.features)
