"""The graph-batch pass: the pass protocol (train_epoch -> figures, predict) on whole graphs."""

import contextlib

import torch
from torch import nn

from graphflow.compat.dgl import dgl
from graphflow.distributed.world import World
from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.passes import GraphBatches
from graphflow.sparse import Adjacency
from graphflow.train.objective import Objective
from graphflow.train.step import Step


class SumPool(nn.Module):
    """Sum of each graph's node features, then a linear map: (scores, pooled vectors)."""

    def __init__(self, in_dim: int, out_dim: int):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, batch):
        pooled = torch.zeros(batch.num_graphs, batch.x.shape[1]).index_add_(
            0, batch.segment(), batch.x)
        return self.lin(pooled), pooled


def collection(num_graphs=12):
    gen = torch.Generator().manual_seed(0)
    graphs, ptr, labels = [], [0], []
    for i in range(num_graphs):
        n = 2 + i % 4
        g = dgl.graph((torch.arange(n - 1), torch.arange(1, n)), num_nodes=n)
        g.ndata["feat"] = torch.randn(n, 3, generator=gen) + (i % 2)  # the class shifts x
        graphs.append(g)
        ptr.append(ptr[-1] + n)
        labels.append(i % 2)
    whole = dgl.batch(graphs)
    batcher = GraphBatcher(Adjacency.from_graph(whole), torch.tensor(ptr), whole.ndata["feat"])
    return batcher, torch.tensor(labels)


def make_pass(model, batcher, labels, lr_at=lambda epoch: 0.1):
    step = Step(model, torch.optim.SGD(model.parameters(), lr=0.1), torch.device("cpu"))
    return GraphBatches(model, model, step, Objective("classes", 2), batcher, labels,
                        torch.arange(8), world=World(), generator=torch.Generator().manual_seed(1),
                        batch_size=3, eval_batch_size=5, lr_at=lr_at,
                        autocast=contextlib.nullcontext)


def test_train_epoch_steps_every_batch_and_reports_the_mean_loss_and_lr():
    batcher, labels = collection()
    torch.manual_seed(0)
    model = SumPool(3, 2)
    runner = make_pass(model, batcher, labels, lr_at=lambda epoch: 0.1 / epoch)
    before = model.lin.weight.detach().clone()
    first = runner.train_epoch(1)
    assert set(first) == {"loss", "lr"} and first["lr"] == 0.1 and first["loss"] > 0
    assert not torch.equal(model.lin.weight, before)
    assert runner.train_epoch(2)["lr"] == 0.05
    assert runner.step.optimizer.param_groups[0]["lr"] == 0.05
    losses = [runner.train_epoch(e)["loss"] for e in range(3, 30)]
    assert losses[-1] < first["loss"]


def test_predict_scores_graphs_in_order_in_eval_mode():
    batcher, labels = collection()
    torch.manual_seed(0)
    model = SumPool(3, 2)
    runner = make_pass(model, batcher, labels)
    ids = torch.tensor([11, 0, 5, 7, 3, 2, 9])  # more than one eval batch, any order
    scores, emb = runner.predict(ids)
    assert scores.shape == (7, 2) and emb.shape == (7, 3) and scores.dtype == torch.float32
    one = [runner.predict(ids[i:i + 1])[0] for i in range(ids.numel())]
    torch.testing.assert_close(scores, torch.cat(one))
    assert model.training  # restored after predicting
