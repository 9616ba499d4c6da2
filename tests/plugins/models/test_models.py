"""The five model stacks: options from TOML, shapes, layer-wise inference, option errors."""

import pytest
import torch

from graphflow.errors import ConfigError
from graphflow.io.synthetic import sbm
from graphflow.nn.stack import GNNStack
from graphflow.options import parse_options
from graphflow.sparse import Adjacency, SparseFeatures


@pytest.fixture(scope="module")
def graph():
    g = sbm(90, 3, 10, p_in=0.12, p_out=0.02, seed=5)
    return g, Adjacency.from_edges(g.src, g.dst, 90, 90)


def build(host, name, in_dim=10, out_dim=3, **values):
    info = host.registry.get("model", name)
    options = parse_options(info.cls.Options, values, section="model", component=name,
                            source="test.toml", base_dir=".")
    return info.cls(options).build(in_dim, out_dim)


CASES = [
    ("gcn", {}),
    ("gcn", {"hidden": [8, 6], "residual": True, "norm": "batch", "bias": False}),
    ("sage", {"layers": 3, "hidden": 8, "norm": "layer", "activation": "gelu"}),
    ("gat", {"hidden": 4, "heads": 3, "out_heads": 2}),
    ("gat", {"hidden": 4, "heads": 2, "residual": True}),
    ("gin", {"hidden": 8, "learn_eps": True, "eps": 0.1}),
    ("gin", {"hidden": 8, "mlp_norm": "batch", "norm": "batch"}),
    ("sgc", {"k": 1}),
]


@pytest.mark.parametrize("name, values", CASES)
def test_models_predict_every_node_and_match_layerwise_inference(host, graph, name, values):
    g, adj = graph
    torch.manual_seed(0)
    model = build(host, name, **values)
    assert isinstance(model, GNNStack) and (model.in_dim, model.out_dim) == (10, 3)
    model.train()
    out = model(adj, g.feat)  # (N, 3)
    assert out.shape == (90, 3)
    out.sum().backward()
    model.eval()
    full = model(adj, g.feat)
    assert torch.allclose(model.inference(adj, g.feat, batch_size=32), full, atol=1e-5)
    sparse = SparseFeatures.from_dense(torch.relu(g.feat - 1))
    assert torch.allclose(model(adj, sparse), model(adj, sparse.to_dense()), atol=1e-5)


def test_gat_concatenates_hidden_heads_and_averages_output_heads(host):
    model = build(host, "gat", hidden=8, heads=8, out_heads=1)
    assert model.dims == [10, 64, 3]
    first, last = model.layers
    assert (first.conv.heads, first.conv.out_dim, first.merge) == (8, 8, "concat")
    assert (last.conv.heads, last.conv.out_dim, last.merge) == (1, 3, "mean")
    assert model.drops == [0.6, 0.6] and model.self_loops
    assert type(model.acts[0]).__name__ == "ELU"


def test_gcn_defaults_follow_the_paper(host):
    model = build(host, "gcn")
    assert model.dims == [10, 16, 3] and model.drops == [0.5, 0.5] and model.self_loops
    assert model.layers[0].norm == "both"
    model = build(host, "gcn", hidden=32, layers=3, input_dropout=0.2)
    assert model.dims == [10, 32, 32, 3] and model.drops == [0.2, 0.5, 0.5]


def test_gin_mlp_norm_sits_between_each_mlp_linear_and_its_relu(host):
    from torch import nn

    stack = build(host, "gin", hidden=8, mlp_layers=3, mlp_norm="batch")
    kinds = [type(m).__name__ for m in stack.layers[0].mlp]
    assert kinds == ["Linear", "BatchNorm1d", "ReLU", "Linear", "BatchNorm1d", "ReLU", "Linear"]
    assert not any(isinstance(m, nn.BatchNorm1d) for m in build(host, "gin", hidden=8).modules())


def test_sgc_caches_the_propagation_on_the_full_graph(host, graph):
    g, adj = graph
    model = build(host, "sgc", k=2)
    assert model.num_layers == 1 and model.layers[0].k == 2
    first = model(adj, g.feat)
    assert model.layers[0]._cache is not None  # S^K X computed once
    assert torch.equal(first, model(adj, g.feat))


@pytest.mark.parametrize("name, values, message", [
    ("gcn", {"hidden": [8, 8], "layers": 2},
     "hidden lists 2 widths .one per hidden layer., so layers must be 3, not 2"),
    ("gcn", {"dropout": 1.0}, r"dropout must lie in \[0, 1\), got 1.0"),
    ("gcn", {"hidden": 0}, "hidden widths must be positive"),
    ("sage", {"layers": 0}, "layers must be >= 1"),
    ("gat", {"heads": 0}, "heads and out_heads must be >= 1"),
    ("gat", {"attn_dropout": -0.1}, "attn_dropout must lie in"),
    ("gin", {"mlp_layers": 0}, "mlp_layers must be >= 1"),
    ("sgc", {"k": 0}, "k must be >= 1"),
    ("gcn", {"activation": "rleu"}, r"model.activation: expected .*\"relu\".*got \"rleu\""),
    ("gcn", {"norm": "group"}, r"model.norm: expected \"none\" \| \"batch\" \| \"layer\""),
    ("gin", {"mlp_norm": "btach"}, r"model.mlp_norm: expected \"auto\" \| \"none\" \| \"batch\" \| \"layer\""),
    ("gcn", {"hiden": 16}, r'unknown option for .gcn. \(did you mean "hidden"\?\)'),
])
def test_bad_options_name_the_key_and_the_fix(host, name, values, message):
    with pytest.raises(ConfigError, match=message):
        build(host, name, **values)
