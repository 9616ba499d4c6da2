"""The virtual node: OGB's update written out by hand on a batch of two graphs, and a model
that needs the batch's graphs refusing a node task's call."""

from graphflow.compat.dgl import dgl
import pytest
import torch

from graphflow.errors import ConfigError
from graphflow.graphs.virtual_node import VirtualNode
from graphflow.manager import create_host
from graphflow.options import parse_options
from graphflow.sparse import Adjacency


def build(**values):
    info = create_host().registry.get("model", "gin")
    options = parse_options(info.cls.Options, values, section="model", component="gin",
                            source="test.toml", base_dir=".")
    return info.cls(options).build(8, 8)


def batch():
    # graph 0: path 0-1-2; graph 1: edge 3-4
    src = torch.tensor([0, 1, 1, 2, 3, 4])
    dst = torch.tensor([1, 0, 2, 1, 4, 3])
    adj = Adjacency.from_graph(dgl.graph((src, dst), num_nodes=5))
    return adj, torch.randn(5, 8), torch.tensor([0, 0, 0, 1, 1])


def test_matches_ogbs_update_by_hand():
    torch.manual_seed(0)
    model = build(layers=3, hidden=8, virtual_node=True, norm="batch", dropout=0.0)
    assert isinstance(model, VirtualNode)
    with torch.no_grad():
        model.embedding.normal_()  # a trained, non-zero virtual node embedding
    model.eval()
    adj, x, seg = batch()
    outs = model.layer_outputs(adj, x, graphs=(seg, 2))
    # OGB's GNN_node_Virtualnode.forward, dropout off
    stack = model.stack
    v = model.embedding.expand(2, 8)
    h = x
    want = [x]
    for i in range(3):
        h = h + v[seg]
        out = stack.layer(i, adj, h)
        if i < 2:
            pooled = torch.stack([h[:3].sum(0), h[3:].sum(0)]) + v
            v = model.mlps[i](pooled)
        h = out
        want.append(h)
    for got, ref in zip(outs, want):
        torch.testing.assert_close(got, ref)
    # the virtual node changes the outputs: the plain stack differs
    assert not torch.allclose(stack.layer_outputs(adj, x)[-1], outs[-1])


def test_needs_the_graphs_and_one_width():
    model = build(layers=2, hidden=8, virtual_node=True)
    adj, x, _ = batch()
    with pytest.raises(ConfigError, match="graph_classification"):
        model(adj, x)
    with pytest.raises(ConfigError, match="one width"):
        build(layers=3, hidden=[8, 16], virtual_node=True)
