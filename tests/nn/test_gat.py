import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.nn import GATConv
from graphflow.sparse import SparseFeatures


def pair(in_dim: int, out_dim: int, heads: int, residual: bool = False, bias: bool = True,
         negative_slope: float = 0.2, feat_drop: float = 0.0, attn_drop: float = 0.0):
    ref = dgl.nn.GATConv(in_dim, out_dim, heads, feat_drop=feat_drop, attn_drop=attn_drop,
                         negative_slope=negative_slope, residual=residual,
                         allow_zero_in_degree=True, bias=bias).double()
    for name, p in ref.named_parameters():
        if "bias" in name:
            torch.nn.init.normal_(p)  # DGL zero-initialises biases: make them visible
    ours = GATConv(in_dim, out_dim, heads, feat_drop=feat_drop, attn_drop=attn_drop,
                   negative_slope=negative_slope, residual=residual, bias=bias).double()
    ours.load_state_dict(ref.state_dict())  # same names: fc, attn_l, attn_r, res_fc, bias
    return ours, ref


@pytest.mark.parametrize("heads", [1, 3])
@pytest.mark.parametrize("residual, in_dim", [(False, 5), (True, 5), (True, 6)],
                         ids=["plain", "linear-residual", "identity-residual"])
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_dgl_gatconv(case, features, compare, heads, residual, in_dim, bias, weighted):
    out_dim = 6 // heads if in_dim == 6 else 2  # identity residual needs in == heads * out
    ours, ref = pair(in_dim, out_dim, heads, residual=residual, bias=bias, negative_slope=0.1)
    x = features(case.num_src, in_dim)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    ref_params = dict(ref.named_parameters())
    grads = {"x": (x1, x2)}
    grads.update({name: (p, ref_params[name]) for name, p in ours.named_parameters()})
    assert set(ref_params) == {name for name in grads if name != "x"}
    if weighted:
        w = torch.rand(case.g.num_edges(), dtype=torch.float64) + 0.5
        w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
        out = ours(case.adj, x1, case.to_csr(w1))
        expected = ref(case.g, x2, edge_weight=w2)
        grads["edge_weight"] = (w1, w2)
    else:
        out, expected = ours(case.adj, x1), ref(case.g, x2)
    assert out.shape == (case.num_dst, heads, out_dim)
    compare(out, expected, grads)


def test_attention_dropout_one_leaves_residual_and_bias(case, features):
    ours, _ = pair(4, 2, 2, residual=True, attn_drop=1.0)
    x = features(case.num_src, 4)
    out = ours(case.adj, x)  # training mode: every attention coefficient dropped
    res = x[: case.num_dst].view(-1, 2, 2) + ours.bias.view(1, 2, 2)  # identity residual
    torch.testing.assert_close(out, res)
    ours.eval()
    assert not torch.allclose(ours(case.adj, x), res)


def test_feat_drop_matches_dgl_with_the_same_mask(case, features):
    ours, ref = pair(4, 2, 2, feat_drop=0.4)
    x = features(case.num_src, 4)
    torch.manual_seed(9)
    out = ours(case.adj, x)
    torch.manual_seed(9)
    torch.testing.assert_close(out, ref(case.g, x))


@pytest.mark.parametrize("residual, in_dim", [(False, 6), (True, 6), (True, 5)])
def test_sparse_features_match_dense(case, residual, in_dim):
    gen = torch.Generator().manual_seed(6)
    x = torch.randn(case.num_src, in_dim, generator=gen, dtype=torch.float64)
    x = x * (torch.rand(x.shape, generator=gen) < 0.3)
    layer, _ = pair(in_dim, 3, 2, residual=residual)
    twin, _ = pair(in_dim, 3, 2, residual=residual)
    twin.load_state_dict(layer.state_dict())
    out_d, out_s = layer(case.adj, x), twin(case.adj, SparseFeatures.from_dense(x))
    torch.testing.assert_close(out_s, out_d)
    out_d.square().sum().backward()
    out_s.square().sum().backward()
    for name, p in layer.named_parameters():
        torch.testing.assert_close(dict(twin.named_parameters())[name].grad, p.grad)
