"""RGCNConv against DGL's RelGraphConv (weights copied, float64) on a small typed graph."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError
from graphflow.nn.rgcn import RGCNConv
from graphflow.nn.typed import TypedAdjacency
from graphflow.testing import make_typed_graph


def homogeneous(g):
    """DGL's entity-classification input: the graph as one type with per-relation 1/in-degree
    norms on the edges (``dgl.norm_by_dst``)."""
    g = g.clone()
    for rel in g.canonical_etypes:
        _, dst = g.edges(etype=rel)
        deg = g.in_degrees(etype=rel).double()  # float64: norm_by_dst rounds to float32
        g.edges[rel].data["norm"] = (1.0 / deg[dst]).unsqueeze(1)
    return dgl.to_homogeneous(g, edata=["norm"])


def pair(g, in_dim, out_dim, regularizer, num_bases, self_loop=True):
    ref = dgl.nn.RelGraphConv(in_dim, out_dim, len(g.canonical_etypes),
                              regularizer=None if regularizer == "none" else regularizer,
                              num_bases=num_bases, self_loop=self_loop).double()
    ours = RGCNConv(in_dim, out_dim, g.canonical_etypes, regularizer=regularizer,
                    num_bases=num_bases, self_loop=self_loop).double()
    with torch.no_grad():
        torch.nn.init.normal_(ref.h_bias)  # DGL zero-initialises: make the bias visible
        ours.weight.copy_(ref.linear_r.W)
        if regularizer == "basis":
            ours.coeff.copy_(ref.linear_r.coeff)
        if self_loop:
            ours.loop_weight.copy_(ref.loop_weight)
        ours.bias.copy_(ref.h_bias)
    return ours, ref


@pytest.mark.parametrize("regularizer,num_bases", [("basis", 2), ("basis", None),
                                                   ("bdd", 2), ("none", None)])
@pytest.mark.parametrize("dims", [(4, 6), (8, 2)])  # aggregation first / transform first
def test_matches_dgl_relgraphconv(regularizer, num_bases, dims):
    g = make_typed_graph(num_papers=12).graph
    in_dim, out_dim = dims
    ours, ref = pair(g, in_dim, out_dim, regularizer, num_bases)
    gen = torch.Generator().manual_seed(1)
    x = {t: torch.randn(g.num_nodes(t), in_dim, generator=gen, dtype=torch.float64,
                        requires_grad=True) for t in g.ntypes}
    hg = homogeneous(g)
    x_cat = torch.cat([x[t] for t in g.ntypes]).detach().requires_grad_()
    expected = ref(hg, x_cat, hg.edata[dgl.ETYPE], hg.edata["norm"])  # (N, out)
    out = ours(TypedAdjacency.from_graph(g), x)
    got = torch.cat([out[t] for t in g.ntypes])
    torch.testing.assert_close(got, expected, atol=1e-10, rtol=1e-8)
    # gradients reach every parameter and the inputs the same way
    weights = torch.randn_like(got)
    (got * weights).sum().backward()
    (expected * weights).sum().backward()
    torch.testing.assert_close(ours.weight.grad, ref.linear_r.W.grad)
    torch.testing.assert_close(torch.cat([x[t].grad for t in g.ntypes]), x_cat.grad)
    if regularizer == "basis":
        torch.testing.assert_close(ours.coeff.grad, ref.linear_r.coeff.grad)


def test_float32_parity_within_1e5():
    g = make_typed_graph(num_papers=12).graph
    ref = dgl.nn.RelGraphConv(4, 5, len(g.canonical_etypes), regularizer="basis", num_bases=3,
                              self_loop=True)
    ours = RGCNConv(4, 5, g.canonical_etypes, regularizer="basis", num_bases=3)
    ours.load_state_dict({"weight": ref.linear_r.W, "coeff": ref.linear_r.coeff,
                          "loop_weight": ref.loop_weight, "bias": ref.h_bias})
    x = {t: torch.randn(g.num_nodes(t), 4) for t in g.ntypes}
    hg = homogeneous(g)
    expected = ref(hg, torch.cat([x[t] for t in g.ntypes]), hg.edata[dgl.ETYPE],
                   hg.edata["norm"].float())
    out = ours(TypedAdjacency.from_graph(g), x)
    assert (torch.cat([out[t] for t in g.ntypes]) - expected).abs().max() < 1e-5


def test_no_self_loop_and_sum_norm():
    g = make_typed_graph(num_papers=12).graph
    ours = RGCNConv(3, 2, g.canonical_etypes, regularizer="none", norm="none",
                    self_loop=False, bias=False).double()
    x = {t: torch.randn(g.num_nodes(t), 3, dtype=torch.float64) for t in g.ntypes}
    out = ours(TypedAdjacency.from_graph(g), x)
    # by hand: the sum over relations of A_r x_src W_r
    w = ours.relation_weights()
    expect = {t: torch.zeros(g.num_nodes(t), 2, dtype=torch.float64) for t in g.ntypes}
    for r, (s, e, d) in enumerate(g.canonical_etypes):
        src, dst = g.edges(etype=(s, e, d))
        expect[d].index_add_(0, dst, x[s][src] @ w[r])
    for t in g.ntypes:
        torch.testing.assert_close(out[t], expect[t])


def test_bdd_needs_divisible_widths():
    with pytest.raises(ConfigError, match="divisible by num_bases"):
        RGCNConv(5, 4, [("a", "r", "a")], regularizer="bdd", num_bases=2)
