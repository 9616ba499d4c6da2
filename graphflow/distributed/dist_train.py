"""Sampled node-level training on a DistDGL graph (``graphflow launch``).

:class:`DistMiniBatches` is :class:`~graphflow.train.node.MiniBatches` (the same training
step, loss and metrics) whose graph lives on the DistDGL servers:

* **training**: each trainer trains on the training nodes its machine owns (by the partition
  book), every T-th of them for the machine's T trainers, as DistDGL's ``node_split``
  shares them out; every rank
  runs the same number of batches (a shorter share wraps around) so DDP's all-reduces pair
  up; features and labels come with each :class:`MiniBatch` from the servers;
* **prediction** (``logits()``): each trainer computes the rows of its own nodes by
  full-neighbor sampled inference (fanout -1 at every layer, ``inference_batch_size`` nodes
  at a time) and the rows of all trainers are gathered, so every rank holds the (N, C)
  logits that evaluation and rank 0's exports read; the exports carry the original ids.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
import torch.distributed as dist

from graphflow.distributed.world import World
from graphflow.errors import ConfigError, DataError
from graphflow.sampling.block import MiniBatch
from graphflow.train.node import MiniBatches


def remote_features(graph: Any, options: Any, section: str) -> torch.Tensor:
    """The stand-in of a task's (N, F) input features when they stay on the DistDGL servers:
    an empty (0, F) tensor that only gives the width (each batch brings its own rows)."""
    if getattr(options, "features", "feat") != "feat":
        raise ConfigError(f'[{section}] features = "{options.features}": under graphflow '
                          f'launch the features are the partition\'s "feat"; use features = '
                          f'"feat"')
    if getattr(options, "edge_weights", False):
        raise ConfigError(f"[{section}] edge_weights = true is not supported by the "
                          f"dist_neighbor sampler yet; set edge_weights = false")
    return torch.empty(0, graph.feature_dim)


def own_share(graph: Any, mask: torch.Tensor, world: World) -> torch.Tensor:
    """int64 ids of this trainer's share of the nodes in ``mask`` (N,) that its machine owns."""
    g = graph.graph
    gpb = g.get_partition_book()
    local = torch.zeros(graph.num_nodes, dtype=torch.bool)
    local[graph.local_nodes] = True
    mine = torch.nonzero(mask & local).squeeze(1)  # the machine's nodes
    per_machine = max(world.size // max(gpb.num_partitions(), 1), 1)
    return mine[world.local_rank % per_machine::per_machine]


def equal_length(ids: torch.Tensor, world: World) -> torch.Tensor:
    """``ids`` wrapped around to the longest share of any rank (equal DDP step counts)."""
    if not world.distributed:
        return ids
    n = torch.tensor([ids.shape[0]])
    dist.all_reduce(n, op=dist.ReduceOp.MAX)
    if int(n) == ids.shape[0]:
        return ids
    return ids[torch.arange(int(n)) % ids.shape[0]]


class DistMiniBatches(MiniBatches):
    """:class:`MiniBatches` over a ``DistGraph`` (see the module docstring)."""

    def __init__(self, *args: Any, world: World, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.world = world
        self.use_sampled_features = True  # each batch brings its rows of "feat"
        mask = torch.zeros(self.graph.num_nodes, dtype=torch.bool)
        mask[self.train_ids] = True
        mine = own_share(self.graph, mask, world)
        if mine.numel() == 0:  # the launcher sees the exit and stops the other ranks
            raise DataError(f"trainer of rank {world.rank} has no training nodes on its "
                            f"machine; partition with fewer parts or use fewer trainers")
        self.mine = equal_length(mine, world)  # (S_rank,)
        self.everyone = own_share(self.graph, torch.ones_like(mask), world)  # for logits()

    def batches(self) -> Iterator[MiniBatch]:
        yield from self.sample_epoch(self.mine)

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(N, C) float32 on the CPU: this trainer's nodes by full-neighbor sampled
        inference, the other rows gathered from every trainer."""
        module = getattr(self.model, "module", self.model)  # no DDP hooks: ranks differ in steps
        module.eval()
        dev = self.step.device
        full = [-1] * len(self.sampler.options.fanouts)
        rows = []
        for seeds in self.everyone.split(self.inference_batch_size):
            mb = self.sampler.sample(self.graph, seeds, fanouts=full)
            adjs = [self.block_adjacency(b.to(dev)) for b in mb.blocks]
            with self.step.autocast():
                rows.append(module(adjs, mb.features.to(dev)).float().cpu())  # (B, C)
        mine = torch.cat(rows) if rows else torch.empty(0, self.objective.num_classes)
        parts: list[Any] = [(self.everyone, mine)]
        if self.world.distributed:
            parts = [None] * self.world.size
            dist.all_gather_object(parts, (self.everyone, mine))
        out = torch.zeros(self.graph.num_nodes, mine.shape[1])
        for ids, value in parts:
            out[ids] = value
        return out

