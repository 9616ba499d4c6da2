"""Typed neighbour sampling: DGL NeighborSampler's fanout semantics, block structure, bad
fanouts, and sampled training."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError
from graphflow.hetero.sampling import TypedNeighborGraph, relation_fanouts
from graphflow.testing import make_typed_graph


def cap(degrees, k):
    return degrees if k < 0 else degrees.clamp(max=k)


def test_sampled_in_edges_per_relation_match_dgl():
    """Per destination node and relation: min(fanout, in-degree) in-edges, as DGL's
    NeighborSampler on the same heterograph (exactly equal on the seed layer, where the
    destinations are the same nodes; on inner layers each side against the rule, as the
    random draws reach different nodes)."""
    g = make_typed_graph(num_papers=40).graph
    graph = TypedNeighborGraph(g)
    seeds = torch.arange(0, 40, 3)
    fanouts = [{"cites": 2, "writes": 1, "rev-in": 1}, 2]
    per_rel = relation_fanouts(fanouts, graph.relations)
    mb = graph.sample_blocks("paper", seeds, per_rel, torch.Generator().manual_seed(0))
    dgl_fanouts = [{r: per_rel[i][r] for r in g.canonical_etypes} for i in range(2)]
    _, _, blocks = dgl.dataloading.NeighborSampler(dgl_fanouts).sample_blocks(
        g, {"paper": seeds})
    for layer, (ours, ref) in enumerate(zip(mb.adjs, blocks)):
        for rel in g.canonical_etypes:
            k = per_rel[layer][rel]
            ref_dst = ref.dstnodes[rel[2]].data[dgl.NID]
            rule = cap(g.in_degrees(ref_dst, etype=rel), k)
            assert torch.equal(ref.in_degrees(etype=rel), rule)  # DGL follows the rule
            if ours.num_dst.get(rel[2], 0) == 0:
                assert ref_dst.numel() == 0
                continue
            mine = ours.rels[rel].in_degrees()
            my_dst = mb.src_nodes[layer][rel[2]][: ours.num_dst[rel[2]]]
            assert torch.equal(mine, cap(g.in_degrees(my_dst, etype=rel), k))
            if layer == len(blocks) - 1:  # same seeds, same order: equal counts
                assert torch.equal(mine, ref.in_degrees(etype=rel))


def test_blocks_follow_to_block_convention():
    data = make_typed_graph(num_papers=40)
    g = data.graph
    graph = TypedNeighborGraph(g)
    seeds = torch.tensor([5, 1, 7])
    mb = graph.sample_blocks("paper", seeds, relation_fanouts([3, 3], graph.relations))
    last = mb.adjs[-1]
    assert last.num_dst == {"paper": 3, **{t: 0 for t in last.num_dst if t != "paper"}}
    for inner, outer in zip(mb.adjs, mb.adjs[1:]):
        assert inner.num_dst == outer.num_src  # each layer's sources feed the next
    # every sampled edge is an edge of the graph
    first = mb.adjs[0]
    src_ids = mb.input_nodes
    dst_ids = {t: v[: first.num_dst[t]] for t, v in src_ids.items()}
    for rel, adj in first.rels.items():
        s = src_ids[rel[0]][adj.indices]
        d = dst_ids[rel[2]][adj.row_index]
        assert bool(g.has_edges_between(s, d, etype=rel).all())
        # the edge ids are the relation's own: they name exactly these (source, destination)
        es, ed = g.find_edges(adj.eids, etype=rel)
        assert torch.equal(es, s) and torch.equal(ed, d)


def test_unknown_relation_in_fanouts():
    g = make_typed_graph().graph
    with pytest.raises(ConfigError, match="relation 'citez' is not in the graph; relations: "):
        relation_fanouts([{"citez": 3}], list(g.canonical_etypes))


SAMPLED = """
[pipeline]
cores = 1
[load]
type = "typed_test"
[sample]
type = "typed_neighbor"
fanouts = [{fanouts}]
batch_size = 16
[model]
type = "{model}"
hidden = 16
[train]
type = "node_classification"
target = "paper"
epochs = 15
lr = 0.05
"""


@pytest.mark.parametrize("model", ["rgcn", "hetero"])
def test_sampled_training(run_toml, typed_host, model):
    result = run_toml(SAMPLED.format(fanouts='5, {cites = 3, rev-in = 1}', model=model),
                      host=typed_host)
    assert result.ctx.metrics["train_acc"] > 0.9


def test_sampled_fanout_for_unknown_relation(run_toml, typed_host):
    with pytest.raises(ConfigError, match="relation 'citez' is not in the graph"):
        run_toml(SAMPLED.format(fanouts='5, {citez = 3}', model="rgcn"), host=typed_host)


def test_fanouts_must_match_the_layers(run_toml, typed_host):
    with pytest.raises(ConfigError, match="has 3 entries but .* has 2 message-passing layers"):
        run_toml(SAMPLED.format(fanouts='5, 5, 5', model="rgcn"), host=typed_host)


def test_a_cpu_graph_draws_from_the_loops_own_generator():
    """On the CPU the loop's generator draws the blocks itself (runs repeat as before)."""
    graph = TypedNeighborGraph(make_typed_graph(num_papers=40).graph, "cpu")
    gen = torch.Generator().manual_seed(3)
    assert graph.generator_for(gen) is gen
    fanouts = relation_fanouts([2, 2], graph.relations)
    runs = [[mb.input_nodes for mb in graph.iterate("paper", torch.arange(40), fanouts, 8,
                                                    torch.Generator().manual_seed(1))]
            for _ in range(2)]
    assert all(a.keys() == b.keys() and all(torch.equal(a[t], b[t]) for t in a)
               for a, b in zip(*runs))


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_typed_sampling_runs_on_the_gpu(run_toml, typed_host):
    """device = "cuda": the CSCs and blocks live on the GPU, every sampled edge is an edge of
    the graph, a seeded draw repeats, and sampled training trains there."""
    data = make_typed_graph(num_papers=40)
    g = data.graph
    graph = TypedNeighborGraph(g, "cuda")
    assert all(c.indptr.is_cuda for c in graph.csc.values())
    fanouts = relation_fanouts([3, 3], graph.relations)
    draws = [graph.sample_blocks("paper", torch.tensor([5, 1, 7]), fanouts,
                                 torch.Generator("cuda").manual_seed(0)) for _ in range(2)]
    first = draws[0].adjs[0]
    for rel, adj in first.rels.items():
        assert adj.indices.is_cuda
        s = draws[0].input_nodes[rel[0]][adj.indices].cpu()
        d = draws[0].input_nodes[rel[2]][: first.num_dst[rel[2]]][adj.row_index].cpu()
        assert bool(g.has_edges_between(s, d, etype=rel).all())
        assert torch.equal(adj.indices, draws[1].adjs[0].rels[rel].indices)
    result = run_toml(SAMPLED.format(fanouts='5, {cites = 3, rev-in = 1}', model="rgcn")
                      .replace("cores = 1", 'cores = 1\ndevice = "cuda"'), host=typed_host)
    assert result.ctx.metrics["train_acc"] > 0.9
