"""The graph-batch pass: minibatches of whole graphs on one :class:`~graphflow.train.step.Step`.

:class:`GraphBatches` follows the pass protocol of :mod:`graphflow.train.step` as the node
passes (:mod:`graphflow.train.node`) and the link passes (:mod:`graphflow.linkpred.train`)
do:

* ``train_epoch(epoch) -> figures``: the learning rate of the epoch's ``lr_step`` schedule,
  then one step per shuffled batch of the training graphs (``with step.autocast(): loss``,
  ``step.step(loss)``); the figures are the mean ``loss`` over the graphs and ``lr``;
* ``predict(ids) -> (scores (n, C), embeddings (n, D))``: eval mode, under the stage's
  autocast, float32, in order.

Data-parallel (``--nproc``): each rank steps on its part of every batch
(:meth:`~graphflow.distributed.world.World.shard_batches`) with dropout masks of its own
(``seed_rank``); DDP averages the gradients, and each rank's batch-norm statistics (of its
part of each batch) are averaged after every epoch. ``predict`` scores each rank's share of
the graphs and gathers them onto every rank.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import torch
from torch import nn

from graphflow.graphs.batch import GraphBatcher
from graphflow.train.objective import Objective
from graphflow.train.step import Step


class GraphBatches:
    """Training and prediction passes over minibatches of whole graphs.

    ``net`` is what the training forward calls (the model, or its DDP wrapper) and ``model``
    the module itself (eval mode, buffers); ``labels`` the (G,) or (G, T) targets of every
    graph on the device; ``lr_at(epoch)`` the epoch's learning rate; ``autocast()`` the
    stage's autocast for prediction; ``cutters`` the batch-cutting workers and threads of
    the stage's core plan (:meth:`GraphBatcher.epoch`).
    """

    def __init__(self, model: nn.Module, net: nn.Module, step: Step, objective: Objective,
                 batcher: GraphBatcher, labels: torch.Tensor, train_ids: torch.Tensor, *,
                 world: Any, generator: torch.Generator, batch_size: int,
                 eval_batch_size: int, lr_at: Callable[[int], float],
                 autocast: Callable[[], contextlib.AbstractContextManager[Any]],
                 cutters: dict[str, int] | None = None):
        self.model, self.net, self.step, self.objective = model, net, step, objective
        self.batcher, self.labels, self.train_ids = batcher, labels, train_ids
        self.world, self.generator = world, generator
        self.batch_size, self.eval_batch_size = batch_size, eval_batch_size
        self.lr_at, self.autocast = lr_at, autocast
        self.cutters = dict(cutters or {})

    def train_epoch(self, epoch: int) -> dict[str, float]:
        """One step per batch of the shuffled training graphs; the mean ``loss`` and ``lr``."""
        lr = self.lr_at(epoch)
        if self.step.optimizer is not None:
            for group in self.step.optimizer.param_groups:
                group["lr"] = lr
        self.model.train()
        total, seen = 0.0, 0
        # the epoch's shuffled batches; data-parallel: this rank's part of each, and dropout
        # masks of its own
        mine, per = self.world.shard_batches(self.train_ids, self.batch_size, self.generator)
        self.world.seed_rank(self.generator)
        for batch in self.batcher.epoch(mine, per, **self.cutters):
            y = self.labels[batch.graphs]
            with self.step.autocast():
                score, _ = self.net(batch)
                loss = self.objective.loss(score, y)
            self.step.step(loss)
            total += loss.item() * batch.num_graphs
            seen += batch.num_graphs
        self.world.average_buffers(self.model)
        return {"loss": total / max(seen, 1), "lr": lr}

    @torch.no_grad()
    def predict(self, ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores (n, C), embeddings (n, D)) float32 of graphs ``ids`` in eval mode, in
        order; data-parallel: each rank scores its share, gathered onto every rank."""
        def scores(part: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
            was = self.model.training
            self.model.eval()
            with self.autocast():  # the stage's precision; float32 out
                out = [self.model(b) for b in self.batcher.epoch(
                    part, self.eval_batch_size, **self.cutters)]
            self.model.train(was)
            return (torch.cat([p[0] for p in out]).float(),
                    torch.cat([p[1] for p in out]).float())

        return self.world.in_shares(ids, scores)  # type: ignore[return-value]
