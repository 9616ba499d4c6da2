import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.nn import SGConv
from graphflow.sparse import Adjacency, SparseFeatures


def pair(in_dim: int, out_dim: int, k: int, cached: bool = False, bias: bool = True):
    ref = dgl.nn.SGConv(in_dim, out_dim, k=k, cached=cached, bias=bias,
                        allow_zero_in_degree=True).double()
    if bias:
        torch.nn.init.normal_(ref.fc.bias)
    ours = SGConv(in_dim, out_dim, k=k, cached=cached, bias=bias).double()
    ours.load_state_dict(ref.state_dict())
    return ours, ref


def full_graph():
    # The nn conftest graph: directed, a duplicate edge, a self-loop, nodes without in-edges.
    src = torch.tensor([0, 0, 1, 2, 3, 1, 2, 0, 3, 5, 2, 4])
    dst = torch.tensor([1, 1, 2, 1, 3, 0, 0, 4, 4, 4, 3, 2])
    g = dgl.graph((src, dst), num_nodes=7)
    return g, Adjacency.from_graph(g)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("dims", [(5, 3), (3, 6)])
@pytest.mark.parametrize("bias", [True, False])
def test_matches_dgl_sgconv(features, compare, k, dims, bias):
    g, adj = full_graph()
    ours, ref = pair(*dims, k=k, bias=bias)
    x = features(7, dims[0])
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    grads = {"x": (x1, x2), "fc.weight": (ours.fc.weight, ref.fc.weight)}
    if bias:
        grads["fc.bias"] = (ours.fc.bias, ref.fc.bias)
    compare(ours(adj, x1), ref(g, x2), grads)


def test_cached_matches_dgl_and_reuses_propagation(features):
    g, adj = full_graph()
    ours, ref = pair(4, 2, k=2, cached=True)
    x = features(7, 4)
    for _ in range(2):
        torch.testing.assert_close(ours(adj, x), ref(g, x))
    cached = ours._cache[2]
    ours(adj, x)
    assert ours._cache[2] is cached
    ours(adj, x.clone())  # other features: propagated again, not served stale
    assert ours._cache[2] is not cached


def test_k1_on_graphs_and_blocks(case, features, compare):
    """k=1: DGL SGConv on a graph; on a block, a GCN layer (DGL GraphConv, norm "both")."""
    layer = SGConv(4, 3).double()
    torch.nn.init.normal_(layer.fc.bias)
    if case.name == "full":
        ref = dgl.nn.SGConv(4, 3, allow_zero_in_degree=True).double()
        ref.load_state_dict(layer.state_dict())
        grads = {"fc.weight": (layer.fc.weight, ref.fc.weight), "fc.bias": (layer.fc.bias,
                                                                            ref.fc.bias)}
    else:
        ref = dgl.nn.GraphConv(4, 3, norm="both", allow_zero_in_degree=True).double()
        with torch.no_grad():
            ref.weight.copy_(layer.fc.weight.T)
            ref.bias.copy_(layer.fc.bias)
        grads = {"fc.bias": (layer.fc.bias, ref.bias)}
    x = features(case.num_src, 4)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    compare(layer(case.adj, x1), ref(case.g, x2), {"x": (x1, x2), **grads})


def test_sparse_features_match_dense(features):
    _, adj = full_graph()
    x = features(7, 6)
    x = x * (x > 0.5)
    for cached in (False, True):
        layer = SGConv(6, 3, k=2, cached=cached).double()
        torch.testing.assert_close(layer(adj, SparseFeatures.from_dense(x)), layer(adj, x))


def test_k_and_shape_errors(case):
    with pytest.raises(ConfigError, match="k >= 1"):
        SGConv(3, 2, k=0)
    if case.name == "block":
        with pytest.raises(DataError, match="k=2 propagates k times over one graph, so it needs "
                                            "a square adjacency; this one has 3 destinations"):
            SGConv(3, 2, k=2).double()(case.adj, torch.zeros(case.num_src, 3,
                                                             dtype=torch.float64))
