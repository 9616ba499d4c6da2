"""Multi-layer sampling: blocks are real subgraphs, chained, deterministic, and agree with DGL."""

from __future__ import annotations

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.io.synthetic import rmat
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.neighbor import sample_blocks


@pytest.fixture(scope="module")
def power_graph() -> dgl.DGLGraph:
    g = rmat(3000, 40_000, seed=2)
    return dgl.graph((g.src, g.dst), num_nodes=g.num_nodes)


def check_blocks(graph: dgl.DGLGraph, blocks, seeds, fanouts, replace=False):
    src, dst = graph.edges()
    in_deg = graph.in_degrees()
    assert torch.equal(blocks[-1].dst_nodes, seeds), "seeds are the last block's dst nodes"
    for layer, (block, fanout) in enumerate(zip(blocks, fanouts)):
        assert torch.equal(block.src_nodes[: block.num_dst], block.dst_nodes)
        assert block.src_nodes.unique().numel() == block.num_src
        if layer + 1 < len(blocks):
            assert torch.equal(blocks[layer + 1].src_nodes, block.dst_nodes)
        assert block.indptr.shape == (block.num_dst + 1,)
        assert block.indices.min() >= 0 and block.indices.max() < block.num_src
        rows = block.dst_local()
        # Every sampled edge exists: its id's endpoints are the block's (src, dst).
        assert torch.equal(src[block.eids], block.src_nodes[block.indices])
        assert torch.equal(dst[block.eids], block.dst_nodes[rows])
        counts = block.indptr[1:] - block.indptr[:-1]
        deg = in_deg[block.dst_nodes]
        if replace:
            assert torch.equal(counts, torch.where(deg > 0, fanout, 0))
        else:
            assert block.eids.unique().numel() == block.num_edges, "duplicate edge"
            want = deg if fanout < 0 else deg.clamp(max=fanout)
            assert torch.equal(counts, want)


@pytest.mark.parametrize("fanouts", [[5], [4, 3], [15, 10, 5], [-1, 2]])
def test_blocks_are_valid_subgraphs(power_graph, fanouts):
    csc = CSCGraph.from_dgl(power_graph)
    seeds = torch.randperm(3000, generator=torch.Generator().manual_seed(0))[:64]
    blocks = sample_blocks(csc, seeds, fanouts, generator=torch.Generator().manual_seed(1))
    assert len(blocks) == len(fanouts)
    check_blocks(power_graph, blocks, seeds, fanouts)


def test_with_replacement_blocks(power_graph):
    csc = CSCGraph.from_dgl(power_graph)
    seeds = torch.arange(100)
    blocks = sample_blocks(csc, seeds, [3, 3], replace=True,
                           generator=torch.Generator().manual_seed(1))
    check_blocks(power_graph, blocks, seeds, [3, 3], replace=True)


def test_deterministic_for_a_seed(power_graph):
    csc = CSCGraph.from_dgl(power_graph)
    seeds = torch.arange(0, 3000, 7)

    def run(seed: int):
        return sample_blocks(csc, seeds, [10, 5], generator=torch.Generator().manual_seed(seed))

    a, b, c = run(4), run(4), run(5)
    for x, y in zip(a, b):
        assert torch.equal(x.src_nodes, y.src_nodes) and torch.equal(x.eids, y.eids)
        assert torch.equal(x.indptr, y.indptr) and torch.equal(x.indices, y.indices)
    assert not all(torch.equal(x.eids, z.eids) for x, z in zip(a, c))


def test_isolated_nodes_give_empty_rows():
    g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])), num_nodes=5)
    csc = CSCGraph.from_dgl(g)
    blocks = sample_blocks(csc, torch.tensor([4, 3, 0]), [2, 2])
    for block in blocks:
        assert block.num_edges == 0
        assert block.indptr.tolist() == [0] * (block.num_dst + 1)
        assert block.src_nodes.tolist() == [4, 3, 0]


def test_shapes_agree_with_dgl(power_graph):
    """Same dst sets, same per-dst in-degrees, and the same edges when fanout >= degree."""
    csc = CSCGraph.from_dgl(power_graph)
    seeds = torch.randperm(3000, generator=torch.Generator().manual_seed(3))[:200]
    every = int(power_graph.in_degrees().max())
    for fanouts, takes_all in (([4, 6], False), ([-1, -1], True), ([every, every], True)):
        ours = sample_blocks(csc, seeds, fanouts, generator=torch.Generator().manual_seed(0))
        _, _, theirs = dgl.dataloading.NeighborSampler(fanouts).sample_blocks(power_graph,
                                                                               seeds)
        # From the seeds outwards. Sampled layers differ beyond the first (different random
        # draws reach different nodes), so only the seeds' layer is compared for them.
        pairs = list(zip(reversed(ours), reversed(theirs)))
        for mine, ref in pairs if takes_all else pairs[:1]:
            ref_nodes = ref.dstdata[dgl.NID]
            assert set(mine.dst_nodes.tolist()) == set(ref_nodes.tolist())
            mine_deg = dict(zip(mine.dst_nodes.tolist(),
                                (mine.indptr[1:] - mine.indptr[:-1]).tolist()))
            ref_deg = dict(zip(ref_nodes.tolist(), ref.in_degrees().tolist()))
            assert mine_deg == ref_deg
            assert mine.num_edges == ref.num_edges()
            if takes_all:
                assert set(mine.eids.tolist()) == set(ref.edata[dgl.EID].tolist())
                assert set(mine.src_nodes.tolist()) == set(ref.srcdata[dgl.NID].tolist())


def test_weighted_blocks_never_use_zero_weight_edges(power_graph):
    g = power_graph
    w = torch.rand(g.num_edges(), generator=torch.Generator().manual_seed(0))
    w[::3] = 0.0
    g.edata["w"] = w
    csc = CSCGraph.from_dgl(g, weight="w")
    seeds = torch.arange(0, 3000, 11)
    for replace in (False, True):
        blocks = sample_blocks(csc, seeds, [4, 4], replace=replace,
                               generator=torch.Generator().manual_seed(1))
        src, dst = g.edges()
        for block in blocks:
            assert (w[block.eids] > 0).all()
            assert torch.equal(src[block.eids], block.src_nodes[block.indices])
            assert torch.equal(dst[block.eids], block.dst_nodes[block.dst_local()])
    del g.edata["w"]
