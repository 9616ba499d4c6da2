"""HeteroConv against DGL's HeteroGraphConv wrapping GraphConv (weights copied, float64)."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.nn import GCNConv
from graphflow.nn.hetero import HeteroConv, aggregate
from graphflow.nn.sage import SAGEConv
from graphflow.nn.typed import TypedAdjacency
from graphflow.testing import make_typed_graph


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min", "stack"])
@pytest.mark.parametrize("norm", ["both", "right"])
def test_matches_dgl_heterographconv(how, norm):
    g = make_typed_graph(num_papers=12).graph
    refs, mods = {}, {}
    for rel in g.canonical_etypes:
        ref = dgl.nn.GraphConv(4, 3, norm=norm, allow_zero_in_degree=True).double()
        torch.nn.init.normal_(ref.bias)
        ours = GCNConv(4, 3, norm=norm).double()
        with torch.no_grad():
            ours.weight.copy_(ref.weight)
            ours.bias.copy_(ref.bias)
        refs[rel], mods[rel] = ref, ours
    ref = dgl.nn.HeteroGraphConv(refs, aggregate=how)
    ours = HeteroConv(mods, aggregate=how)
    gen = torch.Generator().manual_seed(2)
    x = {t: torch.randn(g.num_nodes(t), 4, generator=gen, dtype=torch.float64)
         for t in g.ntypes}
    expected = ref(g, x)
    got = ours(TypedAdjacency.from_graph(g), x)
    assert sorted(got) == sorted(expected)
    for t in expected:
        if how == "stack":  # DGL stacks in its relation order; ours in the graph's
            got_t, exp_t = got[t].sort(1).values, expected[t].sort(1).values
        else:
            got_t, exp_t = got[t], expected[t]
        torch.testing.assert_close(got_t, exp_t)


def test_layers_reading_destinations_get_the_destination_rows():
    """SAGE's self term on a relation between two types uses the destination type's rows."""
    g = make_typed_graph(num_papers=12).graph
    rel = ("paper", "in", "venue")
    conv = SAGEConv(4, 2).double()
    ours = HeteroConv({rel: conv})
    x = {t: torch.randn(g.num_nodes(t), 4, dtype=torch.float64) for t in g.ntypes}
    out = ours(TypedAdjacency.from_graph(g), x)["venue"]
    ref = dgl.nn.SAGEConv((4, 4), 2, "mean", bias=False).double()
    with torch.no_grad():
        ref.fc_self.weight.copy_(conv.fc_self.weight)
        ref.fc_self.bias = None
        ref.fc_neigh.weight.copy_(conv.fc_neigh.weight)
    expected = ref(g[rel], (x["paper"], x["venue"])) + conv.fc_self.bias
    torch.testing.assert_close(out, expected)


def test_aggregate_single_relation_is_identity():
    t = torch.randn(3, 2)
    assert aggregate([t], "max") is t
    assert aggregate([t], "stack").shape == (3, 1, 2)
