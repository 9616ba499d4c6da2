"""The epoch loop shared by training tasks: evaluation, early stopping, checkpoints, resume.

A task supplies two callables, ``train_epoch(epoch) -> figures`` (one pass over the training
nodes) and ``evaluate() -> (figures, score)`` (eval mode; ``score`` is the validation figure
named ``monitor``, None without a validation split), and :class:`EpochLoop` does the rest:

* every ``eval_every`` epochs (and at the last one) it evaluates, keeps the best model in
  memory and, with ``checkpoint``, in ``checkpoint.pt``, and writes ``train_state.pt``;
* with ``patience`` > 0 it stops once ``patience`` epochs passed without a better score;
* with ``ctx.resume`` it reloads ``train_state.pt`` and continues from the epoch after it,
  restoring the model, optimizer, best-so-far and random generators, so that an interrupted
  CPU run ends exactly as an uninterrupted one would;
* each epoch's figures go to ``ctx.log_epoch`` (``metrics.jsonl`` and ``graphflow_epoch_end``),
  with the wall seconds of its training (``train_s``) and of its evaluation (``eval_s``);
* a termination signal under the CLI (:mod:`graphflow.runtime.signals`) waits for the end of the
  epoch, which then saves ``train_state.pt`` (with ``checkpoint``) and stops the run;
* after every epoch the losses and the parameters must be finite, and so must the evaluation's
  losses (:mod:`graphflow.train.finite`): a NaN or an infinity stops the stage with one line
  naming the epoch and the learning rate, before any checkpoint or state holds it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from graphflow.runtime import signals
from graphflow.errors import ConfigError
from graphflow.io.atomic import write_text
from graphflow.train import checkpoint as ckpt
from graphflow.train import finite
from graphflow.train.checkpoint import Best, TrainState

if TYPE_CHECKING:
    from graphflow.context import RunContext

Figures = dict[str, float]


@dataclass
class LoopOptions:
    """How long to train and what to keep."""

    epochs: int
    eval_every: int = 1
    patience: int = 0
    checkpoint: bool = True
    restore_best: bool = True
    monitor: str = "val_acc"  # the name of the score evaluate() returns, for messages
    minimize: bool = False  # a lower score is better (a loss)
    meta: dict[str, Any] = field(default_factory=dict)  # must match to resume

    def __post_init__(self) -> None:
        # Tasks check their users' values with friendlier messages; this guards any caller.
        if self.epochs < 0 or self.eval_every < 1 or self.patience < 0:
            raise ValueError(f"LoopOptions: need epochs >= 0, eval_every >= 1, patience >= 0; "
                             f"got {self.epochs}, {self.eval_every}, {self.patience}")


def stage_files(ctx: RunContext) -> tuple[Path, Path]:
    """``(checkpoint.pt, train_state.pt)`` of the current stage in the run's out_dir.

    The single ``[train]`` stage uses the plain names; ``[[train]]`` entries add their section
    (``checkpoint-train.1.pt``) so that stages never overwrite each other's files.
    """
    section = ctx.section
    suffix = "" if section == "train" else f"-{section}"
    return ctx.out_dir / f"checkpoint{suffix}.pt", ctx.out_dir / f"train_state{suffix}.pt"


class EpochLoop:
    """Runs the epochs of one training stage (see the module docstring)."""

    def __init__(self, ctx: RunContext, model: nn.Module, optimizer: torch.optim.Optimizer,
                 options: LoopOptions, *, generator: torch.Generator,
                 scaler: torch.amp.GradScaler | None = None):
        self.ctx = ctx
        self.model = model
        self.optimizer = optimizer
        self.options = options
        self.generator = generator
        self.scaler = scaler
        self.best = Best()
        self.checkpoint_path, self.state_path = stage_files(ctx)
        self.section = ctx.section

    def run(self, train_epoch: Callable[[int], Figures],
            evaluate: Callable[[], tuple[Figures, float | None]]) -> Best:
        """Train, then leave the best (or, with ``restore_best`` off, the last) model loaded."""
        with signals.deferred():  # a signal stops the run between epochs, its state saved
            return self._run(train_epoch, evaluate)

    def _run(self, train_epoch: Callable[[int], Figures],
             evaluate: Callable[[], tuple[Figures, float | None]]) -> Best:
        o = self.options
        start, stopped = self._resume() if self.ctx.resume else (1, False)
        epoch = start - 1
        epochs = range(start, o.epochs + 1) if not stopped else range(0)
        for epoch in self.ctx.progress(epochs, desc=f"{self.section} epochs", total=len(epochs),
                                       unit="epoch"):
            t = time.perf_counter()
            figures = train_epoch(epoch)
            figures["train_s"] = time.perf_counter() - t  # the epoch's training, wall seconds
            finite.check_epoch(figures, self.model, epoch=epoch, fix=self._fix())
            if epoch % o.eval_every == 0 or epoch == o.epochs:
                t = time.perf_counter()
                evaluation, score = evaluate()
                finite.check_epoch(evaluation, None, epoch=epoch, fix=self._fix())
                figures.update(evaluation)
                figures["eval_s"] = time.perf_counter() - t
                if score is not None and o.minimize:
                    score = -score  # Best keeps the largest
                stopped = self._after_evaluation(epoch, score)
            self.ctx.log_epoch(epoch, **figures)
            if stopped:
                best = -self.best.score if o.minimize else self.best.score
                self.ctx.info(f"[{self.section}] early stopping at epoch {epoch}: no better "
                              f"{o.monitor} for {o.patience} epochs (best {best:.4f} at epoch "
                              f"{self.best.epoch})")
                break
            if signals.agree() is not None:  # any rank's signal stops every rank here
                self._stop_for_signal(epoch)
        if o.restore_best and self.best.model is not None:
            self.model.load_state_dict(self.best.model)
        if o.checkpoint and self.checkpoint_path.exists():
            self.ctx.add_output(self.checkpoint_path, "checkpoint")
        return self.best

    def _fix(self) -> str:
        """What a user can change when training diverges (for :mod:`graphflow.train.finite`)."""
        lr = self.optimizer.param_groups[0]["lr"] if self.optimizer.param_groups else None
        now = f" (now {lr:g})" if isinstance(lr, (int, float)) else ""
        return f"lower lr{now}, or check the inputs for extreme values"

    def _after_evaluation(self, epoch: int, score: float | None) -> bool:
        o = self.options
        if score is None:  # no validation split: the latest model is the one to keep
            self.best = Best(score=float("-inf"), epoch=epoch,
                             model=ckpt.cpu_copy(self.model.state_dict()))
            improved = True
        else:
            improved = self.best.update(score, epoch, self.model)
        stopped = bool(o.patience) and score is not None and epoch - self.best.epoch >= o.patience
        if o.checkpoint and self.ctx.world.is_main:  # data-parallel: rank 0 writes
            if improved:
                value = -self.best.score if o.minimize else self.best.score
                ckpt.save(self.checkpoint_path, {"model": self.best.model, "epoch": epoch,
                                                 "monitor": o.monitor, "score": value,
                                                 "meta": o.meta})
            self._save_state(epoch, stopped)
        return stopped

    def _save_state(self, epoch: int, stopped: bool) -> None:
        """Write ``train_state.pt``: what ``--resume`` continues from after ``epoch``."""
        state = TrainState(
            epoch=epoch, model=self.model.state_dict(),
            optimizer=self.optimizer.state_dict(), best=self.best,
            rng=ckpt.rng_state(self.generator),
            scaler=self.scaler.state_dict() if self.scaler is not None else None,
            stopped=stopped, meta=self.options.meta)
        ckpt.save(self.state_path, state.to_dict())

    def _stop_for_signal(self, epoch: int) -> None:
        """A termination signal came during ``epoch``: save the state, then stop the run."""
        o = self.options
        name = signals.signal_name(signals.pending() or 0)
        if o.checkpoint:
            if not (epoch % o.eval_every == 0 or epoch == o.epochs):  # not saved yet
                self._save_state(epoch, False)
            self.ctx.info(f"[{self.section}] {name}: stopped after epoch {epoch}; "
                          f"graphflow run --resume continues from {self.state_path}")
        else:
            self.ctx.info(f"[{self.section}] {name}: stopped after epoch {epoch} "
                          f"(checkpoint = false: nothing saved to resume from)")
        signals.safe_point()

    def _resume(self) -> tuple[int, bool]:
        """Load ``train_state.pt``; return the first epoch still to run and whether it stopped."""
        if not self.options.checkpoint:
            raise ConfigError(f"[{self.section}] --resume needs checkpoint = true (the training "
                              f"state is saved only with checkpoints on)")
        if not self.state_path.exists():
            self.ctx.info(f"[{self.section}] no {self.state_path.name} in {self.ctx.out_dir}: "
                          f"training from epoch 1")
            return 1, False
        state = TrainState.from_dict(ckpt.load(self.state_path), path=self.state_path)
        changed = sorted(k for k in set(state.meta) | set(self.options.meta)
                         if state.meta.get(k) != self.options.meta.get(k))
        if changed:
            raise ConfigError(
                f"[{self.section}] cannot resume from {self.state_path}: the pipeline changed "
                f"({', '.join(changed)}); run without --resume, or restore the settings")
        self.model.load_state_dict(state.model)
        self.optimizer.load_state_dict(state.optimizer)
        if self.scaler is not None and state.scaler is not None:
            self.scaler.load_state_dict(state.scaler)
        ckpt.set_rng_state(state.rng, self.generator)
        self.best = state.best
        if self.ctx.world.is_main:
            _drop_epochs_after(self.ctx, self.section, state.epoch,
                               fold=self.options.meta.get("fold"))
        self.ctx.info(f"[{self.section}] resuming after epoch {state.epoch}")
        return state.epoch + 1, state.stopped


def _drop_epochs_after(ctx: RunContext, section: str, epoch: int, *,
                       fold: int | None = None) -> None:
    """Remove this stage's ``metrics.jsonl`` lines past ``epoch`` (they will be run again):
    those of ``fold`` only, when the stage trains one model per cross-validation fold (its
    epoch lines carry ``"fold"``), so that the finished folds' lines stay."""
    fold_value = None if fold is None else float(fold)
    path = ctx.metrics_path
    if not path.exists():
        return
    lines = path.read_text(encoding="utf-8").splitlines()
    keep = []
    for line in lines:
        try:
            record = json.loads(line)
        except json.JSONDecodeError:  # a line cut short by the interruption
            continue
        if record.get("stage") == section and record.get("epoch", 0) > epoch \
                and record.get("fold") == fold_value:
            continue
        keep.append(line)
    if len(keep) != len(lines):
        write_text(path, "".join(f"{line}\n" for line in keep))
