"""The graph-level task base: ``graph_classification`` and ``graph_regression`` share it.

One run trains the ``[model]`` (node encoder) with a readout and a linear head
(:class:`~graphflow.graphs.model.GraphModel`) on minibatches of whole graphs
(:class:`~graphflow.graphs.batch.GraphBatcher`), through the shared epoch loop
(:class:`~graphflow.train.loop.EpochLoop`: evaluation, early stopping, checkpoints,
``--resume``) and the shared metrics (:mod:`graphflow.train.metrics`).

Evaluation protocols:

* one split: the collection's graph masks when a loader or transform set them, else a
  stratified ``split = [train, val, test]`` of the graphs from the seed;
* ``folds = k`` (or a ``fold_file``): k-fold cross-validation. Inside each training fold a
  stratified ``val_fraction`` is held out. Two figures are reported:

  - ``cv_gin_acc``: the GIN paper's protocol (Xu et al. 2019): each fold's test accuracy at
    every epoch, averaged over folds, taken at the epoch where that mean is highest. It
    picks the epoch on the test folds, so it is optimistic;
  - ``cv_strict_acc``: Errica et al. 2020's protocol: each fold picks its model on its own
    validation graphs, and its test fold is scored once, with that model.

  (For regression the figures are ``mae``; the GIN-style figure takes the lowest mean.)
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphflow.context import RunContext
from graphflow.distributed.ddp import wrap
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.collection import GraphCollection
from graphflow.graphs.folds import (Fold, FoldIndex, fold_parts, read_fold_file,
                                    stratified_folds, stratified_parts)
from graphflow.graphs.model import (DropoutOn, GraphModel, ReadoutLayers,
                                    has_layer_outputs)
from graphflow.graphs.objective import GraphObjective, TargetKind
from graphflow.graphs.passes import GraphBatches
from graphflow.graphs.readout import Pooling
from graphflow.io.atomic import write_json
from graphflow.options import option
from graphflow.sparse import Adjacency
from graphflow.capabilities import refuses
from graphflow.train import finite
from graphflow.train.loop import stage_files
from graphflow.train.step import Step
from graphflow.train.task import (SupervisedOptions, SupervisedTask, check_at_least,
                                  evaluation, lower_is_better, options_record)

EDGE_FEAT = "edge_feat"
"""The ``edata`` field whose (E, D) rows travel with a collection's edges."""

Monitor = Literal["auto", "val_loss", "val_acc", "val_f1_macro", "val_roc_auc", "val_ap",
                  "val_mae", "val_rmse"]


@dataclass
class GraphTaskOptions(SupervisedOptions):
    epochs: int = option(100, "Training epochs (per fold with folds).")
    weight_decay: float = option(0.0, "L2 penalty.")
    monitor: Monitor = option(
        "auto", "Validation figure that picks the best model: auto = val_acc "
                "(classes), val_roc_auc (multi-task 0/1), val_mae (regression).")
    batch_size: int = option(32, "Graphs per minibatch (shuffled each epoch from the seed).")
    lr_step: int = option(50, "Multiply the learning rate by lr_gamma every lr_step epochs "
                              "(the GIN paper: 50, 0.5); 0 = constant.")
    lr_gamma: float = option(0.5, "The factor of each lr_step.")
    readout: Pooling = option("sum", "Graph readout: sum, mean, max, attention (gated) or "
                                     "set2set (an LSTM query attending 3 rounds; twice the "
                                     "width).")
    readout_layers: ReadoutLayers = option(
        "all", 'Read out "all" layers (the input included; the GIN paper) or the "last" one. '
               "A model without per-layer outputs (layer_outputs) uses its last layer.")
    hidden: int = option(64, "Width of the node vectors the [model] outputs (its out_dim).")
    dropout: float = option(0.5, "Dropout of the read-out head (where: readout_dropout).")
    readout_dropout: DropoutOn = option(
        "scores", 'Where the head drops: "scores", each layer\'s scores after its linear map '
                  '(the GIN paper\'s code, DGL\'s GIN example), or "features", the read-out '
                  "vectors before the maps.")
    split: list[float] = option(
        [0.8, 0.1, 0.1], "train/val/test fractions of a stratified random split of the "
                         "graphs, when the collection has no graph masks and folds = 0.")
    folds: int = option(0, "k-fold cross-validation (stratified, from the seed); 0 = off.")
    fold_file: Path | None = option(
        None, 'Folds from a JSON list of {"train": [...], "test": [...]} (graph positions, or '
              "ids with fold_index = \"id\") instead of the seed's.")
    fold_index: FoldIndex = option("position", 'What a fold file lists: "position" or "id".')
    val_fraction: float = option(
        0.1, "Share of each training fold held out for model selection (the strict "
             "protocol); 0 = none (then only the GIN-paper figure).")
    eval_batch_size: int = option(1024, "Graphs per batch when predicting.")

    def __post_init__(self) -> None:
        super().__post_init__()  # the options every supervised task shares
        check_at_least(self, 1, "batch_size", "eval_batch_size", "hidden")
        check_at_least(self, 0, "lr_step")
        if not 0 < self.lr_gamma <= 1:
            raise ValueError(f"lr_gamma must lie in (0, 1], got {self.lr_gamma}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")
        if len(self.split) != 3 or any(f < 0 for f in self.split) or sum(self.split) > 1 + 1e-9:
            raise ValueError(f"split must be 3 fractions (train, val, test) summing to at most "
                             f"1, got {self.split}")
        if self.folds < 0 or self.folds == 1:
            raise ValueError(f"folds must be 0 (off) or >= 2, got {self.folds}")
        if not 0 <= self.val_fraction < 1:
            raise ValueError(f"val_fraction must lie in [0, 1), got {self.val_fraction}")


@dataclass
class Inputs:
    """What every fold shares: the collection, its batcher, the labels and the objective."""

    data: GraphData
    graphs: GraphCollection
    batcher: GraphBatcher
    labels: torch.Tensor
    objective: GraphObjective


class GraphTask(SupervisedTask):
    """Base of the graph-level tasks (see the module docstring): the shared supervised base
    (:class:`~graphflow.train.task.SupervisedTask`: optimizer, epoch loop, checkpoint meta)
    plus graph batches, readouts and folds. Subclasses say which targets they take
    (:meth:`_kind`)."""

    level = "graph"
    model_kind = "graph"
    refusals = refuses("sampled", reason="graph tasks train on minibatches of whole graphs "
                       "(batch_size) and sample no neighbourhoods",
                       alternative="drop the [sample] section")
    carries_edge_features = True  # a collection's edata["edge_feat"], cut into every batch
    #: Minibatches of whole graphs: the core policy's ``sampled`` split, whose workers cut
    #: the next batches while the model trains (inline below 4 cores; docs/cores.md).
    workload = "sampled"
    #: Data-parallel (``--nproc``): each batch of graphs split across ranks, DDP, gathered
    #: evaluation (docs/distributed.md).
    supports_distributed = True
    Options = GraphTaskOptions
    options: GraphTaskOptions

    # ------------------------------------------------------------------ inputs
    def _inputs(self, ctx: RunContext, section: str) -> Inputs:
        data = ctx.graph()
        graphs = data.graphs
        if graphs is None:
            raise DataError(f'{self.name} needs a collection of graphs, but "{data.name}" is a '
                            f'single graph; load one with type = "tu" or "kernel_collection"')
        if graphs.labels is None:
            raise DataError(f'the collection "{data.name}" has no graph labels or targets')
        kind = self._kind(graphs)
        labels = graphs.labels if kind == "classes" else graphs.labels.float().reshape(
            graphs.num_graphs, -1)
        out_dim = graphs.num_classes if kind == "classes" else int(labels.shape[1])
        if kind == "classes" and (out_dim or 0) < 2:
            raise DataError(f"graph classification needs at least 2 classes, the labels of "
                            f'"{data.name}" have {out_dim}')
        x = self.node_features(ctx).to(ctx.device)  # (N, F), the features option
        # edge features (edata["edge_feat"]) travel with the adjacency, cut into every batch,
        # for a model that reads them (gine); for the others they stay behind (no per-batch
        # gather, and their bundles ask new data for none)
        reads = bool(getattr(ctx.model, "reads_edge_features", False))
        adj = Adjacency.from_graph(data.graph, device=ctx.device,
                                   feat=EDGE_FEAT if reads else None)
        batcher = GraphBatcher(adj, graphs.graph_ptr, x)
        return Inputs(data=data, graphs=graphs, batcher=batcher, labels=labels.to(ctx.device),
                      objective=GraphObjective(kind, int(out_dim),
                                               getattr(self.options, "loss", "mse")))

    def _kind(self, graphs: GraphCollection) -> TargetKind:
        raise NotImplementedError

    def model_defaults(self, model: str, *, sampled: bool) -> dict[str, Any]:
        """GIN's layers as the GIN recipe's (the paper's code, DGL's GIN example): the last
        layer's output is read out, so it gets the norm and activation of the hidden ones
        (``norm_last``), and the only dropout is the read-out head's (no ``dropout`` in the
        stack)."""
        return {"norm_last": True, "dropout": 0.0} if model in ("gin", "gine") else {}

    def _fold_objective(self, objective: GraphObjective, train_labels: torch.Tensor,
                        model: GraphModel) -> GraphObjective:
        """The objective one training run fits, from its training graphs' labels (class
        weights, a regression head in standard units); the shared one by default."""
        return objective

    def _monitor(self, objective: GraphObjective, section: str) -> str:
        """The monitored validation figure (``auto``: the targets' main figure), checked
        against the figures these targets report (:meth:`SupervisedTask.resolve_monitor`):
        a figure they do not report stops the run before training."""
        reported = [f"val_{k}" for k in ("loss", *objective.figures)]
        return self.resolve_monitor(section, reported, auto=f"val_{objective.score_name}")

    # ------------------------------------------------------------------ run
    def run(self, ctx: RunContext) -> None:
        o = self.options
        section = ctx.section
        self.resolve_mode_defaults(sampled=ctx.sampler is not None)
        self.require_model(ctx)
        inputs = self._inputs(ctx, section)
        if o.folds or o.fold_file is not None:
            self._cross_validate(ctx, inputs, section)
            return
        fold = self._split(ctx, inputs)
        self._results(ctx, inputs, fold, self._train_fold(ctx, inputs, fold, fold_no=None))
        self.save_bundle(ctx)

    def fit(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]:
        """Train the trained :class:`GraphModel` ``model`` further on the single split
        (``epochs`` and ``lr`` override the options; ``epochs = 0`` only evaluates), as
        :meth:`run` trains a fresh one: the ``sparsify`` task fine-tunes through this. Logs
        the figures, sets the artifacts and returns the figures."""
        self.resolve_mode_defaults(sampled=ctx.sampler is not None)
        inputs = self._inputs(ctx, ctx.section)
        fold = self._split(ctx, inputs)
        return self._results(ctx, inputs, fold, self._train_fold(
            ctx, inputs, fold, fold_no=None, model=model, epochs=epochs, lr=lr))

    def inference(self, ctx: RunContext, model: torch.nn.Module
                  ) -> Callable[[], torch.Tensor]:
        """A function computing ``model``'s (G, C) scores of every graph on ``ctx.device``
        (eval mode), the inputs prepared once: what the ``sparsify`` task times."""
        inputs = self._inputs(ctx, ctx.section)
        ids = torch.arange(inputs.graphs.num_graphs, device=ctx.device)
        return lambda: self._predict(ctx, model, inputs, ids)[0]

    def _split(self, ctx: RunContext, inputs: Inputs) -> Fold:
        """The single split: the collection's graph masks, or ``split`` drawn from the seed."""
        o = self.options
        g = inputs.graphs.num_graphs
        masks = inputs.graphs.masks or stratified_parts(
            _strata_labels(inputs), g, train=o.split[0], val=o.split[1], test=o.split[2],
            seed=ctx.seed)
        fold = Fold(*(masks[p].nonzero().squeeze(1) if p in masks
                      else torch.zeros(0, dtype=torch.int64) for p in ("train", "val", "test")))
        if fold.train.numel() == 0:
            raise DataError("the graph split selects no training graph; check split")
        return fold

    def _results(self, ctx: RunContext, inputs: Inputs, fold: Fold,
                 result: dict[str, Any]) -> dict[str, float]:
        """Score every graph with the trained model, log the split's figures, set the
        artifacts; return the figures."""
        g = inputs.graphs.num_graphs
        model = result["model"]
        scores, emb = self._predict(ctx, model, inputs, torch.arange(g, device=ctx.device))
        figures: dict[str, float] = {}
        for part in ("train", "val", "test"):
            ids = getattr(fold, part).to(ctx.device)
            if ids.numel():
                figures.update(evaluation(part, inputs.objective, scores[ids],
                                          inputs.labels[ids], loss=False))
        main = inputs.objective.score_name
        figures = self.log_results(ctx, figures, result["best_epoch"],
                                   shown=[f"{p}_{main}" for p in ("train", "val", "test")])
        self._set_artifacts(ctx, inputs, model, scores, emb, ctx.section)
        return figures

    # ------------------------------------------------------------------ cross-validation
    def _cross_validate(self, ctx: RunContext, inputs: Inputs, section: str) -> None:
        o = self.options
        g = inputs.graphs.num_graphs
        strata = _strata_labels(inputs)
        if o.fold_file is not None:
            pairs = read_fold_file(o.fold_file, inputs.graphs.ids, index=o.fold_index)
            folds = [fold_parts(test, g, strata, val_fraction=o.val_fraction, seed=ctx.seed + f,
                                train=train) for f, (train, test) in enumerate(pairs)]
        else:
            tests = stratified_folds(strata, g, o.folds, seed=ctx.seed)
            folds = [fold_parts(t, g, strata, val_fraction=o.val_fraction, seed=ctx.seed + f)
                     for f, t in enumerate(tests)]
        main = inputs.objective.score_name
        record_path = ctx.out_dir / f"folds-{section}.json"
        done = _read_done(record_path) if ctx.resume else {}
        rows: list[dict[str, Any]] = []
        scores = emb = None
        for f, fold in enumerate(ctx.progress(folds, desc=f"{section} folds", unit="fold")):
            # Resumed: a fold that finished before the interruption reloads its model from its
            # train_state (no epoch left to run) and keeps its recorded test curve.
            result = self._train_fold(ctx, inputs, fold, fold_no=f)
            if str(f) in done:
                result.update(curve=done[str(f)]["curve"],
                              best_epoch=done[str(f)]["best_epoch"])
            model = result["model"]
            test = fold.test.to(ctx.device)
            s, e = self._predict(ctx, model, inputs, test)
            if scores is None:
                scores = s.new_full((g, s.shape[1]), float("nan"))
                emb = e.new_zeros((g, e.shape[1]))
            scores[test], emb[test] = s, e
            rep = evaluation("test", inputs.objective, s, inputs.labels[test], loss=False)
            rows.append({"fold": f, "train": int(fold.train.numel()),
                         "val": int(fold.val.numel()), "test": int(fold.test.numel()),
                         "best_epoch": result["best_epoch"],
                         "strict": rep[f"test_{main}"] if fold.val.numel() else None,
                         "curve": result["curve"]})
            done[str(f)] = rows[-1]
            if ctx.world.is_main:
                write_json(record_path, done)
        report = _protocols(rows, main, minimize=lower_is_better(main))
        ctx.reports[section] = {"folds": [{k: v for k, v in r.items() if k != "curve"}
                                          for r in rows], **report, "metric": main}
        figures = {f"cv_gin_{main}": report["gin"]["mean"], f"cv_gin_{main}_std":
                   report["gin"]["std"], "cv_gin_epoch": report["gin"]["epoch"]}
        if report["strict"] is not None:
            figures.update({f"cv_strict_{main}": report["strict"]["mean"],
                            f"cv_strict_{main}_std": report["strict"]["std"]})
        ctx.log_metrics(**figures)
        ctx.info(f"[{section}] {len(rows)} folds: {main} {report['gin']['mean']:.4f} ± "
                 f"{report['gin']['std']:.4f} (GIN protocol, epoch {report['gin']['epoch']}, "
                 f"optimistic)" + ("" if report["strict"] is None else
                                   f"; {report['strict']['mean']:.4f} ± "
                                   f"{report['strict']['std']:.4f} (strict protocol)"))
        if scores is not None:  # out-of-fold predictions: each graph from its test fold
            self._set_artifacts(ctx, inputs, model, scores, emb, section)
            self.save_bundle(ctx)  # the last fold's model

    # ------------------------------------------------------------------ one training run
    def _new_model(self, ctx: RunContext, inputs: Inputs, fold: Fold) -> tuple[GraphModel, str]:
        """A fresh encoder + readout + head for the collection, and the layers it reads."""
        o = self.options
        objective = inputs.objective
        encoder = ctx.model.build(inputs.batcher.x.shape[1], o.hidden)
        if o.readout_layers == "all" and not has_layer_outputs(encoder):
            ctx.info(f'{ctx.model.name}: no per-layer outputs (layer_outputs); reading out its '
                     f"last layer")
        layers = o.readout_layers if has_layer_outputs(encoder) else "last"
        probe = inputs.batcher.batch(fold.train[:1].to(ctx.device))
        model = GraphModel.probe(encoder.to(ctx.device), probe, layers, objective.out_dim,
                                 pooling=o.readout, dropout=o.dropout,
                                 dropout_on=o.readout_dropout).to(ctx.device)
        return model, layers

    def _train_fold(self, ctx: RunContext, inputs: Inputs, fold: Fold, fold_no: int | None, *,
                    model: GraphModel | None = None, epochs: int | None = None,
                    lr: float | None = None) -> dict[str, Any]:
        """Train a fresh model (or ``model``, further: :meth:`fit`) on ``fold``."""
        o = self.options
        objective = inputs.objective
        if model is None:
            model, layers = self._new_model(ctx, inputs, fold)
            objective = self._fold_objective(objective, inputs.labels[fold.train.to(ctx.device)],
                                             model)
        else:  # trained already: its head is in the targets' units (absorb_target_scaling)
            model, layers = model.to(ctx.device), model.read_layers
        step = self.make_step(ctx, model, lr=lr)  # precision, clipping (train.step)
        optimizer = step.optimizer
        base_lr = o.lr if lr is None else lr
        generator = torch.Generator().manual_seed(ctx.seed + (fold_no or 0))  # batch order
        self._monitor(objective, ctx.section)  # before the loop: it monitors this figure
        meta = self.meta(ctx, in_dim=int(inputs.batcher.x.shape[1]), hidden=o.hidden,
                         classes=objective.out_dim, readout=o.readout,
                         readout_layers=layers, fold=fold_no)
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator,
                               scaler=step.scaler, epochs=epochs)
        if fold_no is not None:
            ckpt, state = stage_files(ctx)
            loop.checkpoint_path = ckpt.with_name(f"{ckpt.stem}-fold{fold_no}.pt")
            loop.state_path = state.with_name(f"{state.stem}-fold{fold_no}.pt")
        val_ids, test_ids = fold.val.to(ctx.device), fold.test.to(ctx.device)
        curve: dict[int, float] = {}  # epoch -> test figure (folds: the GIN protocol)
        main = objective.score_name
        now = {"epoch": 0}
        # Data-parallel: DDP averages the gradients; each rank keeps its own batch-norm
        # statistics (of its part of each batch), averaged after every epoch (the pass).
        net = wrap(model, ctx.world, ctx.device, sync_buffers=False)
        runner = self._pass(ctx, model, inputs, net=net, step=step, objective=objective,
                            train_ids=fold.train.to(ctx.device), generator=generator,
                            base_lr=base_lr)

        def train_epoch(epoch: int) -> dict[str, float]:
            now["epoch"] = epoch
            figures = runner.train_epoch(epoch)
            if fold_no is not None:
                figures["fold"] = fold_no
            return figures

        def evaluate() -> tuple[dict[str, float], float | None]:
            figures: dict[str, float] = {}
            score = None
            for part, ids in (("val", val_ids), ("test", test_ids)):
                if ids.numel() == 0 or (part == "test" and fold_no is None):
                    continue
                s, _ = runner.predict(ids)
                figures.update(evaluation(part, objective, s, inputs.labels[ids]))
                if part == "val":
                    score = self.monitored(figures)  # a figure of these targets (checked)
                else:
                    curve[now["epoch"]] = figures[f"test_{main}"]
            return figures, score

        best = loop.run(train_epoch, evaluate)
        ctx.world.check_replicas(ctx.section if fold_no is None else
                                 f"{ctx.section}.fold{fold_no}", model)
        model.absorb_target_scaling()  # the saved model: plain weights, the targets' units
        return {"model": model, "best_epoch": int(best.epoch), "curve": curve}

    def _pass(self, ctx: RunContext, model: GraphModel, inputs: Inputs, *,
              net: torch.nn.Module | None = None, step: Step | None = None,
              objective: GraphObjective | None = None, train_ids: torch.Tensor | None = None,
              generator: torch.Generator | None = None,
              base_lr: float | None = None) -> GraphBatches:
        """The graph-batch pass (:class:`~graphflow.graphs.passes.GraphBatches`) of ``model``
        on ``inputs``: with ``step`` it trains (``lr_step`` schedule from ``base_lr``), without
        it only predicts (float32)."""
        o = self.options
        lr0 = o.lr if base_lr is None else base_lr

        def lr_at(epoch: int) -> float:
            return lr0 * (o.lr_gamma ** ((epoch - 1) // o.lr_step) if o.lr_step else 1.0)

        return GraphBatches(
            model, model if net is None else net, step or Step(model, None, ctx.device),
            objective or inputs.objective, inputs.batcher, inputs.labels,
            torch.zeros(0, dtype=torch.int64, device=ctx.device) if train_ids is None
            else train_ids, world=ctx.world,
            generator=generator or torch.Generator().manual_seed(ctx.seed),
            batch_size=o.batch_size, eval_batch_size=o.eval_batch_size, lr_at=lr_at,
            autocast=lambda: self.autocast(ctx), cutters=_cutters(ctx))

    def _predict(self, ctx: RunContext, model: GraphModel, inputs: Inputs,
                 ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(scores (n, C), embeddings (n, D)) of graphs ``ids`` in eval mode, in order
        (:meth:`GraphBatches.predict`); data-parallel: gathered onto every rank."""
        return self._pass(ctx, model, inputs).predict(ids)

    def _set_artifacts(self, ctx: RunContext, inputs: Inputs, model: GraphModel,
                       scores: torch.Tensor, emb: torch.Tensor, section: str) -> None:
        finite.check_output(scores, "graph logits", fix="lower lr")  # before any artifact
        finite.check_output(emb, "graph embeddings", fix="lower lr")
        a = ctx.artifacts
        a.logits = scores.cpu()
        a.predictions = inputs.objective.predict(scores).cpu()
        a.embeddings = emb.cpu()
        a.model = model.cpu()
        a.model_info = {"task": self.name, "section": section, "level": "graph",
                        "model": ctx.model.name,
                        "model_options": options_record(ctx.model.options),
                        "hidden": self.options.hidden, "readout": self.options.readout,
                        "classes": inputs.graphs.classes,
                        "in_dim": int(inputs.batcher.x.shape[1]),
                        "edge_features": edge_width(inputs.batcher.adj),
                        "target_kind": inputs.objective.kind,
                        "loss": inputs.objective.regression_loss}


def edge_width(adj: Adjacency) -> int:
    """The width of the edge features ``adj`` carries (0: none)."""
    return 0 if adj.edge_feat is None else int(adj.edge_feat.shape[1])


def _cutters(ctx: RunContext) -> dict[str, int]:
    """The batch-cutting workers and their threads from the stage's core plan."""
    plan = ctx.cores
    return {} if plan is None else {"workers": plan.workers, "threads": plan.worker_threads}


def _strata_labels(inputs: Inputs) -> torch.Tensor:
    return inputs.labels.cpu()


def _protocols(rows: list[dict[str, Any]], main: str, *, minimize: bool) -> dict[str, Any]:
    """The GIN-paper figure (best epoch of the mean test curve) and the strict one."""
    epochs = sorted(set.intersection(*(set(r["curve"]) for r in rows))) if rows else []
    gin: dict[str, Any] = {"mean": float("nan"), "std": float("nan"), "epoch": 0,
                           "protocol": "Xu et al. 2019: mean test curve over folds, best "
                                       "epoch of that curve (optimistic)"}
    if epochs:
        curves = torch.tensor([[float(r["curve"][e]) for e in epochs] for r in rows])  # (k, E)
        mean = curves.mean(0)
        best = int(mean.argmin() if minimize else mean.argmax())
        gin.update(mean=float(mean[best]), std=float(curves[:, best].std(unbiased=False)),
                   epoch=int(epochs[best]))
    strict = None
    values = [r["strict"] for r in rows if r["strict"] is not None]
    if values and len(values) == len(rows):
        t = torch.tensor(values, dtype=torch.float64)
        strict = {"mean": float(t.mean()), "std": float(t.std(unbiased=False)),
                  "protocol": "Errica et al. 2020: model selected on a validation split of "
                              "each training fold, test fold scored once"}
    return {"gin": gin, "strict": strict}


def _read_done(path: Path) -> dict[str, Any]:
    import json

    if not path.exists():
        return {}
    try:
        done = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return {}
    for row in done.values():  # JSON keys are strings: the curve's epochs back to ints
        row["curve"] = {int(k): v for k, v in row["curve"].items()}
    return done
