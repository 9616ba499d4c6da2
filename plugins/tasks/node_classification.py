"""``[train] type = "node_classification"``: train a ``[model]`` to predict node labels."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphflow.capabilities import refuses
from graphflow.context import RunContext
from graphflow.distributed.ddp import ShardedMiniBatches, wrap
from graphflow.distributed.dist_train import DistMiniBatches, remote_features
from graphflow.errors import ConfigError
from graphflow.options import option
from graphflow.nn.typed import TypedAdjacency
from graphflow.sparse import Adjacency
from graphflow.pruning.two_four import hold_masks, masked_layers
from graphflow.train import finite
from graphflow.train.balance import CLASS_WEIGHTS_HELP, ClassWeights, balanced
from graphflow.train.inputs import Targets, node_targets
from graphflow.train.node import FullBatch, MiniBatches
from graphflow.train.objective import Objective
from graphflow.train.step import Step
from graphflow.train.restore import restore_model
from graphflow.train.task import SupervisedOptions, SupervisedTask, evaluation
from graphflow.train import typed_node


@dataclass
class NodeClassificationOptions(SupervisedOptions):
    monitor: Literal["val_acc", "val_loss", "val_f1_macro"] = option(
        "val_acc", "The validation figure that picks the best model and drives patience "
                   "(val_acc: micro-F1 for multi-label; val_f1_macro: the mean F1 over "
                   "classes, for imbalanced labels).")
    class_weights: ClassWeights = option("none", CLASS_WEIGHTS_HELP)
    amp: bool = option(
        False, 'The former spelling of precision = "fp16-mixed" (float16 autocast, gradient '
               "scaling) on CUDA; warns once and trains in float32 on the CPU.")
    edge_weights: bool = option(
        False, 'Use edata["weight"] as edge values (weighted aggregation).')
    restore_model: Path | None = option(
        None, 'Start from the model in this file (a pt export with what = "model") instead of '
              "fresh weights; its [model] type and options, features and classes must match. "
              "With epochs = 0 the stage only predicts. 2:4 masks in it stay fixed.")
    target: str | None = option(
        None, "On a typed graph: the node type to classify (default: the one node type with "
              "labels). Predictions, logits and metrics then cover that type's nodes.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.amp and self.precision != "fp32":
            raise ValueError(f'amp = true is the former spelling of precision = "fp16-mixed"; '
                             f'set precision alone (now "{self.precision}")')


class NodeClassification(SupervisedTask):
    """Semi-supervised node classification with the pipeline's ``[model]``.

    Trains on the ``train_mask`` nodes: full-batch without a ``[sample]`` section, on sampled
    blocks with one (the sampler's shuffled batches of seeds, one fanout per layer). Each
    ``eval_every`` epochs it scores the ``val_mask`` nodes (``monitor``: accuracy, loss or
    macro-F1), keeps the best model (``checkpoint.pt``) and the state that ``graphflow run
    --resume`` continues from; ``patience`` stops early.

    Single-label targets (int64 class ids) train with cross-entropy; multi-label targets
    (float (N, C) 0/1) with one-vs-rest binary cross-entropy, picking the best model by
    validation micro-F1.

    On a typed graph (several node types or relations) the ``[model]`` must be a typed one
    (``rgcn``, ``hetero``); the task trains on the ``target`` type's labelled nodes, every
    type's features (or learned embeddings for featureless types) feeding the model, and the
    ``[sample]`` section, if any, must be a typed sampler (``typed_neighbor``). Exports then
    hold one row per node of the target type, with that type's original ids.

    Results: ``train_acc``, ``val_acc``, ``test_acc`` and ``*_f1_macro`` (``*_f1_micro`` for
    multi-label) in the run's metrics; per-epoch ``loss``, ``train_acc``, ``val_loss``,
    ``val_acc`` in ``metrics.jsonl``; the ``predictions`` and ``logits`` of every node
    (eval mode, full neighborhoods), the ``embeddings`` (the last hidden layer's node
    vectors, the output layer's input; on a typed graph every node type's, with a ``type``
    column in the exports) and the trained ``model`` as artifacts.
    """

    name = "node_classification"
    model_kind = "node"
    summary = "Train the [model] to predict node labels (full-batch or sampled)"
    Options = NodeClassificationOptions
    options: NodeClassificationOptions
    fanout_per_layer = True  # [sample] fanouts = one per [model] layer (checked on reading)
    supports_distributed = True
    refusals = refuses("nproc", reason="node classification on a typed graph trains in one "
                       "process", alternative="drop --nproc", when={"typed"})

    def build_model(self, ctx: RunContext) -> torch.nn.Module:
        """The ``[model]`` built for the features and classes (restored from
        ``restore_model`` when set)."""
        targets, x = self._inputs(ctx)
        if isinstance(x, dict):
            model = typed_node.build_typed_model(self.require_model(ctx), ctx.graph(), x,
                                                 targets.num_classes, ctx.host.registry)
        else:
            model = self.require_model(ctx).build(x.shape[1], targets.num_classes)
        if self.options.restore_model is not None:
            restore_model(model, self.options.restore_model, self._meta(ctx, x, targets))
        return model

    def fit(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]:
        """Train ``model`` (built for this task's inputs) with this task's options; ``epochs``
        and ``lr`` override theirs (``epochs = 0``: only predict). 2:4 masks the model holds
        (:mod:`graphflow.pruning.two_four`) stay fixed. Logs the metrics, sets the artifacts and
        returns the final figures. The ``sparsify`` task fine-tunes through this."""
        o = self.options
        section = ctx.section
        targets, x = self._inputs(ctx)
        model = model.to(ctx.device)
        weight = None if o.class_weights == "none" else \
            balanced(targets.labels[targets.splits["train"]], targets.num_classes).to(ctx.device)
        objective = Objective.for_nodes(targets.num_classes, targets.multilabel, weight)
        step = self.make_step(ctx, model, lr=lr)  # precision (amp), clipping, optimizer
        optimizer = step.optimizer
        generator = self.generator(ctx)  # shuffles minibatch seeds
        runner = self._make_runner(ctx, wrap(model, ctx.world, ctx.device), step, objective,
                                   x, targets, generator)
        meta = self._meta(ctx, x, targets)
        # the monitor among the validation figures (val_acc: micro-F1 for multi-label)
        self.resolve_monitor(section, ["val_loss", *(f"val_{k}" for k in objective.figures)],
                             aliases={"val_acc": "val_f1_micro"}
                             if objective.kind == "multilabel" else None)
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator,
                               scaler=step.scaler, epochs=epochs)
        val_ids = targets.splits.get("val")

        def evaluate() -> tuple[dict[str, float], float | None]:
            if val_ids is None:
                return {}, None
            logits = runner.logits()  # (N, C)
            # Data-parallel: each rank scores its share of the rows, gathered, so that every
            # rank takes the same best-model and early-stopping decisions.
            out, y = ctx.world.gather(logits[val_ids.to(logits.device)],
                                      targets.labels[val_ids].to(logits.device))  # (n_val, C)
            figures = evaluation("val", objective, out, y)
            return figures, self.monitored(figures)

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
        info = {**meta, "section": section}
        if isinstance(x, dict):
            info["node_type"] = self._target(ctx)
        embeddings = self._embeddings(ctx, model, runner, info)
        figures = self._finish(ctx, model, runner.logits().cpu(), objective, targets,
                               best.epoch, info)
        ctx.artifacts.embeddings = embeddings
        return figures

    def _embeddings(self, ctx: RunContext, model: torch.nn.Module, runner: Any,
                    info: dict[str, Any]) -> torch.Tensor | None:
        """The ``embeddings`` artifact: the last hidden layer's node vectors, the output
        layer's input (eval mode, full neighbourhoods, as the logits), (N, D) on the CPU.
        On a typed graph every node type's rows, type after type, listed in
        ``info["embedding_types"]`` (``[[type, rows], ...]``)."""
        from graphflow.bundle.infer import node_embeddings

        if getattr(ctx.sampler, "remote", False):  # graphflow launch: features on DistDGL
            ctx.info(f"[{ctx.section}] no embeddings artifact: a distributed stage's features "
                     f"stay on the servers")
            return None
        emb, types = node_embeddings(model, runner.adj, runner.x,
                                     batch_size=int(getattr(runner, "inference_batch_size",
                                                            0) or 0),
                                     device=ctx.device, progress=ctx.progress)
        if emb is None:
            name = ctx.model.name if ctx.model is not None else type(model).__name__
            ctx.info(f"[{ctx.section}] no embeddings artifact: model {name!r} has no hidden "
                     f"node vectors to give (a graphflow layer stack with a hidden layer has)")
        elif types is not None:
            info["embedding_types"] = types
        return emb

    def inference(self, ctx: RunContext, model: torch.nn.Module) -> Callable[[], torch.Tensor]:
        """A function computing ``model``'s (N, C) logits on ``ctx.device`` as :meth:`fit`
        predicts them (eval mode, every node), with the inputs prepared once: what the
        ``sparsify`` task times."""
        targets, x = self._inputs(ctx)
        objective = Objective.for_nodes(targets.num_classes, targets.multilabel)
        step = Step(model, None, ctx.device)  # predicts only, in float32
        generator = self.generator(ctx)
        return self._make_runner(ctx, model, step, objective, x, targets, generator).logits

    def _target(self, ctx: RunContext) -> str:
        return typed_node.target_type(ctx.graph(), self.options.target)

    def _inputs(self, ctx: RunContext) -> tuple[Targets, Any]:
        data = ctx.graph()
        if typed_node.is_typed(data):
            # (targets of the target type, per-type features: featureless types left out)
            return typed_node.typed_targets(data, self._target(ctx)), \
                typed_node.typed_features(data)
        if self.options.target is not None:
            ctx.info(f"[{ctx.section}] warning: target = {self.options.target!r} is ignored: "
                     f"the graph has one node type")
        targets = node_targets(data)
        if getattr(ctx.sampler, "remote", False):  # graphflow launch: features on DistDGL
            return targets, remote_features(ctx.sampler_graph, self.options, ctx.section)
        return targets, self.node_features(ctx)  # (N, F)

    def _meta(self, ctx: RunContext, x: Any, targets: Targets) -> dict[str, Any]:
        if isinstance(x, dict):  # typed: the width of each featured type
            return self.meta(ctx, in_dim={t: int(v.shape[1]) for t, v in x.items()},
                             classes=targets.num_classes, target=self._target(ctx))
        return self.meta(ctx, in_dim=int(x.shape[1]), classes=targets.num_classes)

    def _make_runner(self, ctx: RunContext, model: torch.nn.Module, step: Step,
                     objective: Objective, x: torch.Tensor, targets: Targets,
                     generator: torch.Generator) -> FullBatch | MiniBatches:
        o = self.options
        if isinstance(x, dict):
            return self._typed_runner(ctx, model, step, objective, x, targets, generator)
        adj = Adjacency.from_graph(ctx.graph().graph, weight="weight" if o.edge_weights else None)
        feats = self.model_input(ctx, x)  # dense unless accepts_sparse
        return self._runner(ctx, model, step, objective, adj, feats, targets, generator)

    def _runner(self, ctx: RunContext, model: torch.nn.Module, step: Step,
                objective: Objective, adj: Adjacency, feats: Any, targets: Targets,
                generator: torch.Generator) -> FullBatch | MiniBatches:
        o = self.options
        train_ids = targets.splits["train"]
        progress = ctx.progress
        self.check_layerwise(ctx, model)
        if ctx.sampler is None:  # data-parallel: each rank's loss covers its share of nodes
            return FullBatch(model, step, objective, adj, feats, targets.labels,
                             ctx.world.shard(train_ids),
                             inference_batch_size=self.inference_batch_size(ctx),
                             progress=progress)
        batches = ShardedMiniBatches if ctx.world.distributed else MiniBatches
        if getattr(ctx.sampler, "remote", False):
            batches = DistMiniBatches
        extra = {"world": ctx.world} if ctx.world.distributed or batches is DistMiniBatches \
            else {}
        return batches(model, step, objective, adj, feats, targets.labels, train_ids, **extra,
                       sampler=ctx.sampler, graph=ctx.sampler_graph, generator=generator,
                       use_sampled_features=self.uses_sampled_features(feats),
                       inference_batch_size=self.inference_batch_size(ctx),
                       edge_values=ctx.graph().graph.edata["weight"] if o.edge_weights
                       else None, progress=progress, workers=self.workers(ctx))

    def _typed_runner(self, ctx: RunContext, model: torch.nn.Module, step: Step,
                      objective: Objective, feats: dict[str, torch.Tensor], targets: Targets,
                      generator: torch.Generator) -> Any:
        data = ctx.graph()
        # check_pipeline refuses it for a [model] that sets typed = True; a plugin's model that
        # offers build_typed without the flag reaches this point
        if ctx.world.distributed:
            raise ConfigError(f"[{ctx.section}] node classification on a typed graph runs in one "
                              f"process; drop --nproc")
        adj = TypedAdjacency.from_graph(data.graph,
                                        weight="weight" if self.options.edge_weights else None)
        x = typed_node.model_inputs(data, feats)
        target = self._target(ctx)
        if ctx.sampler is None:
            return typed_node.TypedFullBatch(model, step, objective, adj, x, target,
                                             targets.labels, targets.splits["train"])
        return typed_node.TypedMiniBatches(model, step, objective, adj, x, target,
                                           targets.labels, targets.splits["train"],
                                           sampler=ctx.sampler, graph=ctx.sampler_graph,
                                           generator=generator, progress=ctx.progress)

    def requested_precision(self, ctx: RunContext) -> str:
        """``precision``, or ``fp16-mixed`` for ``amp = true`` on CUDA (float32 elsewhere,
        with one warning)."""
        if not self.options.amp:
            return self.options.precision
        if ctx.device.type != "cuda":
            ctx.info(f"warning: amp = true needs CUDA; training in float32 on {ctx.device}")
            return "fp32"
        return "fp16-mixed"

    def _finish(self, ctx: RunContext, model: torch.nn.Module, logits: torch.Tensor,
                objective: Objective, targets: Targets, best_epoch: int,
                model_info: dict[str, Any]) -> dict[str, float]:
        finite.check_output(logits, "logits", fix="lower lr")  # before any artifact
        figures: dict[str, float] = {}
        for split, ids in targets.splits.items():
            figures.update(evaluation(split, objective, logits[ids], targets.labels[ids],
                                      loss=False))
        ctx.artifacts.logits = logits  # (N, C)
        ctx.artifacts.predictions = objective.predict(logits)  # (N,) or (N, C)
        ctx.artifacts.model = model.cpu().eval()
        ctx.artifacts.model_info = model_info
        return self.log_results(ctx, figures, best_epoch,
                                shown=[k for k in figures if k.endswith("_acc")])

