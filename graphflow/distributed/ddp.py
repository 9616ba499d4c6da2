"""DDP pieces of node-level training: the wrapped model and sharded sampled epochs.

:class:`GraphDDP` is torch's ``DistributedDataParallel`` (gradients averaged across ranks
during ``backward``) that also answers the wrapped model's own attributes (``inference``,
``num_layers``), so the training passes of :mod:`graphflow.train.node` take it unchanged.
Checkpoints and artifacts keep the plain model (no ``module.`` prefix): a data-parallel
checkpoint loads into a single-process run and back.

:class:`ShardedMiniBatches` splits each epoch's shuffled seeds across ranks (every rank
draws the same permutation, then keeps its equal share) before the sampler batches them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from graphflow.distributed.world import World
from graphflow.sampling.block import MiniBatch
from graphflow.train.node import MiniBatches


class GraphDDP(DistributedDataParallel):
    """``DistributedDataParallel`` that falls back to the wrapped module's attributes."""

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "module":
                raise
            return getattr(self.module, name)


def wrap(model: nn.Module, world: World, device: torch.device) -> nn.Module:
    """``model`` for training: DDP-wrapped in a data-parallel run, else itself."""
    if not world.distributed:
        return model
    ids = [device.index] if device.type == "cuda" else None
    return GraphDDP(model, device_ids=ids)


class ShardedMiniBatches(MiniBatches):
    """:class:`MiniBatches` whose epochs cover this rank's share of the shuffled seeds."""

    def __init__(self, *args: Any, world: World, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.world = world

    def batches(self) -> Iterator[MiniBatch]:
        order = torch.randperm(self.train_ids.shape[0], generator=self.generator)
        mine = self.world.shard(self.train_ids[order])  # (ceil(S / size),), disjoint across ranks
        yield from self.sample_epoch(mine)
