import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError
from graphflow.nn import GCNConv
from graphflow.sparse import Adjacency, SparseFeatures


def pair(in_dim: int, out_dim: int, norm: str, weight: bool = True, bias: bool = True):
    """A DGL GraphConv and our GCNConv with the same parameters, in float64."""
    ref = dgl.nn.GraphConv(in_dim, out_dim, norm=norm, weight=weight, bias=bias,
                           allow_zero_in_degree=True).double()
    if bias:
        torch.nn.init.normal_(ref.bias)  # DGL zero-initialises: make the bias visible
    ours = GCNConv(in_dim, out_dim, norm=norm, weight=weight, bias=bias).double()
    with torch.no_grad():
        if weight:
            ours.weight.copy_(ref.weight)
        if bias:
            ours.bias.copy_(ref.bias)
    return ours, ref


def param_grads(ours: GCNConv, ref) -> dict:
    grads = {}
    if ours.weight is not None:
        grads["weight"] = (ours.weight, ref.weight)
    if ours.bias is not None:
        grads["bias"] = (ours.bias, ref.bias)
    return grads


@pytest.mark.parametrize("norm", ["both", "right", "none"])
@pytest.mark.parametrize("dims", [(5, 3), (3, 6)])  # weight first / aggregation first
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_dgl_graphconv(case, features, compare, norm, dims, weighted):
    in_dim, out_dim = dims
    ours, ref = pair(in_dim, out_dim, norm)
    x = features(case.num_src, in_dim)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    grads = {"x": (x1, x2), **param_grads(ours, ref)}
    if weighted:
        w = torch.rand(case.g.num_edges(), dtype=torch.float64) + 0.5
        w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
        out = ours(case.adj, x1, edge_weight=case.to_csr(w1))
        expected = ref(case.g, x2, edge_weight=w2)
        grads["edge_weight"] = (w1, w2)
    else:
        out = ours(case.adj, x1)
        expected = ref(case.g, x2)
    assert out.shape == (case.num_dst, out_dim)
    compare(out, expected, grads)


@pytest.mark.parametrize("bias", [False, True])
def test_matches_dgl_without_weight(case, features, compare, bias):
    ours, ref = pair(4, 4, "both", weight=False, bias=bias)
    x = features(case.num_src, 4)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    compare(ours(case.adj, x1), ref(case.g, x2), {"x": (x1, x2), **param_grads(ours, ref)})


def test_zero_in_degree_nodes_get_only_the_bias(case, features):
    ours, _ = pair(4, 2, "both")
    out = ours(case.adj, features(case.num_src, 4))
    isolated = case.adj.in_degrees() == 0
    assert isolated.any()
    torch.testing.assert_close(out[isolated], ours.bias.expand(int(isolated.sum()), 2))


def test_adjacency_values_are_edge_weights(case, features):
    w = torch.rand(case.g.num_edges(), dtype=torch.float64)
    weighted = Adjacency(case.adj.indptr, case.adj.indices, case.adj.eids, case.num_src,
                         case.num_dst, values=case.to_csr(w))
    layer = GCNConv(4, 3).double()
    x = features(case.num_src, 4)
    torch.testing.assert_close(layer(weighted, x), layer(case.adj, x, case.to_csr(w)))


@pytest.mark.parametrize("dims", [(6, 3), (3, 6)])
def test_sparse_features_match_dense(case, dims):
    gen = torch.Generator().manual_seed(2)
    x = torch.randn(case.num_src, dims[0], generator=gen, dtype=torch.float64)
    x = x * (torch.rand(x.shape, generator=gen) < 0.3)  # ~70% zeros, an empty row likely
    dense_layer = GCNConv(*dims).double()
    torch.nn.init.normal_(dense_layer.bias)
    sparse_layer = GCNConv(*dims).double()
    sparse_layer.load_state_dict(dense_layer.state_dict())
    out_d = dense_layer(case.adj, x)
    out_s = sparse_layer(case.adj, SparseFeatures.from_dense(x))
    torch.testing.assert_close(out_s, out_d)
    up = torch.randn(out_d.shape, generator=gen, dtype=torch.float64)
    (out_d * up).sum().backward()
    (out_s * up).sum().backward()
    torch.testing.assert_close(sparse_layer.weight.grad, dense_layer.weight.grad)
    torch.testing.assert_close(sparse_layer.bias.grad, dense_layer.bias.grad)


def test_float32_default_and_repr():
    adj = Adjacency.from_edges(torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0]), 3, 3)
    layer = GCNConv(4, 2)
    out = layer(adj, torch.randn(3, 4))
    assert out.dtype == torch.float32 and out.shape == (3, 2)
    assert "4, 2, norm='both'" in repr(layer)


def test_bad_options():
    with pytest.raises(ConfigError, match=r"norm must be one of \['both', 'none', 'right'\]"):
        GCNConv(4, 2, norm="left")  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="without a weight keeps the feature size"):
        GCNConv(4, 2, weight=False)


def test_seeded_training_is_repeatable(case):
    """Same seed, same CPU run: bitwise-identical parameters after a few dropout steps."""

    def train() -> list[torch.Tensor]:
        torch.manual_seed(0)
        conv1, conv2 = GCNConv(4, 8), GCNConv(8, 2)
        params = list(conv1.parameters()) + list(conv2.parameters())
        opt = torch.optim.Adam(params, lr=0.1)
        x = torch.randn(case.num_src, 4)
        adj = case.adj
        for _ in range(5):
            opt.zero_grad()
            h = torch.nn.functional.dropout(conv1(adj, x).relu(), 0.5)
            out = conv2(Adjacency.from_edges(torch.arange(adj.num_dst), torch.arange(adj.num_dst),
                                             adj.num_dst, adj.num_dst), h[: adj.num_dst])
            out.square().sum().backward()
            opt.step()
        return [p.detach().clone() for p in params]

    for a, b in zip(train(), train()):
        assert torch.equal(a, b)
