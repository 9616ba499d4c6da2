import copy

import pytest
import torch
from torch import nn

from graphflow.compat.dgl import dgl
from graphflow.nn import GINConv
from graphflow.sparse import SparseFeatures


def mlp(in_dim: int, out_dim: int) -> nn.Module:
    return nn.Sequential(nn.Linear(in_dim, 8), nn.ReLU(), nn.Linear(8, out_dim))


def pair(make_mlp, eps: float, learn_eps: bool):
    torch.manual_seed(0)
    ref_mlp = make_mlp()
    ours_mlp = make_mlp()
    if ref_mlp is not None:
        ours_mlp.load_state_dict(ref_mlp.state_dict())
    ref = dgl.nn.GINConv(ref_mlp, "sum", init_eps=eps, learn_eps=learn_eps).double()
    ours = GINConv(ours_mlp, eps=eps, learn_eps=learn_eps).double()
    return ours, ref


@pytest.mark.parametrize("make_mlp", [lambda: mlp(4, 3), lambda: nn.Linear(4, 3), lambda: None],
                         ids=["mlp", "linear", "none"])
@pytest.mark.parametrize("eps, learn_eps", [(0.0, False), (0.3, True), (-0.2, False)])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_dgl_ginconv(case, features, compare, make_mlp, eps, learn_eps, weighted):
    ours, ref = pair(make_mlp, eps, learn_eps)
    x = features(case.num_src, 4)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    grads = {"x": (x1, x2)}
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        grads[name] = (p, ref_params[name.replace("mlp.", "apply_func.")])
    if weighted:
        w = torch.rand(case.g.num_edges(), dtype=torch.float64) + 0.5
        w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
        out, expected = ours(case.adj, x1, case.to_csr(w1)), ref(case.g, x2, edge_weight=w2)
        grads["edge_weight"] = (w1, w2)
    else:
        out, expected = ours(case.adj, x1), ref(case.g, x2)
    assert out.shape[0] == case.num_dst
    assert ("eps" in dict(ours.named_parameters())) is learn_eps
    compare(out, expected, grads)


@pytest.mark.parametrize("make_mlp", [lambda: mlp(5, 2), lambda: nn.Linear(5, 2), lambda: None,
                                      lambda: nn.Sequential(nn.ReLU(), nn.Linear(5, 2))],
                         ids=["mlp", "linear", "none", "not-linear-first"])
def test_sparse_features_match_dense(case, make_mlp):
    gen = torch.Generator().manual_seed(4)
    x = torch.randn(case.num_src, 5, generator=gen, dtype=torch.float64)
    x = x * (torch.rand(x.shape, generator=gen) < 0.3)
    dense_layer, _ = pair(make_mlp, 0.25, True)
    sparse_layer = copy.deepcopy(dense_layer)
    out_d = dense_layer(case.adj, x)
    out_s = sparse_layer(case.adj, SparseFeatures.from_dense(x))
    torch.testing.assert_close(out_s, out_d)
    out_d.square().sum().backward()
    out_s.square().sum().backward()
    dense_params = dict(dense_layer.named_parameters())
    for name, p in sparse_layer.named_parameters():
        torch.testing.assert_close(p.grad, dense_params[name].grad)


def test_reset_parameters_restores_eps():
    layer = GINConv(nn.Linear(3, 3), eps=0.5, learn_eps=True)
    with torch.no_grad():
        layer.eps.fill_(2.0)
    layer.reset_parameters()
    assert layer.eps.item() == 0.5


def test_fixed_eps_follows_the_buffer(case):
    """A fixed epsilon is read as a float once, and again after a state dict, a reset or a
    move replaces or changes the buffer."""
    x = torch.randn(case.num_src, 3, dtype=torch.float64)
    base = GINConv(None, eps=0.0).double()
    agg = base(case.adj, x) - x[: case.num_dst]  # the neighbours' sum
    layer = GINConv(None, eps=0.0).double()
    torch.testing.assert_close(layer(case.adj, x), agg + x[: case.num_dst])
    layer.load_state_dict({"eps": torch.tensor([0.5])})
    torch.testing.assert_close(layer(case.adj, x), agg + 1.5 * x[: case.num_dst])
    layer.load_state_dict({"eps": torch.tensor([-1.0])}, assign=True)  # a new tensor
    torch.testing.assert_close(layer(case.adj, x), agg)
    layer.reset_parameters()
    torch.testing.assert_close(layer(case.adj, x), agg + x[: case.num_dst])
