"""Link models' explanations: a pair's computation subgraph (both endpoints' L-hop
in-neighbourhoods) and its explanations by GNNExplainer, saliency and integrated gradients."""

import pytest
import torch

from graphflow.explain.gnnexplainer import gnn_explainer
from graphflow.explain.metrics import fidelity
from graphflow.explain.subgraph import computation_graphs, pair_graphs
from graphflow.linkpred.decoders import DotDecoder, LinkModel
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency

# a path 0 -> 1 -> 2 -> 3 -> 4 -> 5 (both directions) and a far pair 6 <-> 7
SRC = torch.tensor([0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 6, 7])
DST = torch.tensor([1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 7, 6])


def _link_model(layers=2, width=3):
    torch.manual_seed(0)
    dims = [width] + [4] * layers
    enc = GNNStack([GCNConv(a, b) for a, b in zip(dims[:-1], dims[1:])], dims,
                   self_loops=True, activation="tanh")
    return LinkModel(enc, DotDecoder()).eval()


def _graph():
    adj = Adjacency.from_edges(SRC, DST, 8, 8)
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(1))
    return adj, x


def _in_hops(node, hops):
    """Edge ids of every in-edge of every node within hops - 1 of ``node`` (by hand)."""
    near, edges = {node}, set()
    for _ in range(hops):
        new = {int(e) for e in range(len(DST)) if int(DST[e]) in near}
        edges |= new
        near |= {int(SRC[e]) for e in new}
    return edges


def test_a_pairs_subgraph_is_both_endpoints_l_hop_neighbourhoods():
    adj, _ = _graph()
    pairs = torch.tensor([[0, 6, 2], [5, 7, 2]])  # (2, P); the last pair a self-pair
    for hops in (1, 2):
        pg = pair_graphs(adj, pairs, torch.arange(3), hops)
        for b, (u, v) in enumerate(pairs.t().tolist()):
            got = sorted(pg.edge_ids[pg.edge_target == b].tolist())
            assert got == sorted(_in_hops(u, hops) | _in_hops(v, hops))  # each edge once
            assert pg.node[pg.src_node[b]] == u and pg.node[pg.dst_node[b]] == v
        # the same as the union of the endpoints' node computation subgraphs
        cg = computation_graphs(adj, pairs[:, 0], hops)
        assert set(cg.edge_ids[cg.edge_target == 0].tolist()) <= set(
            pg.edge_ids[pg.edge_target == 0].tolist())


def test_a_pairs_scores_on_its_subgraph_are_the_full_graphs():
    adj, x = _graph()
    model = _link_model()
    pairs = torch.tensor([[0, 1, 6], [5, 3, 7]])
    pg = pair_graphs(adj, pairs, torch.arange(3), 2)
    with torch.no_grad():
        out = pg.outputs(model, pg.adjacency(torch.ones(pg.num_edges)), x[pg.node])  # (3, 2)
        h = model.encoder(adj, x)
        full = model.decoder(h[pairs[0]], h[pairs[1]])
    assert torch.allclose(out[:, 1], full, atol=1e-5) and (out[:, 0] == 0).all()


def test_gnnexplainer_weighs_only_edges_within_l_hops_of_the_pair():
    adj, x = _graph()
    model = _link_model(layers=1)
    pairs = torch.tensor([[0, 6], [2, 7]])
    exp = gnn_explainer(model, adj, x, torch.arange(2), hops=1, epochs=30, pairs=pairs)
    for b, (u, v) in enumerate(pairs.t().tolist()):
        listed = set(exp.edge_ids[exp.edge_target == b].tolist())
        assert listed == _in_hops(u, 1) | _in_hops(v, 1)
    assert ((exp.edge_mask >= 0) & (exp.edge_mask <= 1)).all()
    assert exp.feature_mask.shape == (2, 3)
    # the explained class is the model's: a link when the score is positive
    with torch.no_grad():
        h = model.encoder(adj, x)
        s = model.decoder(h[pairs[0]], h[pairs[1]])
    assert exp.target_class.tolist() == (s > 0).long().tolist()
    # the whole subgraph kept: the prediction stays (fidelity- 0)
    pos, neg = fidelity(model, adj, x, exp, 1, edge_mask=torch.ones_like(exp.edge_mask),
                        pairs=pairs)
    assert neg == 0.0 and 0.0 <= pos <= 1.0


def test_integrated_gradients_of_a_pair_score_are_complete():
    pytest.importorskip("captum")
    from graphflow.explain.gradients import gradient_attributions

    adj, x = _graph()
    model = _link_model()
    pairs = torch.tensor([[0, 3], [4, 1]])
    exp = gradient_attributions(model, adj, x, torch.arange(2), hops=2, method="ig",
                                n_steps=100, pairs=pairs)
    pg = pair_graphs(adj, pairs, torch.arange(2), 2)
    with torch.no_grad():
        at_x = pg.outputs(model, pg.adjacency(torch.ones(pg.num_edges)), x[pg.node])[:, 1]
        at_0 = pg.outputs(model, pg.adjacency(torch.zeros(pg.num_edges)),
                          torch.zeros_like(x[pg.node]))[:, 1]
    node_sum = torch.zeros(2).index_add_(0, exp.extra["node_target"],
                                         exp.extra["node_attr"].sum(1))
    edge_sum = torch.zeros(2).index_add_(0, exp.edge_target, exp.edge_mask)
    assert torch.allclose(node_sum + edge_sum, at_x - at_0, rtol=0.01, atol=1e-4)
    # saliency: the score's gradient magnitude with respect to each edge weight
    sal = gradient_attributions(model, adj, x, torch.tensor([0]), hops=2, method="saliency",
                                pairs=pairs)
    one = pair_graphs(adj, pairs, torch.tensor([0]), 2)
    w = torch.ones(one.num_edges, requires_grad=True)
    one.outputs(model, one.adjacency(w), x[one.node])[0, 1].backward()
    assert torch.allclose(sal.edge_mask, w.grad.abs())


def test_a_pairs_drawing_marks_both_endpoints():
    from graphflow.explain.view import target_svg

    rows = [{"src": 3, "dst": 1, "importance": 0.9}, {"src": 4, "dst": 2, "importance": 0.5}]
    svg = target_svg("1->2", rows, "link")
    assert svg.count('fill="#e67e22"') == 2 and svg.count("<circle") == 4
