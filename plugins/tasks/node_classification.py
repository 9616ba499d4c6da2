"""``[train] type = "node_classification"``: train a ``[model]`` to predict node labels."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.distributed.ddp import ShardedMiniBatches, wrap
from graphflow.distributed.dist_train import DistMiniBatches, remote_features
from graphflow.errors import ConfigError
from graphflow.options import option
from graphflow.sparse import Adjacency
from graphflow.sparse.features import DEFAULT_DENSITY_THRESHOLD
from graphflow.pruning.two_four import hold_masks, masked_layers
from graphflow.train.inputs import (FeatureSource, Targets, model_input, node_features,
                                    node_targets)
from graphflow.train.loop import EpochLoop, LoopOptions
from graphflow.train.node import FullBatch, MiniBatches, Objective, Stepper
from graphflow.train.optim import DecayOn, OptimizerName, make_optimizer
from graphflow.train.restore import restore_model

MINIBATCH_INFERENCE_BATCH = 4096


@dataclass
class NodeClassificationOptions:
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
        1, "Evaluate on the validation nodes (and save the training state) every N epochs.")
    monitor: Literal["val_acc", "val_loss"] = option(
        "val_acc", "The validation figure that picks the best model and drives patience "
                   "(val_acc: micro-F1 for multi-label).")
    restore_best: bool = option(
        True, "Finish with the model of the best validation score (false: the last epoch's).")
    checkpoint: bool = option(
        True, "Keep the best model in OUT_DIR/checkpoint.pt and the training state (what "
              "--resume continues from) in OUT_DIR/train_state.pt.")
    amp: bool = option(
        False, "Mixed precision (float16 autocast, gradient scaling) on CUDA; ignored on CPU.")
    features: FeatureSource = option(
        "feat", 'Input features: "feat" (the graph\'s), "embeddings" (from an earlier stage, '
                'e.g. node2vec) or "feat+embeddings" (both, concatenated).')
    edge_weights: bool = option(
        False, 'Use edata["weight"] as edge values (weighted aggregation).')
    sparse_threshold: float = option(
        DEFAULT_DENSITY_THRESHOLD,
        "Keep input features sparse (CSR) when their density is below this, for models that "
        "accept sparse input (accepts_sparse); 0 = dense.")
    restore_model: Path | None = option(
        None, 'Start from the model in this file (a pt export with what = "model") instead of '
              "fresh weights; its [model] type and options, features and classes must match. "
              "With epochs = 0 the stage only predicts. 2:4 masks in it stay fixed.")
    inference_batch_size: int = option(
        0, "Nodes per batch of layer-wise full-neighbor inference; 0: the whole graph at "
           f"once when training full-batch, {MINIBATCH_INFERENCE_BATCH} with a sampler.")

    def __post_init__(self) -> None:
        if self.epochs < 0:
            raise ValueError(f"epochs must be >= 0, got {self.epochs}")
        if self.lr <= 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        if self.eval_every < 1:
            raise ValueError(f"eval_every must be >= 1, got {self.eval_every}")
        if self.patience < 0:
            raise ValueError(f"patience must be >= 0 (0 = no early stopping), got "
                             f"{self.patience}")
        if self.inference_batch_size < 0:
            raise ValueError(f"inference_batch_size must be >= 0, got "
                             f"{self.inference_batch_size}")
        if not 0 <= self.sparse_threshold <= 1:
            raise ValueError(f"sparse_threshold must lie in [0, 1], got {self.sparse_threshold}")


class NodeClassification(Task):
    """Semi-supervised node classification with the pipeline's ``[model]``.

    Trains on the ``train_mask`` nodes: full-batch without a ``[sample]`` section, on sampled
    blocks with one (the sampler's shuffled batches of seeds, one fanout per layer). Each
    ``eval_every`` epochs it scores the ``val_mask`` nodes (``monitor``: accuracy or loss),
    keeps the best model (``checkpoint.pt``) and the state that ``graphflow run --resume``
    continues from; ``patience`` stops early.

    Single-label targets (int64 class ids) train with cross-entropy; multi-label targets
    (float (N, C) 0/1) with one-vs-rest binary cross-entropy, picking the best model by
    validation micro-F1.

    Results: ``train_acc``, ``val_acc``, ``test_acc`` and ``*_f1_macro`` (``*_f1_micro`` for
    multi-label) in the run's metrics; per-epoch ``loss``, ``train_acc``, ``val_loss``,
    ``val_acc`` in ``metrics.jsonl``; the ``predictions`` and ``logits`` of every node
    (eval mode, full neighborhoods) and the trained ``model`` as artifacts.
    """

    name = "node_classification"
    summary = "Train the [model] to predict node labels (full-batch or sampled)"
    Options = NodeClassificationOptions
    requires_model = True
    fanout_per_layer = True  # [sample] fanouts = one per [model] layer (checked on reading)
    supports_distributed = True

    def run(self, ctx: RunContext) -> None:
        section = ctx.stage.section if ctx.stage else "train"
        targets, x = self._inputs(ctx, section)
        if ctx.model is None:
            raise ConfigError(f"[{section}] node_classification needs a [model] section")
        model = ctx.model.build(x.shape[1], targets.num_classes)
        if self.options.restore_model is not None:
            restore_model(model, self.options.restore_model, self._meta(ctx, x, targets))
        self.fit(ctx, model)

    def fit(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]:
        """Train ``model`` (built for this task's inputs) with this task's options; ``epochs``
        and ``lr`` override theirs (``epochs = 0``: only predict). 2:4 masks the model holds
        (:mod:`graphflow.pruning.two_four`) stay fixed. Logs the metrics, sets the artifacts and
        returns the final figures. The ``sparsify`` task fine-tunes through this."""
        o = self.options
        section = ctx.stage.section if ctx.stage else "train"
        targets, x = self._inputs(ctx, section)
        model = model.to(ctx.device)
        objective = Objective(targets.num_classes, targets.multilabel)
        optimizer = make_optimizer(o.optimizer, model, lr=o.lr if lr is None else lr,
                                   weight_decay=o.weight_decay, decay_on=o.decay_on,
                                   momentum=o.momentum)
        scaler = self._scaler(ctx)
        stepper = Stepper(model, optimizer, ctx.device, scaler)
        generator = torch.Generator().manual_seed(ctx.seed)  # shuffles minibatch seeds
        runner = self._make_runner(ctx, wrap(model, ctx.world, ctx.device), stepper, objective,
                                   x, targets, generator)
        meta = self._meta(ctx, x, targets)
        loop = EpochLoop(ctx, model, optimizer,
                         LoopOptions(epochs=o.epochs if epochs is None else epochs,
                                     eval_every=o.eval_every,
                                     patience=o.patience, checkpoint=o.checkpoint,
                                     restore_best=o.restore_best, monitor=o.monitor,
                                     minimize=o.monitor == "val_loss", meta=meta),
                         generator=generator, scaler=scaler)
        val_ids = targets.splits.get("val")

        def evaluate() -> tuple[dict[str, float], float | None]:
            if val_ids is None:
                return {}, None
            logits = runner.logits()  # (N, C)
            # Data-parallel: each rank scores its share of the rows, gathered, so that every
            # rank takes the same best-model and early-stopping decisions.
            out, y = ctx.world.gather(logits[val_ids.to(logits.device)],
                                      targets.labels[val_ids].to(logits.device))  # (n_val, C)
            report = objective.report(out, y)
            figures = {"val_loss": objective.loss(out, y).item(),
                       "val_acc": report["acc"]}
            if o.monitor == "val_loss":
                return figures, figures["val_loss"]
            return figures, report[objective.score_name]

        if val_ids is None and (o.patience or o.restore_best):
            ctx.info(f"[{section}] no val_mask: keeping the last epoch's model"
                     f"{' and no early stopping' if o.patience else ''}")
        release = hold_masks(model, optimizer) if masked_layers(model) else None
        try:
            best = loop.run(runner.train_epoch, evaluate)
        finally:
            if release is not None:
                release()
        ctx.world.check_replicas(section, model)
        return self._finish(ctx, model, runner.logits().cpu(), objective, targets, best.epoch,
                            {**meta, "section": section})

    def inference(self, ctx: RunContext, model: torch.nn.Module) -> Callable[[], torch.Tensor]:
        """A function computing ``model``'s (N, C) logits on ``ctx.device`` as :meth:`fit`
        predicts them (eval mode, every node), with the inputs prepared once: what the
        ``sparsify`` task times."""
        targets, x = self._inputs(ctx, ctx.stage.section if ctx.stage else "train")
        objective = Objective(targets.num_classes, targets.multilabel)
        stepper = Stepper(model, None, ctx.device, None)  # type: ignore[arg-type]
        generator = torch.Generator().manual_seed(ctx.seed)
        return self._make_runner(ctx, model, stepper, objective, x, targets, generator).logits

    def _inputs(self, ctx: RunContext, section: str) -> tuple[Targets, torch.Tensor]:
        data = ctx.graph()
        targets = node_targets(data)
        if getattr(ctx.sampler, "remote", False):  # graphflow launch: features on DistDGL
            return targets, remote_features(ctx.sampler_graph, self.options, section)
        x = node_features(data, self.options.features, ctx.artifacts, section=section)  # (N, F)
        return targets, x

    def _meta(self, ctx: RunContext, x: torch.Tensor, targets: Targets) -> dict[str, Any]:
        """What a resumed or restored model must agree on (a best score in other units
        cannot be compared, hence ``monitor``)."""
        o = self.options
        return {"task": self.name, "model": ctx.model.name if ctx.model else None,
                "model_options": _jsonable(ctx.model.options) if ctx.model else {},
                "features": o.features, "in_dim": int(x.shape[1]),
                "classes": targets.num_classes, "monitor": o.monitor}

    def _make_runner(self, ctx: RunContext, model: torch.nn.Module, stepper: Stepper,
                     objective: Objective, x: torch.Tensor, targets: Targets,
                     generator: torch.Generator) -> FullBatch | MiniBatches:
        o = self.options
        adj = Adjacency.from_graph(ctx.graph().graph, weight="weight" if o.edge_weights else None)
        feats = model_input(x, ctx.model, o.sparse_threshold)  # dense unless accepts_sparse
        return self._runner(ctx, model, stepper, objective, adj, feats, targets, generator)

    def _runner(self, ctx: RunContext, model: torch.nn.Module, stepper: Stepper,
                objective: Objective, adj: Adjacency, feats: Any, targets: Targets,
                generator: torch.Generator) -> FullBatch | MiniBatches:
        o = self.options
        train_ids = targets.splits["train"]
        progress = ctx.progress
        layerwise = ctx.sampler is not None or o.inference_batch_size > 0
        if layerwise and not hasattr(model, "inference"):
            raise ConfigError(f"model {ctx.model.name!r} has no layer-wise inference, so it can "
                              f"neither train on sampled blocks nor predict in batches; remove "
                              f"the [sample] section and inference_batch_size")
        if ctx.sampler is None:  # data-parallel: each rank's loss covers its share of nodes
            return FullBatch(model, stepper, objective, adj, feats, targets.labels,
                             ctx.world.shard(train_ids),
                             inference_batch_size=o.inference_batch_size, progress=progress)
        batches = ShardedMiniBatches if ctx.world.distributed else MiniBatches
        if getattr(ctx.sampler, "remote", False):
            batches = DistMiniBatches
        extra = {"world": ctx.world} if ctx.world.distributed or batches is DistMiniBatches \
            else {}
        return batches(model, stepper, objective, adj, feats, targets.labels, train_ids, **extra,
                       sampler=ctx.sampler, graph=ctx.sampler_graph, generator=generator,
                       use_sampled_features=o.features == "feat"
                       and isinstance(feats, torch.Tensor),
                       inference_batch_size=o.inference_batch_size
                       or MINIBATCH_INFERENCE_BATCH,
                       edge_values=ctx.graph().graph.edata["weight"] if o.edge_weights
                       else None, progress=progress,
                       workers=ctx.cores.workers if ctx.cores is not None else None)

    def _scaler(self, ctx: RunContext) -> torch.amp.GradScaler | None:
        if not self.options.amp:
            return None
        if ctx.device.type != "cuda":
            ctx.info(f"warning: amp = true needs CUDA; training in float32 on {ctx.device}")
            return None
        return torch.amp.GradScaler("cuda")

    def _finish(self, ctx: RunContext, model: torch.nn.Module, logits: torch.Tensor,
                objective: Objective, targets: Targets, best_epoch: int,
                model_info: dict[str, Any]) -> dict[str, float]:
        figures: dict[str, float] = {}
        for split, ids in targets.splits.items():
            report = objective.report(logits[ids], targets.labels[ids])
            figures.update({f"{split}_{name}": value for name, value in report.items()})
        figures["best_epoch"] = best_epoch
        ctx.log_metrics(**figures)
        ctx.artifacts.logits = logits  # (N, C)
        ctx.artifacts.predictions = objective.predict(logits)  # (N,) or (N, C)
        ctx.artifacts.model = model.cpu().eval()
        ctx.artifacts.model_info = model_info
        shown = ", ".join(f"{k} {v:.4f}" for k, v in figures.items() if k.endswith("_acc"))
        ctx.info(f"[{ctx.stage.section if ctx.stage else 'train'}] {shown}")
        return figures


def _jsonable(options: Any) -> dict[str, Any]:
    """Model options as plain data (compared on ``--resume``)."""
    values = dataclasses.asdict(options) if dataclasses.is_dataclass(options) else {}
    return {k: (str(v) if not isinstance(v, (int, float, str, bool, list, type(None))) else v)
            for k, v in values.items()}
