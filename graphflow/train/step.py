"""The training step every pass runs, and the pass protocol.

:class:`Step` is one optimisation step, the same for every task (node, typed node, link,
graph, data-parallel and DistDGL passes): the forward pass and the loss under autocast,
``zero_grad``, ``backward`` (through a ``GradScaler`` for float16), optional gradient
clipping, and the optimizer's step::

    step = Step(model, optimizer, device, precision="bf16-mixed", clip_grad_norm=1.0)
    with step.autocast():
        out = model(adj, x)                  # (B, C), bfloat16 where autocast casts
        loss = objective.loss(out.float(), y)
    step.step(loss)                          # zero_grad, backward, clip, optimizer step

Precision (the ``precision`` option of every supervised task):

* ``"fp32"``: no autocast;
* ``"bf16-mixed"``: ``torch.autocast`` with bfloat16 on the CPU or a GPU; the parameters, the
  optimizer's state and the loss stay float32, so no gradient scaling is needed;
* ``"fp16-mixed"``: float16 autocast with a ``GradScaler`` (dynamic loss scaling), CUDA only
  (the optimizer then keeps torch's per-tensor form: the scaler unscales the gradients the
  optimizer holds);
* ``"auto"``: ``bf16-mixed`` where the hardware runs bfloat16 products natively (a CPU with
  AVX512-BF16 or AMX, :func:`cpu_has_native_bf16`; a CUDA GPU that supports bfloat16),
  else ``fp32`` (:func:`resolve_precision`).

``clip_grad_norm`` > 0 rescales the gradients so that their global L2 norm is at most that
value (``torch.nn.utils.clip_grad_norm_``, after unscaling under float16) before the step.

The pass protocol
-----------------
A training pass (``FullBatch``, ``MiniBatches``, their typed forms, the link passes, the
graph-batch pass, the data-parallel and DistDGL passes) holds the model, a :class:`Step` and
an objective (:mod:`graphflow.train.objective`), and offers:

* ``train_epoch(epoch) -> figures``: one pass over the training seeds (nodes, edges or
  graphs), each batch ``with step.autocast(): loss = ...`` then ``step.step(loss)``; the
  figures hold at least ``loss`` (the mean over the seeds);
* an evaluation forward in eval mode under the same autocast, returning float32:
  ``logits()`` (node tasks: every node, full neighbourhoods), ``embeddings()`` (link
  tasks: the encoder's node vectors) or ``predict(ids)`` (graph tasks).

:class:`~graphflow.train.loop.EpochLoop` drives ``train_epoch`` and the task's
``evaluate() -> (figures, score)``, so a run-level feature built into :class:`Step` or the
loop reaches every task.
"""

from __future__ import annotations

import contextlib
import functools
from pathlib import Path
from typing import Any, Callable, Literal, get_args

import torch
from torch import nn

from graphflow.errors import ConfigError

Precision = Literal["fp32", "bf16-mixed", "fp16-mixed", "auto"]
PRECISIONS: tuple[str, ...] = get_args(Precision)
PRECISION_HELP = (
    'Arithmetic of training and prediction: "fp32"; "bf16-mixed" (bfloat16 autocast, on the '
    'CPU or a GPU); "fp16-mixed" (float16 autocast and gradient scaling, CUDA only); "auto" '
    "(bf16-mixed on a GPU with bfloat16, and on a CPU with AVX512-BF16 or AMX where the "
    "calibration measured it faster; else fp32).")
CLIP_HELP = "Rescale the gradients to at most this global L2 norm before each step; 0 = off."

_DTYPES = {"bf16-mixed": torch.bfloat16, "fp16-mixed": torch.float16}
BF16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


@functools.lru_cache(maxsize=1)
def cpu_has_native_bf16() -> bool:
    """Whether this CPU runs bfloat16 products natively: an ``avx512_bf16`` or ``amx_bf16``
    flag in ``/proc/cpuinfo``, or torch's CPU capability naming AMX."""
    capability = str(torch.backends.cpu.get_cpu_capability()).upper()
    if "AMX" in capability or "BF16" in capability:
        return True
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    for line in text.splitlines():
        if line.startswith("flags"):
            flags = set(line.split(":", 1)[-1].split())
            return any(f in flags for f in BF16_CPU_FLAGS)
    return False


def check_precision(precision: str, *, cuda_available: bool | None = None) -> None:
    """Raise ``ValueError`` (one line, with the alternative) for a precision that is unknown
    or cannot run on this machine: ``fp16-mixed`` without CUDA. Options call this when the
    pipeline is read."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
    if cuda_available is None:
        cuda_available = torch.cuda.is_available()
    if precision == "fp16-mixed" and not cuda_available:
        raise ValueError('precision = "fp16-mixed" needs a CUDA GPU (float16 gradient scaling); '
                         'on the CPU use "bf16-mixed" (or "auto")')


def resolve_precision(precision: str, device: torch.device | str) -> tuple[str, str]:
    """The concrete precision (``fp32``, ``bf16-mixed`` or ``fp16-mixed``) for ``device``, and
    why, for ``auto``; a ``ConfigError`` for one that cannot run there."""
    device = torch.device(device)
    if precision not in PRECISIONS:
        raise ConfigError(f"precision must be one of {', '.join(PRECISIONS)}, got "
                          f"{precision!r}")
    if precision == "fp16-mixed" and device.type != "cuda":
        raise ConfigError(f'precision = "fp16-mixed" needs a CUDA device, the stage runs on '
                          f'{device}; use "bf16-mixed" (or "auto")')
    if precision != "auto":
        return precision, ""
    if device.type == "cuda":
        if torch.cuda.is_bf16_supported():
            return "bf16-mixed", "the GPU supports bfloat16"
        return "fp32", "the GPU has no bfloat16"
    if device.type == "cpu":
        if cpu_has_native_bf16():
            return "bf16-mixed", "the CPU has AVX512-BF16 or AMX"
        return "fp32", "the CPU has neither AVX512-BF16 nor AMX"
    return "fp32", f"no bfloat16 policy for {device.type}"


def uses_scaler(precision: str) -> bool:
    """Whether a concrete ``precision`` steps through a ``GradScaler`` (so the optimizer must
    keep torch's per-tensor form: ``flat_groups = False``)."""
    return precision == "fp16-mixed"


def autocast(precision: str, device: torch.device | str
             ) -> contextlib.AbstractContextManager[Any]:
    """The autocast of a concrete ``precision`` on ``device`` (a no-op for ``fp32``)."""
    dtype = _DTYPES.get(precision)
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=torch.device(device).type, dtype=dtype)


class Step:
    """One optimisation step with the run's precision and gradient clipping (see the module
    docstring).

    :param model: the module whose parameters ``clip_grad_norm`` bounds.
    :param optimizer: steps the parameters; None for a step used only to predict
        (:meth:`autocast`).
    :param device: where the model runs (the autocast device type).
    :param precision: ``fp32``, ``bf16-mixed``, ``fp16-mixed`` or ``auto`` (resolved here).
    :param clip_grad_norm: the largest global gradient L2 norm; 0 = no clipping.
    :param scaler: a ``GradScaler`` to use for ``fp16-mixed`` (default: a new one).
    """

    def __init__(self, model: nn.Module, optimizer: torch.optim.Optimizer | None,
                 device: torch.device | str, precision: str = "fp32", *,
                 clip_grad_norm: float = 0.0, scaler: torch.amp.GradScaler | None = None):
        self.model, self.optimizer = model, optimizer
        self.device = torch.device(device)
        self.precision, self.reason = resolve_precision(precision, self.device)
        if clip_grad_norm < 0:
            raise ConfigError(f"clip_grad_norm must be >= 0 (0 = off), got {clip_grad_norm}")
        self.clip_grad_norm = float(clip_grad_norm)
        self.dtype = _DTYPES.get(self.precision)  # None: float32, no autocast
        if uses_scaler(self.precision) and scaler is None:
            scaler = torch.amp.GradScaler(self.device.type)
        self.scaler = scaler if uses_scaler(self.precision) else None
        self.grad_norm: float | None = None  # the last step's norm before clipping

    def autocast(self) -> contextlib.AbstractContextManager[Any]:
        """The forward pass's autocast (a no-op in ``fp32``)."""
        return autocast(self.precision, self.device)

    def step(self, loss: torch.Tensor) -> None:
        """``zero_grad``, ``backward``, clipping and the optimizer's step for ``loss``."""
        optimizer = self.optimizer
        if optimizer is None:
            raise RuntimeError("Step.step needs an optimizer (this one only predicts)")
        optimizer.zero_grad(set_to_none=True)
        if self.scaler is None:
            loss.backward()
            self._clip()
            optimizer.step()
            return
        self.scaler.scale(loss).backward()
        if self.clip_grad_norm > 0:
            self.scaler.unscale_(optimizer)  # clip the true gradients
            self._clip()
        self.scaler.step(optimizer)
        self.scaler.update()

    def __call__(self, compute: Callable[[], tuple[torch.Tensor, Any]]) -> tuple[torch.Tensor, Any]:
        """Run ``compute() -> (loss, extra)`` under autocast, step on ``loss``, return both."""
        with self.autocast():
            loss, extra = compute()
        self.step(loss)
        return loss, extra

    def _clip(self) -> None:
        if self.clip_grad_norm > 0:
            params = [p for p in self.model.parameters() if p.grad is not None]
            norm = torch.nn.utils.clip_grad_norm_(params, self.clip_grad_norm)
            self.grad_norm = float(norm)


class Tally:
    """Means over an epoch's batches, each figure weighted by its batch's size."""

    def __init__(self) -> None:
        self.sums: dict[str, float] = {}
        self.seen = 0

    def add(self, n: int, **figures: float) -> None:
        """Add a batch of ``n`` seeds (nodes, edges, graphs) with its ``figures``."""
        for name, value in figures.items():
            self.sums[name] = self.sums.get(name, 0.0) + float(value) * n
        self.seen += n

    def means(self) -> dict[str, float]:
        return {name: total / max(self.seen, 1) for name, total in self.sums.items()}
