"""Who this process is in a data-parallel run, and the collectives a task needs.

A run started by ``graphflow run --nproc N`` or ``torchrun -m graphflow run`` sees torch's
launcher environment (``RANK``, ``WORLD_SIZE``, ``LOCAL_RANK``, ``MASTER_ADDR``,
``MASTER_PORT``); :meth:`World.from_env` reads it. A plain run gets ``World()``: rank 0 of 1,
no process group, and every method below is the identity, so single-process code paths do
not change.

Backends: gloo on the CPU; NCCL on CUDA, with each worker on ``cuda:LOCAL_RANK``.

Conventions that keep ranks in lockstep (a rank that takes another branch hangs the others):

* every rank draws the same shuffle from the same seeded generator, then keeps its share
  (:meth:`World.shard`): equal sizes, so equal batch counts and equal DDP steps;
* evaluation rows are gathered (:meth:`World.gather`), so every rank computes the same
  validation score and takes the same early-stopping and best-model decisions;
* only rank 0 writes files (``run.json``, ``metrics.jsonl``, checkpoints, exports).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import torch
import torch.distributed as dist

from graphflow.errors import ConfigError, DeviceError
from graphflow.runtime.signals import Terminated, stopped_together

if TYPE_CHECKING:
    from graphflow.config import PipelineConfig

LAUNCHER_ENV = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")
TIMEOUT = timedelta(minutes=10)  # a collective waiting longer than this fails instead of hanging


@dataclass
class World:
    """This process's place in a data-parallel run (``World()``: a single process).

    :ivar rank: global rank, 0..size-1.
    :ivar size: number of workers.
    :ivar local_rank: rank on this machine (its CUDA device).
    :ivar backend: ``"gloo"`` or ``"nccl"``; None for a single process.
    :ivar replicas: per training section, each rank's parameter digest after training.
    """

    rank: int = 0
    size: int = 1
    local_rank: int = 0
    backend: str | None = None
    replicas: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def from_env(cls, device: torch.device, env: Mapping[str, str] | None = None) -> World:
        """The world torch's launcher describes in ``env`` (default ``os.environ``); a single
        process when it describes none. ``device`` (the run's) picks the backend."""
        env = os.environ if env is None else env
        if "RANK" not in env or "WORLD_SIZE" not in env:
            return cls()
        missing = [k for k in LAUNCHER_ENV if k not in env]
        if missing:
            raise ConfigError(f"RANK and WORLD_SIZE are set but not {', '.join(missing)}; start "
                              f"data-parallel runs with graphflow run --nproc N or torchrun")
        try:
            rank, size, local = int(env["RANK"]), int(env["WORLD_SIZE"]), int(env["LOCAL_RANK"])
        except ValueError:
            raise ConfigError(f"RANK={env['RANK']!r}, WORLD_SIZE={env['WORLD_SIZE']!r}, "
                              f"LOCAL_RANK={env['LOCAL_RANK']!r}: expected integers") from None
        return cls(rank=rank, size=size, local_rank=local,
                   backend="nccl" if device.type == "cuda" else "gloo")

    @property
    def distributed(self) -> bool:
        return self.backend is not None

    @property
    def is_main(self) -> bool:
        """Rank 0: the one process that writes files and talks to the user."""
        return self.rank == 0

    def place(self, device: torch.device) -> torch.device:
        """The device of this worker: ``cuda:LOCAL_RANK`` on CUDA, else ``device``."""
        if not self.distributed or device.type != "cuda":
            return device
        if self.local_rank >= torch.cuda.device_count():
            raise DeviceError(f"LOCAL_RANK {self.local_rank} has no GPU: this machine has "
                              f"{torch.cuda.device_count()}; start at most that many workers")
        return torch.device("cuda", self.local_rank)

    @contextmanager
    def group(self, device: torch.device) -> Iterator[World]:
        """Join the process group for the block (nothing for a single process)."""
        if not self.distributed or dist.is_initialized():
            yield self
            return
        if device.type == "cuda":
            torch.cuda.set_device(device)
        from graphflow.distributed import distdgl

        if distdgl.is_trainer():  # graphflow launch: DGL must connect before torch's group
            distdgl.initialize()
        dist.init_process_group(self.backend, rank=self.rank, world_size=self.size,
                                timeout=TIMEOUT)
        try:
            yield self
        except Terminated:
            # Stopped by agreement (graphflow.runtime.signals.agree): every rank is here, so they
            # leave together as after a finished run (rank 0 is still writing run.json)
            if stopped_together():
                dist.barrier()
            raise
        else:
            # Leave together: a rank that tears its group down and exits while another is
            # still inside a collective or writing the run's files can abort the process
            # ("terminate called without an active exception", SIGABRT).
            dist.barrier()
        finally:
            dist.destroy_process_group()
            global _left_group
            _left_group = not distdgl.is_trainer()  # DGL's trainers leave through its atexit

    def describe(self) -> dict[str, Any]:
        """What ``run.json`` records about the run's processes."""
        out: dict[str, Any] = {"world_size": self.size, "backend": self.backend}
        if self.replicas:
            out["replica_digests"] = self.replicas
        return out

    # --- collectives (identity for a single process) ----------------------------------

    def shard(self, ids: torch.Tensor) -> torch.Tensor:
        """This rank's share of ``ids`` (S,): every ``size``-th entry from ``rank``, after
        wrapping the start around to make ``S`` a multiple of ``size`` (as DGL's DDP
        loader), so every rank gets ``ceil(S / size)`` ids."""
        if not self.distributed or ids.numel() == 0:
            return ids
        per = -(-ids.shape[0] // self.size)
        ids = ids[torch.arange(per * self.size) % ids.shape[0]]  # (per * size,)
        return ids[self.rank::self.size]  # (per,)

    def gather(self, *rows: torch.Tensor) -> tuple[torch.Tensor, ...]:
        """Each tensor's rows owned by this rank (``rank::size``, unpadded), gathered from
        every rank and concatenated in rank order: the same rows on every rank, each exactly
        once (in another order than the input's)."""
        if not self.distributed:
            return rows
        mine = [r[self.rank::self.size].cpu() for r in rows]
        everyone: list[Any] = [None] * self.size
        dist.all_gather_object(everyone, mine)
        device = rows[0].device
        return tuple(torch.cat([part[i] for part in everyone]).to(device)
                     for i in range(len(rows)))

    def shard_batches(self, ids: torch.Tensor, batch_size: int,
                      generator: torch.Generator | None = None) -> tuple[torch.Tensor, int]:
        """This rank's share of one epoch's batches: ``ids`` (S,) shuffled by ``generator``
        (the same permutation on every rank; none: in order), cut ``batch_size`` at a time as
        one process cuts them, and each batch sharded as :meth:`shard` does. Returns
        ``(mine, per)``: cutting ``mine`` ``per`` at a time gives this rank's part of each
        batch, ``per = ceil(batch_size / size)`` (the last part may be smaller). Every rank
        gets the same number of non-empty parts, so DDP steps stay in lockstep, and the
        global batch is ``batch_size``, as in one process."""
        if generator is not None:
            ids = ids[torch.randperm(ids.shape[0], generator=generator)]
        if not self.distributed or ids.numel() == 0:
            return ids, batch_size
        per = -(-batch_size // self.size)
        full = ids.shape[0] // batch_size * batch_size
        head = ids[:full].view(-1, batch_size)  # (batches, batch_size)
        wrap = torch.arange(per * self.size, device=ids.device) % batch_size  # (per * size,)
        mine = head[:, wrap][:, self.rank::self.size].reshape(-1)  # (batches * per,)
        return torch.cat([mine, self.shard(ids[full:])]), per

    def seed_rank(self, generator: torch.Generator) -> None:
        """Data-parallel: seed this process's global torch generator (dropout masks) from one
        draw of ``generator`` (shared by the ranks, in lockstep) plus the rank, so that ranks
        training on different parts of a batch drop independently, as one process does over
        the whole batch; reproducible, and after ``--resume`` too (the loop restores
        ``generator``). Nothing for a single process (its draws stay as they were)."""
        if not self.distributed:
            return
        seed = int(torch.randint(2**62, (1,), generator=generator))
        torch.manual_seed(seed + self.rank)

    def in_shares(self, ids: torch.Tensor,
                  compute: Callable[[torch.Tensor], tuple[torch.Tensor, ...]]
                  ) -> tuple[torch.Tensor, ...]:
        """``compute(ids)`` with each rank computing the rows of its share of ``ids``
        (``rank::size``), gathered back into the order of ``ids`` on every rank: the same
        tensors everywhere (evaluation, predictions). Fewer ids than ranks: every rank
        computes them all."""
        if not self.distributed or ids.shape[0] < self.size:
            return compute(ids)
        mine = compute(ids[self.rank::self.size])
        everyone: list[Any] = [None] * self.size
        dist.all_gather_object(everyone, [t.cpu() for t in mine])
        out = []
        for i, t in enumerate(mine):
            whole = t.new_empty((ids.shape[0], *t.shape[1:]), device="cpu")  # (S, ...)
            for rank, part in enumerate(everyone):
                whole[rank::self.size] = part[i]
            out.append(whole.to(t.device))
        return tuple(out)

    def average_buffers(self, module: torch.nn.Module) -> None:
        """Average ``module``'s floating-point buffers (batch-norm running statistics) over
        the ranks, which updated them from their own shares of the batches; other buffers
        (counts) are equal on every rank already. Nothing for a single process."""
        if not self.distributed:
            return
        bufs = [b for b in module.buffers() if b.is_floating_point()]
        if not bufs:
            return
        flat = torch.cat([b.detach().reshape(-1).float() for b in bufs])  # (total,)
        dist.all_reduce(flat)
        flat /= self.size
        start = 0
        for b in bufs:
            b.copy_(flat[start:start + b.numel()].view_as(b))
            start += b.numel()

    def check_replicas(self, section: str, module: torch.nn.Module) -> list[str]:
        """Gather every rank's parameter digest into ``replicas[section]``; return them
        (nothing for a single process)."""
        if not self.distributed:
            return []
        digest = state_digest(module.state_dict())
        everyone: list[Any] = [None] * self.size
        dist.all_gather_object(everyone, digest)
        self.replicas[section] = [str(d) for d in everyone]
        return self.replicas[section]


_left_group = False


def left_group() -> bool:
    """True once this process has left a torch.distributed process group of its own.

    Such a process should end with ``os._exit`` once its output is flushed (``graphflow``'s
    ``main`` does): ``destroy_process_group`` only drops ``torch.distributed``'s own
    references, DDP's reducer still holds the gloo group, and freeing it during interpreter
    finalisation intermittently aborts the worker ("terminate called without an active
    exception", SIGABRT, exit -6) after a run that finished and wrote everything (seen about
    once per full test suite; pytorch/pytorch#179291 describes the same teardown race).
    A DistDGL trainer under ``graphflow launch`` is left alone: DGL tells its servers goodbye
    from an ``atexit`` handler."""
    return _left_group


def state_digest(state: Mapping[str, Any]) -> str:
    """sha256 (16 hex digits) of a ``state_dict``'s names, shapes, dtypes and values."""
    h = hashlib.sha256()
    for name in sorted(state):
        value = state[name]
        h.update(name.encode())
        if isinstance(value, torch.Tensor):
            t = value.detach().cpu().contiguous()
            h.update(f"{t.dtype}{tuple(t.shape)}".encode())
            h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes() if t.numel() else b"")
        else:
            h.update(repr(value).encode())
    return h.hexdigest()[:16]


def check_data_parallel(config: PipelineConfig, nproc: int) -> None:
    """Raise ``ConfigError`` unless every training stage of ``config`` can run on ``nproc``
    data-parallel workers: its task class sets ``supports_distributed`` and declares no
    ``--nproc`` refusal for the stage (e.g. node classification on a typed graph), in the
    task's one line (:func:`graphflow.capabilities.refusal`). ``graphflow run`` checks this
    through :func:`graphflow.capabilities.check_pipeline` when it reads the pipeline;
    ``graphflow launch`` and the workers call it before anything starts."""
    if nproc <= 1:
        return
    from graphflow.capabilities import refusal, stage_is_typed

    for train in config.train:
        r = refusal(train.task.info.cls, "nproc", typed=stage_is_typed(train),
                    sampled=train.sample is not None)
        if r is not None:
            raise ConfigError(r.line(train.task.section, train.task.type))
