"""Non-finite values stop a training stage with one line, before anything is exported.

A NaN or an infinity in a loss, in the parameters or in the outputs means that training
diverged (a step too large for the data: the learning rate, or rows that take many updates at
once) or that an input carried one. Left alone it spreads silently: the run ends ``ok`` and
its embeddings, logits and model are NaN. Every training task checks through this module:

* :func:`check_epoch` after each epoch of the shared loop (:mod:`graphflow.train.loop`): the
  epoch's losses and the model's parameters;
* :func:`check_output` on what a task is about to hand to exporters (logits, embeddings);
* input features are checked up front, where they are read
  (:func:`graphflow.train.inputs.node_features`).

A failed check raises :class:`~graphflow.errors.NumericalError` (a ``GraphflowError``): the
runner records ``status = "failed"``, the CLI prints the one line and exits 1, and the export
stages after the failed one never run. The training state saved at the last good evaluation
(``train_state.pt``) and the best model so far (``checkpoint.pt``) stay as they were: a
parameter check runs before every save, so neither ever holds a NaN.

There is no automatic retry with a smaller step in the GNN tasks: a retried epoch with a
lowered learning rate trains a model that the pipeline file no longer describes, and the
divergences seen there come from a learning rate that is too large for the model (the fix is
the user's). Hogwild skip-gram, whose divergence came from concurrent steps on shared rows,
bounds those steps instead (:mod:`graphflow.embeddings.skipgram`) and checks here as well.

In a data-parallel run every rank takes the same decision: the flag is all-reduced (one
integer per epoch), so that no rank raises while the others wait in a collective.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable, Mapping

import torch

from graphflow.errors import NumericalError


def describe(value: float) -> str:
    """``"NaN"``, ``"+inf"`` or ``"-inf"``."""
    return "NaN" if math.isnan(value) else ("+inf" if value > 0 else "-inf")


def finite_tensor(t: torch.Tensor) -> bool:
    """Whether every element of ``t`` is finite (one reduction, one sync)."""
    if not t.is_floating_point() and not t.is_complex():
        return True
    return bool(torch.isfinite(t).all())


def finite_parameters(params: Iterable[torch.Tensor]) -> bool:
    """Whether every floating parameter (or buffer) is finite, with a single sync."""
    flags = [torch.isfinite(p.detach()).all() for p in params if p.is_floating_point()]
    if not flags:
        return True
    return bool(torch.stack([f.to(flags[0].device) for f in flags]).all())


def agree_any(bad: bool) -> bool:
    """``bad`` on any rank of a data-parallel run (a MAX all-reduce of one integer when
    ``torch.distributed`` is initialised; else ``bad``)."""
    dist = sys.modules.get("torch.distributed")
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return bad
    device = torch.device("cpu")
    if dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    flag = torch.tensor([int(bad)], dtype=torch.int64, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    return bool(flag.item())


def check_epoch(figures: Mapping[str, float], module: torch.nn.Module | None, *, epoch: int,
                fix: str) -> None:
    """After a training epoch: every ``*loss`` figure finite and ``module``'s parameters
    finite, else :class:`NumericalError` naming the epoch and ``fix``."""
    bad = {k: v for k, v in figures.items() if "loss" in k and not math.isfinite(v)}
    params_ok = True if module is None else finite_parameters(
        [*module.parameters(), *module.buffers()])
    if not agree_any(bool(bad) or not params_ok):
        return
    if bad:
        name, value = next(iter(bad.items()))
        what = f"the {name.replace('_', ' ')} is {describe(value)}"
    elif not params_ok:
        what = "the model's parameters hold NaN or infinite values"
    else:
        what = "another rank's loss or parameters are not finite"
    raise NumericalError(f"{what} at epoch {epoch}: training diverged; {fix}; nothing was "
                         f"exported")


def check_loss(value: float, what: str, *, epoch: int, where: str, fix: str) -> None:
    """A loss figure (``what``) of ``epoch``, at ``where`` (e.g. "walk batch 3 of 10"), must be
    finite, else :class:`NumericalError` naming them and ``fix``."""
    if math.isfinite(value):
        return
    raise NumericalError(f"the {what} is {describe(value)} at epoch {epoch} ({where}): training "
                         f"diverged; {fix}; nothing was exported")


def check_output(t: torch.Tensor, what: str, *, fix: str) -> None:
    """Before ``t`` becomes an artifact (``what``: "logits", "embeddings"...): all finite, else
    :class:`NumericalError` saying how many rows are not, and ``fix``."""
    if finite_tensor(t):
        return
    rows = int((~torch.isfinite(t)).reshape(t.shape[0], -1).any(1).sum()) if t.dim() else 1
    raise NumericalError(f"the {what} hold NaN or infinite values ({rows} of {t.shape[0]} "
                         f"rows): training diverged; {fix}; nothing was exported")
