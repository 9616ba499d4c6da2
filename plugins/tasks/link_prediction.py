"""``[train] type = "link_prediction"``: train a ``[model]`` encoder and a pair decoder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import torch

from graphflow.capabilities import refuses
from graphflow.context import RunContext
from graphflow.distributed.ddp import ShardedDraw, ShardedEdgeBatches, wrap_link
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.linkpred.decoders import DecoderName, LinkModel, make_decoder
from graphflow.linkpred.evaluate import (DEFAULT_CHUNK, binary_figures, ranking_figures,
                                         score_pairs)
from graphflow.linkpred.negatives import NegativeName, NegativeSampler
from graphflow.linkpred.held_out import LINK_SPLITS, LinkSplit, ScoredLinks
from graphflow.linkpred.edge_split import pair_keys, read_pairs
from graphflow.linkpred.train import LinkFullBatch, LinkMiniBatches, LossName
from graphflow.linkpred.held_out import TypedLinkSplit
from graphflow.linkpred.negatives import typed_samplers
from graphflow.linkpred.typed import (TypedLinkFullBatch, TypedLinkModel, check_typed_split,
                                      typed_figures, typed_link_model, typed_scored_links)
from graphflow.nn.typed import TypedAdjacency
from graphflow.train import typed_node
from graphflow.options import option
from graphflow.sampling.edges import EdgeBatches, reverse_edge_ids
from graphflow.sampling.sampler import MinibatchSampler
from graphflow.sparse import Adjacency
from graphflow.train import finite
from graphflow.train.step import Step
from graphflow.train.task import (SupervisedOptions, SupervisedTask, check_positive,
                                  split_figures)


FULL_BATCH: dict[str, Any] = {"epochs": 300, "lr": 0.01, "restore_best": False,
                              "self_loops": True}
"""Task defaults of a full-batch stage: GAE's recipe (docs/link_prediction.md)."""
SAMPLED: dict[str, Any] = {"epochs": 20, "lr": 0.005, "restore_best": True,
                           "self_loops": False}
"""Task defaults of a stage with a ``[sample]`` section."""
FULL_BATCH_MODEL: dict[str, Any] = {"hidden": 32, "dropout": 0.0, "bias": False}
"""``[model]`` defaults of a full-batch encoder, where the pipeline leaves them unset."""
SAMPLED_MODEL: dict[str, Any] = {"hidden": 64, "dropout": 0.0}
"""``[model]`` defaults of a sampled encoder, where the pipeline leaves them unset."""


TYPED_REFUSALS = refuses(
    "nproc", reason="link prediction on a typed graph trains full batch in one process",
    alternative="drop --nproc", when={"typed"}) + refuses(
    "sampled", reason="link prediction on a typed graph trains full batch",
    alternative="remove the [sample] section", when={"typed"}) + refuses(
    "bundle", "predict", "serve", "onnx", "torchscript", "embeddings",
    reason="a typed link model has no bundle, portable form or embeddings export yet",
    alternative='export what = "links" (every held-out pair, scored) or the pt model',
    when={"typed"})
"""What a stage with a typed ``[model]`` refuses when the pipeline is read."""


LINK_MONITORS = ("val_auc", "val_ap", "val_mrr")
"""The validation figures link prediction reports (val_mrr when it monitors it)."""


@dataclass
class LinkPredictionOptions(SupervisedOptions):
    epochs: int | None = option(
        None, f"Training epochs (full batch: one step each; sampled: one pass over the "
              f"training edges); default by mode: {FULL_BATCH['epochs']} full batch, "
              f"{SAMPLED['epochs']} sampled.")
    lr: float | None = option(
        None, f"Learning rate; default by mode: {FULL_BATCH['lr']} full batch, "
              f"{SAMPLED['lr']} sampled.")
    weight_decay: float = option(0.0, "L2 penalty (on the parameters that decay_on selects).")
    monitor: Literal["val_auc", "val_mrr"] = option(
        "val_auc", "The validation figure that picks the best model and drives patience.")
    restore_best: bool | None = option(
        None, "Finish with the model of the best validation score (false: the last epoch's); "
              "default by mode: false full batch (the final epoch, as GAE reports), true "
              "sampled.")
    embedding_dim: int = option(16, "Width of the encoder's output: the node embeddings the "
                                    "decoder scores (the [model] is built as in_dim -> this).")
    decoder: DecoderName = option("dot", "Pair score: dot, mlp (on the Hadamard product), "
                                         "bilinear or distmult (a diagonal per relation); "
                                         "on a typed graph one per target relation.")
    loss: LossName = option("bce", "bce (binary cross-entropy) or bpr (pairwise ranking).")
    negative_sampler: NegativeName = option(
        "uniform", "Training negatives: uniform destinations, or degree (P ~ degree^0.75).")
    negatives: int = option(1, "Training negatives per positive edge.")
    self_loops: bool | None = option(
        None, "Full batch: also train every node's self-pair (u, u) as a positive, as GAE's "
              "label matrix A + I (Kipf & Welling 2016); it lifts Cora's test AUC by about "
              "0.01 (docs/link_prediction.md). Default by mode: true full batch, false "
              "sampled (where true is refused).")
    eval_negatives: int = option(100, "Destinations each held-out positive is ranked against "
                                      "for MRR and Hits@K.")
    hits_at: list[int] = option([1, 10, 50], "The K of each Hits@K.")
    eval_batch_size: int = option(DEFAULT_CHUNK, "Pair scores computed at once in evaluation.")
    score_pairs: Path | None = option(
        None, "A Parquet or CSV file of src, dst pairs (original ids) to score; they join the "
              'links artifact with split = "candidates".')

    def __post_init__(self) -> None:
        super().__post_init__()
        check_positive(self, "embedding_dim", "negatives", "eval_negatives", "eval_batch_size")
        if not self.hits_at or any(k < 1 for k in self.hits_at):
            raise ValueError(f"hits_at = {self.hits_at}: give one or more K >= 1")


class LinkPrediction(SupervisedTask):
    """Link prediction with the pipeline's ``[model]`` as the encoder (docs/link_prediction.md).

    Needs a split on the graph (``[[transform]] type = "link_split"``): the encoder passes
    messages over the training graph only, and trains a ``decoder`` (dot, mlp, bilinear) to
    score its edges above ``negatives`` drawn pairs per edge (``bce`` or ``bpr`` loss). Full
    batch without ``[sample]``; with ``[sample] type = "neighbor"`` each step takes
    ``batch_size`` training edges, samples blocks around the endpoints of the positive and
    negative pairs, and excludes the batch's own edges and their reverses from them.

    Each ``eval_every`` epochs it computes every node's embedding once (layer-wise inference
    when sampled), scores the validation pairs in chunks, and keeps the best model by
    ``monitor`` (``val_auc``; ``val_mrr`` also ranks each positive against
    ``eval_negatives`` drawn destinations). Early stopping, checkpoints and ``--resume`` are
    the shared epoch loop's.

    Defaults are the recipe that works, by mode. Full batch: GAE's (Kipf & Welling 2016):
    300 epochs at lr 0.01, self-pairs as positives, the final epoch, and an encoder of 32
    hidden units without dropout or bias (``[model]`` hidden, dropout, bias, where the
    pipeline leaves them unset) into ``embedding_dim`` 16. Sampled: 20 epochs at lr 0.005,
    the best epoch, an encoder of 64 hidden units without dropout. ``run.json`` records the
    values used.

    On a typed graph (``link_split`` with a ``target`` relation) the ``[model]`` is a typed
    encoder (``rgcn``, ``hetero``) giving every node type ``embedding_dim`` vectors, each
    target relation has its own ``decoder`` (``distmult`` recommended), negatives corrupt the
    tail with nodes of the relation's destination type, training is full batch, and the
    figures come per relation too: ``test_auc/<relation>``, ``test_mrr/<relation>``...
    (:mod:`graphflow.linkpred.typed`).

    Results: ``{val,test}_{auc,ap,mrr,hits@K}``; the ``embeddings`` (N, D) and the ``links``
    (held-out pairs with labels and scores, and the ``score_pairs`` candidates) artifacts,
    and the trained ``model`` (encoder + decoder).
    """

    name = "link_prediction"
    model_kind = "link"
    summary = "Train the [model] as an encoder to predict edges (full batch or edge-sampled)"
    Options = LinkPredictionOptions
    options: LinkPredictionOptions
    fanout_per_layer = True  # [sample] fanouts = one per [model] layer (checked on reading)
    supports_distributed = True  # each rank trains on its share of the positive edges
    refusals = refuses("predictions", reason="link prediction scores node pairs, not node "
                       "classes", alternative='export what = "links" (the scored pairs)') \
        + TYPED_REFUSALS

    def mode_defaults(self, *, sampled: bool) -> dict[str, Any]:
        return dict(SAMPLED if sampled else FULL_BATCH)

    def model_defaults(self, model: str, *, sampled: bool) -> dict[str, Any]:
        return dict(SAMPLED_MODEL if sampled else FULL_BATCH_MODEL)

    def build_model(self, ctx: RunContext) -> LinkModel | TypedLinkModel:
        """The ``[model]`` as the encoder (in_dim -> ``embedding_dim``) under the decoder
        (on a typed graph: a typed encoder and a decoder per target relation)."""
        o = self.options
        if ctx.graph().is_typed:
            return self._typed_model(ctx)
        x = self.node_features(ctx)  # (N, F) CPU
        encoder = self.require_model(ctx, "the encoder").build(x.shape[1], o.embedding_dim)
        return LinkModel(encoder, make_decoder(o.decoder, o.embedding_dim))

    def fit(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None = None,
            lr: float | None = None) -> dict[str, float]:
        """Train the :class:`LinkModel` ``model`` (see :meth:`SupervisedTask.fit`)."""
        self.resolve_mode_defaults(sampled=ctx.sampler is not None)
        o = self.options
        data = ctx.graph()
        if data.is_typed:
            return self._fit_typed(ctx, model, epochs=epochs, lr=lr)
        split = held_out(data, ctx.section)
        x = self.node_features(ctx)  # (N, F) CPU
        model = model.to(ctx.device)
        step = self.make_step(ctx, model, lr=lr)  # precision, clipping (train.step)
        optimizer = step.optimizer
        generator = self.generator(ctx)  # negatives, batch order
        runner = self._runner(ctx, data, model, step, x, generator)
        meta = self.meta(ctx, in_dim=int(x.shape[1]), embedding_dim=o.embedding_dim,
                         decoder=o.decoder)
        self.resolve_monitor(ctx.section, LINK_MONITORS)  # val_mrr: ranked each evaluation
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator,
                               scaler=step.scaler, epochs=epochs)
        rank_seed = ctx.seed + 1  # the same ranked destinations at every evaluation

        def evaluate() -> tuple[dict[str, float], float | None]:
            h = runner.embeddings()
            figures = self._figures(model, h, split, "val", ranking=o.monitor == "val_mrr",
                                    seed=rank_seed, device=ctx.device)[0]
            return figures, self.monitored(figures)

        best = loop.run(runner.train_epoch, evaluate)
        ctx.world.check_replicas(ctx.section, model)
        ctx.artifacts.model_info = {**meta, "section": ctx.section}
        return self._finish(ctx, data, model, runner.embeddings(), split, best.epoch,
                            rank_seed)

    def inference(self, ctx: RunContext, model: torch.nn.Module) -> Callable[[], torch.Tensor]:
        """A function computing the :class:`LinkModel` ``model``'s (N, D) node embeddings on
        ``ctx.device`` as :meth:`fit` evaluates them (eval mode, every node), with the inputs
        prepared once: what the ``sparsify`` task times."""
        self.resolve_mode_defaults(sampled=ctx.sampler is not None)
        data = ctx.graph()
        if data.is_typed:
            raise ConfigError(f"[{ctx.section}] sparsify times link models of graphs with one "
                              f"node type; a typed link model is pruned by no stage yet")
        step = Step(model, None, ctx.device)  # predicts only, in float32
        runner = self._runner(ctx, data, model, step, self.node_features(ctx),
                              self.generator(ctx))
        return runner.embeddings

    def _runner(self, ctx: RunContext, data: GraphData, model: LinkModel, step: Step,
                x: torch.Tensor, generator: torch.Generator) -> LinkFullBatch | LinkMiniBatches:
        o = self.options
        g = data.graph
        src, dst = g.edges()
        if src.numel() == 0:
            raise DataError(f"the training graph {data.name!r} has no edges left to train on; "
                            f"hold out fewer pairs in link_split")
        adj = Adjacency.from_graph(g)
        feats = self.model_input(ctx, x)  # dense unless accepts_sparse
        degree = (g.in_degrees() + g.out_degrees()).float()
        self.check_layerwise(ctx, model.encoder)
        # Data-parallel: the encoder runs through DDP (gradients averaged across ranks), each
        # rank's loss covers its share of the positive edges; evaluation is the same on every
        # rank (every node's embedding from the same weights).
        net = wrap_link(model, ctx.world, ctx.device)
        if ctx.sampler is None:
            draw = NegativeSampler(o.negative_sampler, data.num_nodes, degree)
            if o.self_loops:  # GAE's A + I: every (u, u) is a positive too
                loops = torch.arange(data.num_nodes, dtype=src.dtype)
                src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
            if ctx.world.distributed:
                mine = ctx.world.shard(torch.arange(src.numel()))  # (ceil(P / size),)
                draw = ShardedDraw(draw, src, mine)
                src, dst = src[mine], dst[mine]
            return LinkFullBatch(net, step, o.loss, adj, feats, src, dst, draw,
                                 o.negatives, generator,
                                 inference_batch_size=self.inference_batch_size(ctx),
                                 progress=ctx.progress)
        sampler, graph = ctx.sampler, ctx.sampler_graph
        if o.self_loops:
            raise ConfigError("[train] self_loops = true trains self-pairs in full batch only; "
                              "remove it, or remove the [sample] section")
        if not isinstance(sampler, MinibatchSampler):
            raise ConfigError(f"link_prediction samples with a neighbor sampler ([sample] "
                              f'type = "neighbor"), got {sampler.name!r}')
        if hasattr(model.encoder, "num_layers"):
            sampler.check_layers(model.encoder.num_layers)
        draw = NegativeSampler(o.negative_sampler, data.num_nodes, degree, device=graph.device)
        batches, extra = (ShardedEdgeBatches, {"world": ctx.world}) if ctx.world.distributed \
            else (EdgeBatches, {})
        edges = batches(sampler, graph, src, dst, reverse_edge_ids(src, dst, data.num_nodes),
                        draw, o.negatives, **extra)
        return LinkMiniBatches(net, step, o.loss, adj, feats, edges, int(src.numel()),
                               generator, use_sampled_features=self.uses_sampled_features(feats),
                               inference_batch_size=self.inference_batch_size(ctx),
                               progress=ctx.progress, workers=self.workers(ctx))

    def _figures(self, model: LinkModel, h: torch.Tensor, split: LinkSplit, name: str, *,
                 ranking: bool, seed: int, device: torch.device
                 ) -> tuple[dict[str, float], torch.Tensor, torch.Tensor]:
        o = self.options
        pairs = split.get(name)
        model.eval()
        binary, pos, neg = binary_figures(model.decoder, h, pairs, chunk=o.eval_batch_size,
                                          device=device)
        figures = split_figures(name, binary)
        if ranking and pairs.num_pos:
            ranked = ranking_figures(model.decoder, h, pairs.pos, negatives=o.eval_negatives,
                                     hits=o.hits_at, chunk=o.eval_batch_size, device=device,
                                     generator=torch.Generator().manual_seed(seed))
            figures.update(split_figures(name, ranked))
        return figures, pos, neg

    def _finish(self, ctx: RunContext, data: GraphData, model: LinkModel, h: torch.Tensor,
                split: LinkSplit, best_epoch: int, rank_seed: int) -> dict[str, float]:
        o = self.options
        finite.check_output(h, "embeddings", fix="lower lr")  # before any artifact
        figures: dict[str, float] = {}
        parts = []
        for code, name in enumerate(("val", "test")):
            found, pos, neg = self._figures(model, h, split, name, ranking=True, seed=rank_seed,
                                            device=ctx.device)
            figures.update(found)
            pairs, label = split.get(name).labelled()
            parts.append((pairs, torch.full((label.numel(),), code, dtype=torch.int8), label,
                          torch.cat([pos, neg])))
        if o.score_pairs is not None:
            cand = read_pairs(o.score_pairs, data.ids, what="score_pairs file")  # (2, C)
            scores = score_pairs(model.decoder, h, cand, chunk=o.eval_batch_size,
                                 device=ctx.device)
            parts.append((cand, torch.full((cand.shape[1],), LINK_SPLITS.index("candidates"),
                                           dtype=torch.int8),
                          torch.full((cand.shape[1],), float("nan")), scores))
            ctx.info(f"[{ctx.section}] scored "
                     f"{cand.shape[1]:,} candidate pairs from {o.score_pairs}")
        ctx.artifacts.embeddings = h.detach().cpu()  # (N, D)
        ctx.artifacts.links = ScoredLinks(*(torch.cat(cols, dim=-1) for cols in zip(*parts)))
        ctx.artifacts.model = model.cpu().eval()
        return self.log_results(ctx, figures, best_epoch,
                                shown=[k for k in figures if k.startswith("test_") and "@" not in k])


    # -- typed graphs (graphflow.linkpred.typed) ---------------------------------------

    def _typed_model(self, ctx: RunContext) -> TypedLinkModel:
        """The typed ``[model]`` (every node type to ``embedding_dim``) under a ``decoder``
        per target relation; refuses what typed link prediction does not do."""
        o = self.options
        data = ctx.graph()
        split = typed_held_out(data, ctx.section)
        # check_pipeline refuses these for a [model] that sets typed = True; a plugin's model
        # that offers build_typed without the flag reaches this point
        if ctx.sampler is not None:
            raise ConfigError(f"[{ctx.section}] link_prediction on a typed graph trains full "
                              f"batch; remove the [sample] section")
        if ctx.world.distributed:
            raise ConfigError(f"[{ctx.section}] link_prediction on a typed graph runs in one "
                              f"process; run without --nproc")
        if o.score_pairs is not None:
            raise ConfigError(f"[{ctx.section}] score_pairs reads pairs of a graph with one "
                              f"node type; on a typed graph remove it (the links artifact "
                              f"holds every relation's held-out pairs)")
        feats = typed_node.typed_features(data)
        encoder = typed_node.build_typed_model(self.require_model(ctx, "the encoder"), data,
                                               feats, o.embedding_dim, ctx.host.registry)
        return typed_link_model(encoder, split, o.decoder, o.embedding_dim)

    def _fit_typed(self, ctx: RunContext, model: torch.nn.Module, *, epochs: int | None,
                   lr: float | None) -> dict[str, float]:
        """Full-batch training on a typed graph (:class:`TypedLinkFullBatch`), figures per
        relation and overall, the ``links`` artifact with each pair's relation."""
        o = self.options
        data = ctx.graph()
        g = data.graph
        split = typed_held_out(data, ctx.section)
        feats = typed_node.typed_features(data)
        model = model.to(ctx.device)
        step = self.make_step(ctx, model, lr=lr)  # precision, clipping (train.step)
        optimizer = step.optimizer
        generator = self.generator(ctx)  # negatives
        positives = {r: torch.stack(g.edges(etype=r)) for r in split.relations}  # (2, E_r)
        runner = TypedLinkFullBatch(model, step, o.loss, TypedAdjacency.from_graph(g),
                                    typed_node.model_inputs(data, feats), positives,
                                    typed_samplers(g, split.relations, o.negative_sampler),
                                    o.negatives, generator)
        meta = self.meta(ctx, in_dim={t: int(v.shape[1]) for t, v in feats.items()},
                         embedding_dim=o.embedding_dim, decoder=o.decoder,
                         relations=[":".join(r) for r in split.relations])
        self.resolve_monitor(ctx.section, LINK_MONITORS)  # val_mrr: ranked each evaluation
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator,
                               scaler=step.scaler, epochs=epochs)
        rank_seed = ctx.seed + 1  # the same ranked destinations at every evaluation

        def figures_of(name: str, ranking: bool) -> tuple[dict[str, float], Any]:
            return typed_figures(model, runner.embeddings(), split, name, ranking=ranking,
                                 eval_negatives=o.eval_negatives, hits=o.hits_at,
                                 seed=rank_seed, chunk=o.eval_batch_size, device=ctx.device)

        def evaluate() -> tuple[dict[str, float], float | None]:
            figures = figures_of("val", o.monitor == "val_mrr")[0]
            return figures, self.monitored(figures)

        best = loop.run(runner.train_epoch, evaluate)
        ctx.artifacts.model_info = {**meta, "section": ctx.section}
        for t, h in runner.embeddings().items():  # over node types, before any artifact
            finite.check_output(h, f"embeddings of {t}", fix="lower lr")
        figures: dict[str, float] = {}
        scores = {}
        for name in ("val", "test"):
            found, scores[name] = figures_of(name, True)
            figures.update(found)
        ctx.artifacts.links = typed_scored_links(split, scores)
        ctx.artifacts.model = model.cpu().eval()
        return self.log_results(ctx, figures, best.epoch,
                                shown=[k for k in figures if k.startswith("test_")
                                       and "@" not in k and "_ap/" not in k])


def typed_held_out(data: GraphData, section: str) -> TypedLinkSplit:
    """A typed graph's link split, checked as :func:`held_out` does, per relation."""
    split = data.links
    if not isinstance(split, TypedLinkSplit):
        raise DataError(f'[{section}] link_prediction needs held-out edges, but the typed graph '
                        f'{data.name!r} has no link split; add [[transform]] type = '
                        f'"link_split" (target relation, val/test fractions) before [train]')
    check_typed_split(split, data.graph, section)
    return split


def held_out(data: GraphData, section: str) -> LinkSplit:
    """The graph's link split, checked: present, and no held-out positive is a training edge."""
    split = data.links
    if split is None:
        raise DataError(f'[{section}] link_prediction needs held-out edges, but the graph '
                        f'{data.name!r} has no link split; add [[transform]] type = '
                        f'"link_split" (val/test fractions) before [train]')
    n = data.num_nodes
    src, dst = data.graph.edges()
    held = split.positives()
    keys = pair_keys(src, dst, n, split.undirected)
    leaked = torch.isin(pair_keys(held[0], held[1], n, split.undirected), keys)
    if bool(leaked.any()):
        i = int(leaked.nonzero()[0, 0])
        raise DataError(f"[{section}] held-out pair ({int(held[0, i])}, {int(held[1, i])}) is "
                        f"an edge of the training graph again: a transform after link_split "
                        f"added edges; put link_split last among the transforms")
    return split
