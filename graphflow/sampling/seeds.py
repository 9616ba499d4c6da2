"""Seed checks and seed batching, shared by every minibatch sampler.

A bad seed batch is a user error with one clear message (``DataError`` / ``DeviceError``),
never an index error deep inside a kernel.
"""

from __future__ import annotations

import torch

from graphflow.errors import DataError, DeviceError


def check_seeds(seeds: torch.Tensor, num_nodes: int, device: torch.device) -> torch.Tensor:
    """Validate one batch of seed ids and return it as int64 on ``device``.

    :param seeds: (B,) integer node ids, on the CPU or on ``device``.
    :param num_nodes: N; ids must lie in ``[0, N)``.
    :param device: the sampling device.
    :raises DataError: not a 1-D integer tensor, empty, out of range, or repeated ids.
    :raises DeviceError: on an accelerator other than ``device``.
    """
    if not isinstance(seeds, torch.Tensor):
        raise DataError(f"seeds must be a torch.Tensor of node ids, got {type(seeds).__name__}")
    if seeds.dim() != 1 or seeds.is_floating_point() or seeds.is_complex() or \
            seeds.dtype == torch.bool:
        raise DataError(f"seeds must be a 1-D tensor of integer node ids, got {seeds.dtype} "
                        f"of shape {tuple(seeds.shape)}")
    if seeds.device.type != "cpu" and not on_device(seeds, device):
        raise DeviceError(f"seeds are on {seeds.device} but the sampler samples on {device}; "
                          f"pass them on the CPU or on {device}")
    if seeds.numel() == 0:
        raise DataError("empty seed batch: a minibatch needs at least one seed node")
    lo, hi = int(seeds.min()), int(seeds.max())
    if lo < 0 or hi >= num_nodes:
        bad = lo if lo < 0 else hi
        raise DataError(f"seed id {bad} is out of range for a graph of {num_nodes} nodes "
                        f"(valid ids: 0..{num_nodes - 1})")
    uniq, counts = torch.unique(seeds, return_counts=True)
    if uniq.numel() != seeds.numel():
        dup = int(uniq[counts > 1][0])
        raise DataError(f"seed id {dup} appears {int(counts.max())} times in the batch; "
                        f"seeds must be distinct")
    return seeds.to(device=device, dtype=torch.int64)


def on_device(tensor: torch.Tensor, device: torch.device) -> bool:
    """Whether ``tensor`` lives on ``device`` (a device without index, "cuda", matches "cuda:N")."""
    return tensor.device.type == device.type and (
        device.index is None or tensor.device.index == device.index)


def seed_ids(seeds: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """Seed node ids from ids or from a bool mask (N,): int64 (S,) on the CPU."""
    if seeds.dtype == torch.bool:
        if seeds.shape != (num_nodes,):
            raise DataError(f"a seed mask must have one entry per node ({num_nodes}), "
                            f"got shape {tuple(seeds.shape)}")
        return seeds.cpu().nonzero().squeeze(1)
    return seeds.cpu().long()


def seed_batches(seeds: torch.Tensor, batch_size: int, *, shuffle: bool, drop_last: bool,
                 generator: torch.Generator | None = None) -> list[torch.Tensor]:
    """Split ``seeds`` (S,) into batches of ``batch_size`` (the last may be smaller).

    :param shuffle: permute the seeds first, with ``generator`` (a CPU generator).
    :param drop_last: leave out a last batch smaller than ``batch_size``.
    """
    if shuffle:
        seeds = seeds[torch.randperm(seeds.shape[0], generator=generator)]
    batches = list(torch.split(seeds, batch_size))
    if drop_last and batches and batches[-1].shape[0] < batch_size:
        batches.pop()
    return batches


def num_batches(num_seeds: int, batch_size: int, *, drop_last: bool) -> int:
    """How many batches :func:`seed_batches` makes of ``num_seeds`` seeds."""
    return num_seeds // batch_size if drop_last else -(-num_seeds // batch_size)
