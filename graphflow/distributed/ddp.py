"""DDP pieces of training: the wrapped model and sharded epochs.

:class:`GraphDDP` is torch's ``DistributedDataParallel`` (gradients averaged across ranks
during ``backward``) that also answers the wrapped model's own attributes (``inference``,
``num_layers``), so the training passes of :mod:`graphflow.train.node` take it unchanged.
Checkpoints and artifacts keep the plain model (no ``module.`` prefix): a data-parallel
checkpoint loads into a single-process run and back.

:class:`ShardedMiniBatches` splits each epoch's shuffled seeds across ranks (every rank
draws the same permutation, then keeps its equal share) before the sampler batches them.

Link prediction: :func:`wrap_link` gives the passes of :mod:`graphflow.linkpred.train` a
:class:`~graphflow.linkpred.decoders.LinkModel`-shaped model whose encoder call goes through
DDP (so the decoder's gradients are averaged too); :class:`ShardedEdgeBatches` and
:class:`ShardedDraw` give each rank its share of the positive edges, with negatives of its
own. The graph tasks shard each batch of graphs with
:meth:`~graphflow.distributed.world.World.shard_batches`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import torch
from torch import nn
from torch.nn.parallel import DistributedDataParallel

from graphflow.distributed.world import World
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.edges import EdgeBatches, EdgeMiniBatch, NegativeDraw
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


def wrap(model: nn.Module, world: World, device: torch.device, *,
         sync_buffers: bool = True) -> nn.Module:
    """``model`` for training: DDP-wrapped in a data-parallel run, else itself.
    ``sync_buffers = False``: each rank keeps its own buffers (batch-norm statistics of its
    share of the batches) instead of taking rank 0's at every forward, until the task
    averages them (:meth:`~graphflow.distributed.world.World.average_buffers`)."""
    if not world.distributed:
        return model
    ids = [device.index] if device.type == "cuda" else None
    if sync_buffers:
        return GraphDDP(model, device_ids=ids)
    return GraphDDP(model, device_ids=ids, forward_sync_buffers=False)


class _Encode(nn.Module):
    """A link model whose forward is its encoder's: DDP of it covers the decoder's
    parameters too (they get gradients in the same backward)."""

    def __init__(self, link: nn.Module):
        super().__init__()
        self.link = link

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.link.encoder(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        try:
            return super().__getattr__(name)
        except AttributeError:
            if name == "link":
                raise
            return getattr(self.link.encoder, name)  # inference, accepts_rows, num_layers


class LinkDDP(nn.Module):
    """A :class:`~graphflow.linkpred.decoders.LinkModel` seen through DDP: ``encoder(...)``
    (and calling the view itself) runs the encoder through ``DistributedDataParallel``,
    ``decoder`` is the model's own, ``encoder.inference`` the encoder's. The passes take it
    in place of the model."""

    def __init__(self, link: nn.Module, device: torch.device):
        super().__init__()
        ids = [device.index] if device.type == "cuda" else None
        self.encoder = GraphDDP(_Encode(link), device_ids=ids)
        self.decoder = link.decoder

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        return self.encoder(*args, **kwargs)


def wrap_link(model: nn.Module, world: World, device: torch.device) -> nn.Module:
    """A link model for training: :class:`LinkDDP` in a data-parallel run, else itself."""
    return LinkDDP(model, device) if world.distributed else model


class ShardedEdgeBatches(EdgeBatches):
    """:class:`EdgeBatches` whose epochs cover this rank's share of the shuffled training
    edges (every rank draws the same permutation and keeps its equal share, as
    :class:`ShardedMiniBatches`), each batch sampled and given negatives with a generator of
    this rank's own (the shared per-batch seed salted by the rank)."""

    def __init__(self, *args: Any, world: World, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.world = world

    def iterate(self, eids: torch.Tensor, generator: torch.Generator | None = None,
                **kwargs: Any) -> Iterator[EdgeMiniBatch]:
        order = torch.randperm(eids.shape[0], generator=generator)
        mine = self.world.shard(eids[order])  # (ceil(E / size),), disjoint across ranks
        return super().iterate(mine, generator, **kwargs)

    def sample(self, eids: torch.Tensor, generator: torch.Generator | None,
               gather: int | None = None, rows: bool = False) -> EdgeMiniBatch:
        if generator is not None and self.world.rank:
            seed = (generator.initial_seed() + self.world.rank * 0x9E3779B97F4A7C15) % 2**63
            generator = torch.Generator(device=generator.device).manual_seed(seed)
        return super().sample(eids, generator, gather, rows)


class ShardedDraw:
    """Full-batch negatives for this rank's share of the positives: ``draw`` runs over every
    positive's source (the same generator use on every rank, as in one process) and the rows
    of this rank's positives are kept, so the ranks' negatives together are one process's.

    :param draw: the negative sampler, ``draw(src, k, generator) -> (P * k,)``.
    :param src: int64 (P,) every positive's source.
    :param mine: int64 (p,) the positions of this rank's positives in ``src``.
    """

    def __init__(self, draw: NegativeDraw, src: torch.Tensor, mine: torch.Tensor):
        self.draw, self.src, self.mine = draw, src, mine

    def __call__(self, src: torch.Tensor, k: int, generator: torch.Generator) -> torch.Tensor:
        every = self.draw(self.src, k, generator).view(-1, k)  # (P, k)
        return every[self.mine.to(every.device)].reshape(-1)  # (p * k,)


class ShardedMiniBatches(MiniBatches):
    """:class:`MiniBatches` whose epochs cover this rank's share of the shuffled seeds."""

    def __init__(self, *args: Any, world: World, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.world = world

    def batches(self) -> Iterator[MiniBatch]:
        order = torch.randperm(self.train_ids.shape[0], generator=self.generator)
        mine = self.world.shard(self.train_ids[order])  # (ceil(S / size),), disjoint across ranks
        yield from self.sample_epoch(mine)
