"""Explanations of graph models (whole collection members) and of the layers a sampled
model runs with at inference."""

import torch
from torch import nn

from graphflow.explain.gnnexplainer import gnn_explainer
from graphflow.explain.metrics import fidelity
from graphflow.explain.pgexplainer import pg_explainer
from graphflow.explain.subgraph import computation_graphs, member_graphs
from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.model import GraphModel
from graphflow.nn.gin import GINConv
from graphflow.nn.sage import SAGEConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency

# three graphs: a triangle (nodes 0-2), a path 3-4-5-6, a pair 7-8; both directions
_UND = torch.tensor([[0, 1], [1, 2], [2, 0], [3, 4], [4, 5], [5, 6], [7, 8]])
SRC = torch.cat([_UND[:, 0], _UND[:, 1]])
DST = torch.cat([_UND[:, 1], _UND[:, 0]])
PTR = torch.tensor([0, 3, 7, 9])


def _graph_model():
    torch.manual_seed(0)
    enc = GNNStack([GINConv(nn.Linear(3, 8)), GINConv(nn.Linear(8, 8))], [3, 8, 8],
                   dropout=0.0)
    model = GraphModel(enc, [8], 2, pooling="sum", layers="last", dropout=0.0).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    adj = Adjacency.from_edges(SRC, DST, 9, 9)
    x = torch.randn(9, 3, generator=torch.Generator().manual_seed(1))
    return model, adj, x


def test_member_graphs_give_the_collection_outputs():
    model, adj, x = _graph_model()
    sel = torch.tensor([2, 0])
    units = member_graphs(adj, PTR, sel)
    assert units.node.tolist() == [7, 8, 0, 1, 2] and units.node_target.tolist() == [0, 0, 1, 1, 1]
    # each graph's edges, with the graph's edge ids, and nothing else
    assert sorted(units.edge_ids[units.edge_target == 0].tolist()) == [6, 13]
    assert sorted(units.edge_ids[units.edge_target == 1].tolist()) == [0, 1, 2, 7, 8, 9]
    out = units.outputs(model, units.adjacency(torch.ones(units.num_edges)), x[units.node])
    whole = model(GraphBatcher(adj, PTR, x).batch(torch.arange(3)))[0]
    assert torch.allclose(out, whole[sel], atol=1e-6)
    # a zero weight removes the edge: graph 2 without its edges is two lone nodes
    cut = units.outputs(model, units.adjacency((units.edge_target != 0).float()), x[units.node])
    alone = model(GraphBatcher(Adjacency.from_edges(torch.zeros(0, dtype=torch.int64),
                                                    torch.zeros(0, dtype=torch.int64), 2, 2),
                               torch.tensor([0, 2]), x[7:9]).batch(torch.tensor([0])))[0]
    assert torch.allclose(cut[0], alone[0], atol=1e-6)


def test_methods_explain_graph_targets():
    model, adj, x = _graph_model()
    targets = torch.tensor([1, 0])
    exp = gnn_explainer(model, adj, x, targets, hops=2, epochs=5, graph_ptr=PTR)
    assert sorted(exp.edge_ids[exp.edge_target == 0].tolist()) == [3, 4, 5, 10, 11, 12]
    assert exp.feature_mask.shape == (2, 3) and exp.edge_mask.numel() == 12
    z = model.encoder(adj, x)
    pg = pg_explainer(model, adj, x, targets, hops=2, embeddings=z, epochs=2,
                      graph_ptr=PTR)
    assert torch.equal(pg.edge_ids, exp.edge_ids) and torch.equal(pg.edge_target,
                                                                  exp.edge_target)
    plus, minus = fidelity(model, adj, x, exp, 2, edge_mask=exp.top_k(2).float(),
                           graph_ptr=PTR)
    assert 0.0 <= plus <= 1.0 and 0.0 <= minus <= 1.0


def test_a_sage_model_computes_the_full_graph_outputs_on_the_union():
    # what a neighbour-sampled SAGE model runs at inference: full neighbourhoods (mean)
    gen = torch.Generator().manual_seed(0)
    src, dst = torch.randint(30, (100,), generator=gen), torch.randint(30, (100,), generator=gen)
    adj = Adjacency.from_edges(src, dst, 30, 30)
    x = torch.randn(30, 3, generator=gen)
    torch.manual_seed(0)
    model = GNNStack([SAGEConv(3, 8), SAGEConv(8, 2)], [3, 8, 2]).eval()
    targets = torch.tensor([0, 5, 29])
    cg = computation_graphs(adj, targets, 2)
    out = cg.outputs(model, cg.adjacency(torch.ones(cg.num_edges)), x[cg.node])
    assert torch.allclose(out, model(adj, x)[targets], atol=1e-5)
