import copy

import pytest
import torch
from torch import nn

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.nn import GINEConv


def with_edges(case, feat: torch.Tensor):
    """``case.adj`` carrying ``feat`` (DGL edge order) as its edge features (CSR order)."""
    adj = copy.copy(case.adj)
    adj.edge_feat = case.to_csr(feat)
    return adj


@pytest.mark.parametrize("eps, learn_eps", [(0.0, False), (0.3, True), (-0.2, False)])
@pytest.mark.parametrize("with_mlp", [True, False])
def test_matches_dgl_gineconv(case, features, compare, eps, learn_eps, with_mlp):
    """Without an edge encoder the layer is DGL's GINEConv (edge features as wide as the
    node vectors): outputs and the gradients of the nodes, the edges and the MLP agree."""
    torch.manual_seed(0)
    make = (lambda: nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))) if with_mlp \
        else (lambda: None)
    ref_mlp, ours_mlp = make(), make()
    if with_mlp:
        ours_mlp.load_state_dict(ref_mlp.state_dict())
    ref = dgl.nn.GINEConv(ref_mlp, init_eps=eps, learn_eps=learn_eps).double()
    ours = GINEConv(ours_mlp, eps=eps, learn_eps=learn_eps).double()
    x, e = features(case.num_src, 4), features(case.g.num_edges(), 4)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    e1, e2 = e.clone().requires_grad_(), e.clone().requires_grad_()
    grads = {"x": (x1, x2), "edge_feat": (e1, e2)}
    ref_params = dict(ref.named_parameters())
    for name, p in ours.named_parameters():
        grads[name] = (p, ref_params[name.replace("mlp.", "apply_func.")])
    out = ours(with_edges(case, e1), x1)
    compare(out, ref(case.g, x2, e2), grads)
    assert out.shape[0] == case.num_dst


def test_edge_encoder_maps_edge_features_to_the_node_width(case, features):
    """``x'_i = (1 + eps) x_i + sum_j relu(x_j + W e_ji + b)``, written out edge by edge."""
    torch.manual_seed(0)
    enc = nn.Linear(2, 3).double()
    layer = GINEConv(None, enc, eps=0.5)
    x, e = features(case.num_src, 3), features(case.g.num_edges(), 2)
    out = layer(with_edges(case, e), x)
    src, dst = case.g.edges()
    expected = 1.5 * x[: case.num_dst].clone()
    for k in range(src.shape[0]):  # a test's loop over 12 edges, the formula itself
        expected[dst[k]] += torch.relu(x[src[k]] + enc(e[k]))
    torch.testing.assert_close(out, expected.detach())


def test_adjacency_values_scale_each_message(case, features):
    """With edge values (a weighted graph, an explainer's soft mask) ``x'_i = (1 + eps) x_i +
    sum_j w_ji relu(x_j + e_ji)``; the values get gradients (what an edge mask learns from)."""
    torch.manual_seed(0)
    layer = GINEConv(None, eps=0.5)
    x, e = features(case.num_src, 3), features(case.g.num_edges(), 3)
    w = torch.rand(case.g.num_edges(), dtype=x.dtype, requires_grad=True)  # DGL edge order
    adj = with_edges(case, e)
    adj.values = case.to_csr(w)
    out = layer(adj, x)
    src, dst = case.g.edges()
    expected = 1.5 * x[: case.num_dst].clone()
    for k in range(src.shape[0]):  # a test's loop over 12 edges, the formula itself
        expected[dst[k]] += w[k] * torch.relu(x[src[k]] + e[k])
    torch.testing.assert_close(out, expected)
    out.sum().backward()
    assert w.grad is not None and bool((w.grad != 0).any())


def test_a_graph_without_edge_features_fails_in_one_line(case, features):
    with pytest.raises(DataError, match=r"gine reads edge features, but the graph has none"):
        GINEConv(nn.Linear(4, 2))(case.adj, features(case.num_src, 4))


def test_edge_features_of_the_wrong_width_name_both_widths(case, features):
    adj = with_edges(case, features(case.g.num_edges(), 5))
    with pytest.raises(DataError, match=r"width 5 for node vectors of width 4"):
        GINEConv(None)(adj, features(case.num_src, 4))


def test_reset_parameters_resets_the_edge_encoder():
    enc = nn.Linear(2, 3)
    layer = GINEConv(nn.Linear(3, 3), enc, eps=0.1, learn_eps=True)
    with torch.no_grad():
        enc.weight.zero_()
        layer.eps.fill_(7.0)
    layer.reset_parameters()
    assert enc.weight.abs().sum() > 0 and float(layer.eps.detach()) == pytest.approx(0.1)
