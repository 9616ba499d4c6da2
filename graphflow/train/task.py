"""The base of supervised training tasks: shared options, optimizer, epoch loop, results.

Every task that trains a ``[model]`` with a loss, picks its best model on a validation
figure and reports test figures (``node_classification``, ``link_prediction``, graph-level
tasks) builds on two names:

* :class:`SupervisedOptions`: the options every such task takes (``epochs``, ``lr``,
  ``weight_decay``, ``decay_on``, ``optimizer``, ``momentum``, ``monitor``, ``patience``,
  ``eval_every``, ``restore_best``, ``checkpoint``, ``features``, ``sparse_threshold``,
  ``inference_batch_size``, ``precision``, ``clip_grad_norm``), validated once, in one
  wording.
* :class:`SupervisedTask`: a :class:`~graphflow.components.Task` that owns what training
  tasks share: the optimizer and the training :class:`~graphflow.train.step.Step`
  (:meth:`SupervisedTask.make_step`: precision, gradient scaling, clipping), the
  :class:`~graphflow.train.loop.EpochLoop` (evaluation,
  early stopping, checkpoints, ``--resume``), the checkpoint ``meta`` a resumed or restored
  model must agree on, the input features, the layer-wise inference set-up and its check,
  and the logging of the final figures.

A new task declares its options by inheriting the shared ones (a field redeclared in the
subclass keeps its place and takes the new default or type, e.g. ``monitor``'s choices)::

    @dataclass
    class GraphClassificationOptions(SupervisedOptions):
        epochs: int = option(100, "Training epochs.")
        monitor: Literal["val_acc", "val_loss"] = option("val_acc", "Picks the best model.")
        pooling: Literal["mean", "sum"] = option("mean", "Graph readout.")

        def __post_init__(self) -> None:
            super().__post_init__()  # the shared checks
            check_at_least(self, 1, "batch_size")  # its own, in the same wording

and implements :meth:`SupervisedTask.build_model` and :meth:`SupervisedTask.fit`::

    class GraphClassification(SupervisedTask):
        name = "graph_classification"
        summary = "Train the [model] to predict graph labels"
        Options = GraphClassificationOptions

        def build_model(self, ctx):
            return self.require_model(ctx).build(in_dim, num_classes)

        def fit(self, ctx, model, *, epochs=None, lr=None):
            model = model.to(ctx.device)
            step = self.make_step(ctx, model, lr=lr)  # optimizer, precision, clipping
            generator = self.generator(ctx)         # batch order; saved for --resume
            meta = self.meta(ctx, in_dim=in_dim, classes=num_classes)
            loop = self.epoch_loop(ctx, model, step.optimizer, meta, generator=generator,
                                   scaler=step.scaler, epochs=epochs)
            best = loop.run(train_epoch, evaluate)  # (epoch) -> figures, () -> (figures, score)
            return self.log_results(ctx, {"test_acc": ...}, best.epoch)

where ``train_epoch`` runs its batches as ``with step.autocast(): loss = ...`` then
``step.step(loss)`` (the pass protocol of :mod:`graphflow.train.step`).

:meth:`SupervisedTask.run` builds the model and fits it.

Evaluation and the monitor, one rule for every task:

* :func:`split_figures` names a split's figures: ``<split>_loss`` and the objective's report
  (``<split>_acc``, ``<split>_roc_auc``, ``<split>_mae``...), or a link task's ranking figures
  (``<split>_auc``, ``<split>_mrr``...); :func:`evaluation` computes them from a pass's
  outputs on the split with an :class:`~graphflow.train.objective.Objective`;
* :meth:`SupervisedTask.resolve_monitor` checks ``monitor`` against the validation figures
  the task's evaluation reports (a ``ConfigError`` in one line listing them, before any
  epoch) and :meth:`SupervisedTask.monitored` takes its value from ``evaluate``'s figures;
* :func:`lower_is_better`: a figure named ``*_loss``, ``*_mae``, ``*_rmse`` or ``*_mr`` is
  minimised, any other maximised. Tasks may also choose defaults by mode (the hooks of every
:class:`~graphflow.components.Task`): an option whose default is None ("by mode") gets its
value from ``mode_defaults(sampled=...)`` when the pipeline is read, and
``model_defaults(model, sampled=...)`` supplies the task's preferred values for the
``[model]`` options the pipeline leaves unset; ``run.json`` records both as resolved.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn

from graphflow.components import Model, Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.options import option
from graphflow.sparse.features import DEFAULT_DENSITY_THRESHOLD, Features
from graphflow.train.inputs import FeatureSource, model_input, node_features
from graphflow.train.loop import EpochLoop, LoopOptions
from graphflow.train.optim import DecayOn, OptimizerName, make_optimizer
from graphflow.train.step import (CLIP_HELP, PRECISION_HELP, Precision, Step, autocast,
                                  check_precision, resolve_precision, uses_scaler)

MINIBATCH_INFERENCE_BATCH = 4096
"""Nodes per batch of layer-wise inference when a stage trains on a sampler and
``inference_batch_size`` is 0."""


def check_at_least(options: Any, low: float, *names: str, note: str = "") -> None:
    """Raise ``ValueError("<name> must be >= <low>, got <value>")`` for the first of ``names``
    below ``low`` (a None value is left alone: "by mode")."""
    for name in names:
        value = getattr(options, name)
        if value is not None and value < low:
            raise ValueError(f"{name} must be >= {low}{note}, got {value}")


def check_positive(options: Any, *names: str) -> None:
    """Raise ``ValueError("<name> must be > 0, got <value>")`` for the first of ``names``
    that is not positive (None: left alone)."""
    for name in names:
        value = getattr(options, name)
        if value is not None and value <= 0:
            raise ValueError(f"{name} must be > 0, got {value}")


@dataclass
class SupervisedOptions:
    """Options of every supervised training task (see the module docstring)."""

    epochs: int = option(200, "Training epochs.")
    lr: float = option(0.01, "Learning rate.")
    weight_decay: float = option(5e-4, "L2 penalty (on the parameters that decay_on selects).")
    decay_on: DecayOn = option(
        "all", 'Parameters weight_decay applies to: "all", or "first_layer" (as in Kipf & '
               "Welling's GCN).")
    optimizer: OptimizerName = option("adam", "adam, adamw or sgd.")
    momentum: float = option(0.9, "Momentum of sgd.")
    patience: int = option(
        0, "Stop after this many epochs without a better validation score; 0 = off.")
    eval_every: int = option(
        1, "Evaluate on the validation split (and save the training state) every N epochs.")
    monitor: str = option(
        "val_loss", "The validation figure that picks the best model and drives patience.")
    restore_best: bool = option(
        True, "Finish with the model of the best validation score (false: the last epoch's).")
    checkpoint: bool = option(
        True, "Keep the best model in OUT_DIR/checkpoint.pt and the training state (what "
              "--resume continues from) in OUT_DIR/train_state.pt.")
    features: FeatureSource = option(
        "feat", 'Input features: "feat" (the graph\'s), "embeddings" (from an earlier stage, '
                'e.g. node2vec) or "feat+embeddings" (both, concatenated).')
    sparse_threshold: float = option(
        DEFAULT_DENSITY_THRESHOLD,
        "Keep input features sparse (CSR) when their density is below this, for models that "
        "accept sparse input (accepts_sparse); 0 = dense.")
    inference_batch_size: int = option(
        0, "Nodes per batch of layer-wise full-neighbor inference; 0: the whole graph at "
           f"once when training full batch, {MINIBATCH_INFERENCE_BATCH} with a sampler.")
    precision: Precision = option("fp32", PRECISION_HELP)
    clip_grad_norm: float = option(0.0, CLIP_HELP)

    def __post_init__(self) -> None:
        check_at_least(self, 0, "epochs")
        check_positive(self, "lr")
        check_at_least(self, 0, "weight_decay")
        check_at_least(self, 1, "eval_every")
        check_at_least(self, 0, "patience", note=" (0 = no early stopping)")
        check_at_least(self, 0, "inference_batch_size")
        if not 0 <= self.sparse_threshold <= 1:
            raise ValueError(f"sparse_threshold must lie in [0, 1], got {self.sparse_threshold}")
        check_at_least(self, 0, "clip_grad_norm", note=" (0 = off)")
        check_precision(self.precision)  # fp16-mixed without CUDA: refused when read


LOWER_IS_BETTER = ("loss", "mae", "rmse", "mr")
"""The figure names (the last ``_`` part) whose lower values are better."""


def lower_is_better(figure: str) -> bool:
    """Whether a lower ``figure`` is better: ``val_loss``, ``val_mae``, ``val_rmse``,
    ``val_mr`` (per relation: ``val_mr/<relation>``) are minimised, any other figure
    maximised. The one direction rule of every task's monitor."""
    return figure.split("/", 1)[0].rsplit("_", 1)[-1] in LOWER_IS_BETTER


def split_figures(split: str, report: Mapping[str, float], *,
                  loss: float | None = None) -> dict[str, float]:
    """A split's figures under their one naming: ``<split>_loss`` (when ``loss`` is given),
    then ``<split>_<name>`` for every figure of ``report``."""
    figures = {} if loss is None else {f"{split}_loss": float(loss)}
    figures.update({f"{split}_{k}": v for k, v in report.items()})
    return figures


def evaluation(split: str, objective: Any, scores: torch.Tensor, target: torch.Tensor, *,
               loss: bool = True) -> dict[str, float]:
    """The figures of a pass's ``scores`` (n, C) on a split against ``target``: the
    objective's loss (``<split>_loss``, unless ``loss`` is off) and its report
    (:meth:`Objective.report <graphflow.train.objective.Objective.report>`), named by
    :func:`split_figures`. Node, typed node and graph tasks evaluate through this."""
    value = objective.loss(scores, target).item() if loss else None
    return split_figures(split, objective.report(scores, target), loss=value)


def resolve_run_precision(requested: str, device: torch.device | str) -> tuple[str, str]:
    """The concrete precision a stage asking for ``requested`` trains in on ``device``, and
    why: :func:`~graphflow.train.step.resolve_precision`, then for ``auto`` on a CPU the
    calibration's word (:func:`calibrated_bf16`). What ``graphflow run`` and the benchmarks
    both apply."""
    precision, why = resolve_precision(requested, device)
    if requested == "auto" and precision == "bf16-mixed" and torch.device(device).type == "cpu":
        precision, why = calibrated_bf16(why)
    return precision, why


def calibrated_bf16(why: str) -> tuple[str, str]:
    """``auto`` on a CPU with native bfloat16: bf16-mixed only where the calibration
    (:func:`graphflow.runtime.calibrate.bf16_choice`, measured once per CPU and thread count,
    cached) found it faster than float32; fp32 where it found it no faster, or measured
    nothing (``GRAPHFLOW_CALIBRATE=off``, or a measurement held back on a busy machine):
    bfloat16 ran 1.5x slower than float32 in sampled training on an AVX512-BF16 Xeon, so the
    CPU flags alone do not make it the default."""
    from graphflow.runtime import calibrate

    choice = calibrate.bf16_choice(torch.get_num_threads(), native=True)
    ms = choice.get("ms")
    if not isinstance(ms, dict) or "bf16" not in ms or "fp32" not in ms:
        return "fp32", f"{why}, but bf16 was not measured faster here ({choice.get('source')})"
    if choice.get("busy"):
        return "fp32", f"{why}, but its measurement was taken on a busy machine"
    timing = f"calibration: {ms['bf16']} ms bf16 vs {ms['fp32']} ms fp32 a step"
    if choice.get("bf16"):
        return "bf16-mixed", f"{why}; {timing}"
    return "fp32", f"{why}, but bf16 was no faster ({timing})"


def options_record(options: Any) -> dict[str, Any]:
    """A component's options as plain data (what ``--resume`` and ``restore_model``
    compare)."""
    values = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}
    return {k: (str(v) if not isinstance(v, (int, float, str, bool, list, type(None))) else v)
            for k, v in values.items()}


class SupervisedTask(Task):
    """A task that trains the pipeline's ``[model]`` on the shared epoch loop.

    Subclasses set ``Options`` to a :class:`SupervisedOptions` subclass and implement
    :meth:`build_model` and :meth:`fit`; the helpers below give every such task the same
    optimizer, loop, checkpoint meta, inference set-up and result logging.
    """

    requires_model = True
    options: SupervisedOptions

    # -- what a task implements ---------------------------------------------------------

    def run(self, ctx: RunContext) -> None:
        """Build the model (:meth:`build_model`) and train it (:meth:`fit`), with the
        options still at None ("by mode") filled in for the stage's mode."""
        self.resolve_mode_defaults(sampled=ctx.sampler is not None)
        self.fit(ctx, self.build_model(ctx))
        self.save_bundle(ctx)

    def save_bundle(self, ctx: RunContext, *, source: str | None = None) -> None:
        """Write the trained ``ctx.artifacts.model`` as the stage's model bundle
        (``OUT_DIR/model/``, :mod:`graphflow.bundle`): what ``graphflow predict`` and
        ``graphflow serve`` load. Called once training is over; ``source``: the stage that
        built the model when a later one changed it (``sparsify``)."""
        from graphflow.bundle.write import write_bundle

        info = ctx.artifacts.model_info or {}
        in_dim = info.get("in_dim")
        typed = isinstance(in_dim, dict) or (ctx.data is not None and ctx.data.is_typed)
        if typed and "node_type" in info:  # a node model of a typed graph: widths per type
            write_bundle(ctx, self, dict(in_dim) if isinstance(in_dim, dict) else {},
                         source=source)
            return
        if typed:
            ctx.info(f"{self.name}: no model bundle for this model of a typed graph (typed "
                     f"bundles hold node classifiers); the weights are in the run's "
                     f"checkpoint and the pt exporter")
            return
        if in_dim is None:
            in_dim = int(self.node_features(ctx).shape[1])
        write_bundle(ctx, self, int(in_dim), source=source)

    def build_model(self, ctx: RunContext) -> nn.Module:
        """A fresh module for this task's inputs, from ``ctx.model`` (:meth:`require_model`)."""
        raise NotImplementedError

    def fit(self, ctx: RunContext, model: nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]:
        """Train ``model`` with this task's options (``epochs`` and ``lr`` override them;
        ``epochs = 0`` only predicts), set the artifacts and return the final figures."""
        raise NotImplementedError

    # -- shared set-up ------------------------------------------------------------------

    def require_model(self, ctx: RunContext, role: str = "") -> Model:
        """``ctx.model``, or a ``ConfigError`` naming the section (``role``: what the model
        serves as, for the message, e.g. "the encoder")."""
        if ctx.model is None:
            raise ConfigError(f"[{ctx.section}] {self.name} needs a [model] section"
                              + (f" ({role})" if role else ""))
        return ctx.model

    def node_features(self, ctx: RunContext) -> torch.Tensor:
        """float32 (N, F) CPU input features chosen by ``features``."""
        return node_features(ctx.graph(), self.options.features, ctx.artifacts,
                             section=ctx.section)

    def model_input(self, ctx: RunContext, x: torch.Tensor) -> Features:
        """``x`` as the model takes it: sparse below ``sparse_threshold`` when it accepts
        sparse input, else dense."""
        return model_input(x, ctx.model, self.options.sparse_threshold)

    def uses_sampled_features(self, feats: Features) -> bool:
        """Whether minibatches may carry the sampler's gathered features (the graph's own,
        dense) instead of rows of ``feats``."""
        return self.options.features == "feat" and isinstance(feats, torch.Tensor)

    def requested_precision(self, ctx: RunContext) -> str:
        """The ``precision`` option (a task with an older spelling, such as
        ``node_classification``'s ``amp``, maps it here)."""
        return self.options.precision

    def precision(self, ctx: RunContext) -> str:
        """The stage's concrete precision on ``ctx.device``: ``auto`` resolved (and said in
        one line, once per stage); one that cannot run there is a ``ConfigError``. run.json
        records it under ``reports.precision.<section>`` (requested, used, and why)."""
        requested = self.requested_precision(ctx)
        precision, why = resolve_run_precision(requested, ctx.device)
        said = ctx.reports.setdefault("precision", {})
        if ctx.section not in said:
            said[ctx.section] = {"requested": requested, "used": precision,
                                 **({"why": why} if why else {})}
            if requested == "auto":
                ctx.info(f'[{ctx.section}] precision = "auto": {precision} ({why})')
        return precision

    def autocast(self, ctx: RunContext) -> contextlib.AbstractContextManager[Any]:
        """The stage's autocast (its :meth:`precision`) for a forward pass outside a
        :class:`~graphflow.train.step.Step`, e.g. evaluation."""
        return autocast(self.precision(ctx), ctx.device)

    def make_step(self, ctx: RunContext, model: nn.Module, *,
                  lr: float | None = None) -> Step:
        """The training :class:`~graphflow.train.step.Step` of ``model`` with this stage's
        optimizer (:meth:`optimizer`), precision (:meth:`precision`; ``fp16-mixed``
        brings a ``GradScaler`` and torch's per-tensor optimizer) and ``clip_grad_norm``."""
        precision = self.precision(ctx)
        optimizer = self.optimizer(model, lr=lr, flat_groups=not uses_scaler(precision))
        return Step(model, optimizer, ctx.device, precision,
                    clip_grad_norm=self.options.clip_grad_norm)

    def optimizer(self, model: nn.Module, *, lr: float | None = None,
                  flat_groups: bool = True) -> torch.optim.Optimizer:
        """The optimizer the options name, over ``model``'s trainable parameters (in flat
        groups unless ``flat_groups`` is off, as a ``GradScaler`` needs:
        :func:`graphflow.train.optim.make_optimizer`)."""
        o = self.options
        return make_optimizer(o.optimizer, model, lr=o.lr if lr is None else lr,
                              weight_decay=o.weight_decay, decay_on=o.decay_on,
                              momentum=o.momentum, flat_groups=flat_groups)

    @staticmethod
    def generator(ctx: RunContext) -> torch.Generator:
        """The loop's own generator (batch order, negatives), seeded by the run's seed; the
        epoch loop saves and restores it for ``--resume``."""
        return torch.Generator().manual_seed(ctx.seed)

    def meta(self, ctx: RunContext, **shape: Any) -> dict[str, Any]:
        """What a resumed or restored model must agree on: the task, the ``[model]`` and its
        options, the features, the widths in ``shape`` (``in_dim``, ``classes``...) and
        ``monitor`` (a best score in other units cannot be compared)."""
        o = self.options
        return {"task": self.name, "model": ctx.model.name if ctx.model else None,
                "model_options": options_record(ctx.model.options) if ctx.model else {},
                "features": o.features, **shape, "monitor": o.monitor}

    @property
    def monitor_name(self) -> str:
        """The monitored validation figure: the one :meth:`resolve_monitor` settled, else the
        ``monitor`` option."""
        return getattr(self, "_monitored_figure", None) or self.options.monitor

    def resolve_monitor(self, section: str, reported: Sequence[str], *,
                        auto: str | None = None,
                        aliases: Mapping[str, str] | None = None) -> str:
        """Settle the monitored figure: the ``monitor`` option (``"auto"``: ``auto``, the
        targets' default; ``aliases``: a documented other name, e.g. ``val_acc`` = micro-F1
        for multi-label nodes), which must be one of the validation figures the task's
        evaluation ``reported``; otherwise a ``ConfigError`` in one line listing them. Call
        it before the epoch loop is made (:meth:`epoch_loop` monitors it)."""
        m = self.options.monitor
        if m == "auto" and auto is not None:
            m = auto
        m = (aliases or {}).get(m, m)
        if m not in reported:
            shown = self.options.monitor
            raise ConfigError(f'[{section}] monitor = "{shown}" is not a figure of these '
                              f"targets; choose one of {', '.join(reported)}")
        self._monitored_figure = m
        return m

    def monitored(self, figures: Mapping[str, float]) -> float | None:
        """The monitored figure's value among an evaluation's ``figures`` (None: absent)."""
        return figures.get(self.monitor_name)

    def epoch_loop(self, ctx: RunContext, model: nn.Module, optimizer: torch.optim.Optimizer,
                   meta: Mapping[str, Any], *, generator: torch.Generator,
                   scaler: torch.amp.GradScaler | None = None,
                   epochs: int | None = None) -> EpochLoop:
        """The shared :class:`~graphflow.train.loop.EpochLoop` with this task's options
        (``epochs`` overrides the option), monitoring :attr:`monitor_name` in the direction
        of :func:`lower_is_better`."""
        o = self.options
        monitor = self.monitor_name
        return EpochLoop(ctx, model, optimizer,
                         LoopOptions(epochs=o.epochs if epochs is None else epochs,
                                     eval_every=o.eval_every, patience=o.patience,
                                     checkpoint=o.checkpoint, restore_best=o.restore_best,
                                     monitor=monitor, minimize=lower_is_better(monitor),
                                     meta=dict(meta)),
                         generator=generator, scaler=scaler)

    def inference_batch_size(self, ctx: RunContext) -> int:
        """Nodes per batch of layer-wise inference: the option, or when it is 0 the whole
        graph at once (0) in full batch and :data:`MINIBATCH_INFERENCE_BATCH` with a
        sampler."""
        size = self.options.inference_batch_size
        if size or ctx.sampler is None:
            return size
        return MINIBATCH_INFERENCE_BATCH

    def check_layerwise(self, ctx: RunContext, module: nn.Module) -> None:
        """A sampled stage, or a batched inference, needs the module's layer-wise
        ``inference``; a ``ConfigError`` says how to do without it."""
        layerwise = ctx.sampler is not None or self.options.inference_batch_size > 0
        if layerwise and not hasattr(module, "inference"):
            name = ctx.model.name if ctx.model is not None else type(module).__name__
            raise ConfigError(f"model {name!r} has no layer-wise inference, so it can neither "
                              f"train on sampled blocks nor run inference in batches; remove "
                              f"the [sample] section and inference_batch_size")

    @staticmethod
    def workers(ctx: RunContext) -> int | None:
        """Sampling workers of the stage's core plan (None: the sampler's own setting)."""
        return ctx.cores.workers if ctx.cores is not None else None

    def log_results(self, ctx: RunContext, figures: dict[str, float], best_epoch: int, *,
                    shown: list[str] | None = None) -> dict[str, float]:
        """Record the final ``figures`` and ``best_epoch`` in the run's metrics and show
        ``shown`` (default: every figure) on one line; return the figures."""
        figures = {**figures, "best_epoch": best_epoch}
        ctx.log_metrics(**figures)
        names = list(figures) if shown is None else shown
        ctx.info(f"[{ctx.section}] "
                 + ", ".join(f"{k} {figures[k]:.4f}" for k in names if k in figures))
        return figures
