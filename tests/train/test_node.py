"""MiniBatches: sampled node training asks for IndexedRows features when it can, and trains
exactly as on gathered features."""

from __future__ import annotations

import torch

from graphflow.compat.dgl import dgl
from graphflow.io.synthetic import sbm
from graphflow.graph import GraphData, NodeIds
from graphflow.nn.gcn import GCNConv
from graphflow.nn.sage import SAGEConv
from graphflow.nn.stack import GNNStack
from graphflow.sampling.sampler import NeighborOptions
from graphflow.sparse import Adjacency
from graphflow.train.node import MiniBatches, takes_keyword
from graphflow.train.objective import Objective
from graphflow.train.step import Step
from graphflow_plugins.samplers.neighbor import NeighborSampler

CPU = torch.device("cpu")


def runner(model, hide_rows: bool = False) -> MiniBatches:
    gen = sbm(300, 3, 10, p_in=0.05, p_out=0.005, seed=2)
    g = dgl.graph((gen.src, gen.dst), num_nodes=300)
    g.ndata["feat"], g.ndata["label"] = gen.feat, gen.label
    sampler = NeighborSampler(NeighborOptions(fanouts=[4, 4], batch_size=50))
    graph = sampler.prepare(GraphData(g, NodeIds.identity(300)), CPU)
    if hide_rows:  # a sampler whose iterate() has no rows parameter (e.g. a third party's)
        iterate = sampler.iterate
        sampler.iterate = lambda graph, seeds, generator=None, *, workers=None: iterate(
            graph, seeds, generator, workers=workers)
    step = Step(model, torch.optim.SGD(model.parameters(), lr=0.1), CPU)
    adj = Adjacency.from_edges(gen.src, gen.dst, 300, 300)
    return MiniBatches(model, step, Objective.for_nodes(3, False), adj, gen.feat, gen.label,
                       torch.arange(0, 300, 2), sampler=sampler, graph=graph,
                       generator=torch.Generator().manual_seed(0), use_sampled_features=True,
                       inference_batch_size=100, workers=0)


def sage() -> GNNStack:
    torch.manual_seed(0)
    return GNNStack([SAGEConv(10, 16), SAGEConv(16, 3)], [10, 16, 3], dropout=0.0)


def test_rows_are_asked_for_only_when_model_and_sampler_take_them():
    assert runner(sage()).rows
    assert not runner(sage(), hide_rows=True).rows
    torch.manual_seed(0)
    assert not runner(GNNStack([GCNConv(10, 16), GCNConv(16, 3)], [10, 16, 3])).rows
    assert takes_keyword(lambda *, rows=False: None, "rows")
    assert takes_keyword(lambda **kw: None, "rows") and not takes_keyword(None, "rows")


def test_training_on_rows_is_exactly_training_on_gathered_features():
    results = []
    for hide in (False, True):
        r = runner(sage(), hide_rows=hide)
        logs = [r.train_epoch(e) for e in range(2)]
        results.append((logs, [p.detach().clone() for p in r.model.parameters()]))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        assert torch.equal(a, b)
