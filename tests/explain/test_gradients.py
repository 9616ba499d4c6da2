import pytest
import torch

from graphflow.explain.gradients import gradient_attributions
from graphflow.explain.subgraph import computation_graphs
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency

pytest.importorskip("captum")


def _graph():
    gen = torch.Generator().manual_seed(0)
    src, dst = torch.randint(30, (120,), generator=gen), torch.randint(30, (120,), generator=gen)
    return Adjacency.from_edges(src, dst, 30, 30), torch.randn(30, 4, generator=gen)


def test_integrated_gradients_are_complete():
    adj, x = _graph()
    torch.manual_seed(0)
    model = GNNStack([GCNConv(4, 8), GCNConv(8, 3)], [4, 8, 3], self_loops=True,
                     activation="tanh").eval()
    targets = torch.tensor([0, 3, 11])
    exp = gradient_attributions(model, adj, x, targets, hops=2, method="ig", n_steps=100)
    cg = computation_graphs(adj, targets, 2)
    cls = exp.target_class[:, None]
    at_x = model(cg.adjacency(torch.ones(cg.num_edges)), x[cg.node])[cg.target_node]
    at_0 = model(cg.adjacency(torch.zeros(cg.num_edges)), torch.zeros_like(x[cg.node]))
    diff = (at_x.gather(1, cls) - at_0[cg.target_node].gather(1, cls)).squeeze(1).detach()
    node_sum = torch.zeros(3).index_add_(0, exp.extra["node_target"],
                                         exp.extra["node_attr"].sum(1))
    edge_sum = torch.zeros(3).index_add_(0, exp.edge_target, exp.edge_mask)
    total = node_sum + edge_sum  # each target's attributions
    assert torch.allclose(total, diff, rtol=0.01, atol=1e-4)


def test_saliency_is_the_gradient_magnitude():
    adj, x = _graph()
    torch.manual_seed(0)
    model = GNNStack([GCNConv(4, 3)], [4, 3]).eval()
    exp = gradient_attributions(model, adj, x, torch.tensor([2]), hops=1, method="saliency")
    cg = computation_graphs(adj, torch.tensor([2]), 1)
    w = torch.ones(cg.num_edges, requires_grad=True)
    out = model(cg.adjacency(w), x[cg.node])[cg.target_node[0], exp.target_class[0]]
    out.backward()
    assert torch.allclose(exp.edge_mask, w.grad.abs())
    assert (exp.edge_mask >= 0).all() and exp.feature_mask.shape == (1, 4)
