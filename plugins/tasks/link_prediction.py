"""``[train] type = "link_prediction"``: train a ``[model]`` encoder and a pair decoder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.linkpred.decoders import DecoderName, LinkModel, make_decoder
from graphflow.linkpred.evaluate import (DEFAULT_CHUNK, binary_figures, ranking_figures,
                                         score_pairs)
from graphflow.linkpred.negatives import NegativeName, NegativeSampler
from graphflow.linkpred.held_out import LINK_SPLITS, LinkSplit, ScoredLinks
from graphflow.linkpred.edge_split import pair_keys, read_pairs
from graphflow.linkpred.train import LinkFullBatch, LinkMiniBatches, LossName
from graphflow.options import option
from graphflow.sampling.edges import EdgeBatches, reverse_edge_ids
from graphflow.sampling.sampler import MinibatchSampler
from graphflow.sparse import Adjacency
from graphflow.sparse.features import DEFAULT_DENSITY_THRESHOLD
from graphflow.train.inputs import FeatureSource, model_input, node_features
from graphflow.train.loop import EpochLoop, LoopOptions
from graphflow.train.node import Stepper
from graphflow.train.optim import DecayOn, OptimizerName, make_optimizer
from graphflow_plugins.tasks.node_classification import MINIBATCH_INFERENCE_BATCH, _jsonable


@dataclass
class LinkPredictionOptions:
    epochs: int = option(100, "Training epochs (full batch: one step each; sampled: one pass "
                              "over the training edges).")
    lr: float = option(0.01, "Learning rate.")
    weight_decay: float = option(0.0, "L2 penalty (on the parameters that decay_on selects).")
    decay_on: DecayOn = option("all", 'Parameters weight_decay applies to: "all" or '
                                      '"first_layer".')
    optimizer: OptimizerName = option("adam", "adam, adamw or sgd.")
    momentum: float = option(0.9, "Momentum of sgd.")
    embedding_dim: int = option(64, "Width of the encoder's output: the node embeddings the "
                                    "decoder scores (the [model] is built as in_dim -> this).")
    decoder: DecoderName = option("dot", "Pair score: dot, mlp (on the Hadamard product) or "
                                         "bilinear.")
    loss: LossName = option("bce", "bce (binary cross-entropy) or bpr (pairwise ranking).")
    negative_sampler: NegativeName = option(
        "uniform", "Training negatives: uniform destinations, or degree (P ~ degree^0.75).")
    negatives: int = option(1, "Training negatives per positive edge.")
    self_loops: bool = option(
        False, "Full batch: also train every node's self-pair (u, u) as a positive, as GAE's "
               "label matrix A + I (Kipf & Welling 2016); it lifts Cora's test AUC by about "
               "0.01 (docs/link_prediction.md).")
    eval_negatives: int = option(100, "Destinations each held-out positive is ranked against "
                                      "for MRR and Hits@K.")
    hits_at: list[int] = option([1, 10, 50], "The K of each Hits@K.")
    monitor: Literal["val_auc", "val_mrr"] = option(
        "val_auc", "The validation figure that picks the best model and drives patience.")
    patience: int = option(0, "Stop after this many epochs without a better validation "
                              "score; 0 = off.")
    eval_every: int = option(1, "Evaluate on the validation pairs (and save the training "
                                "state) every N epochs.")
    restore_best: bool = option(True, "Finish with the model of the best validation score.")
    checkpoint: bool = option(True, "Keep the best model in OUT_DIR/checkpoint.pt and the "
                                    "state --resume continues from in OUT_DIR/train_state.pt.")
    features: FeatureSource = option(
        "feat", 'Input features: "feat", "embeddings" (an earlier stage\'s) or '
                '"feat+embeddings".')
    sparse_threshold: float = option(
        DEFAULT_DENSITY_THRESHOLD,
        "Keep input features sparse (CSR) when their density is below this; 0 = dense.")
    inference_batch_size: int = option(
        0, "Nodes per batch of layer-wise inference; 0: the whole graph at once when training "
           f"full batch, {MINIBATCH_INFERENCE_BATCH} with a sampler.")
    eval_batch_size: int = option(DEFAULT_CHUNK, "Pair scores computed at once in evaluation.")
    score_pairs: Path | None = option(
        None, "A Parquet or CSV file of src, dst pairs (original ids) to score; they join the "
              'links artifact with split = "candidates".')

    def __post_init__(self) -> None:
        positive = {"epochs": self.epochs + 1, "lr": self.lr, "eval_every": self.eval_every,
                    "embedding_dim": self.embedding_dim, "negatives": self.negatives,
                    "eval_negatives": self.eval_negatives,
                    "eval_batch_size": self.eval_batch_size}
        for name, value in positive.items():
            if value <= 0:
                raise ValueError(f"{name} = {getattr(self, name)}: must be > "
                                 f"{'-1' if name == 'epochs' else '0'}")
        for name in ("weight_decay", "patience", "inference_batch_size"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 0")
        if not self.hits_at or any(k < 1 for k in self.hits_at):
            raise ValueError(f"hits_at = {self.hits_at}: give one or more K >= 1")
        if not 0 <= self.sparse_threshold <= 1:
            raise ValueError(f"sparse_threshold must lie in [0, 1], got {self.sparse_threshold}")


class LinkPrediction(Task):
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

    Results: ``{val,test}_{auc,ap,mrr,hits@K}``; the ``embeddings`` (N, D) and the ``links``
    (held-out pairs with labels and scores, and the ``score_pairs`` candidates) artifacts,
    and the trained ``model`` (encoder + decoder).
    """

    name = "link_prediction"
    summary = "Train the [model] as an encoder to predict edges (full batch or edge-sampled)"
    Options = LinkPredictionOptions
    requires_model = True
    fanout_per_layer = True  # [sample] fanouts = one per [model] layer (checked on reading)

    def run(self, ctx: RunContext) -> None:
        o = self.options
        section = ctx.stage.section if ctx.stage else "train"
        data = ctx.graph()
        split = held_out(data, section)
        if ctx.model is None:
            raise ConfigError(f"[{section}] link_prediction needs a [model] section (the "
                              f"encoder)")
        x = node_features(data, o.features, ctx.artifacts, section=section)  # (N, F) CPU
        encoder = ctx.model.build(x.shape[1], o.embedding_dim)
        model = LinkModel(encoder, make_decoder(o.decoder, o.embedding_dim)).to(ctx.device)
        optimizer = make_optimizer(o.optimizer, model, lr=o.lr, weight_decay=o.weight_decay,
                                   decay_on=o.decay_on, momentum=o.momentum)
        stepper = Stepper(model, optimizer, ctx.device, None)
        generator = torch.Generator().manual_seed(ctx.seed)  # negatives, batch order
        runner = self._runner(ctx, data, model, stepper, x, generator)
        meta = {"task": self.name, "model": ctx.model.name,
                "model_options": _jsonable(ctx.model.options), "features": o.features,
                "in_dim": int(x.shape[1]), "embedding_dim": o.embedding_dim,
                "decoder": o.decoder, "monitor": o.monitor}
        loop = EpochLoop(ctx, model, optimizer,
                         LoopOptions(epochs=o.epochs, eval_every=o.eval_every,
                                     patience=o.patience, checkpoint=o.checkpoint,
                                     restore_best=o.restore_best, monitor=o.monitor,
                                     meta=meta),
                         generator=generator)
        rank_seed = ctx.seed + 1  # the same ranked destinations at every evaluation

        def evaluate() -> tuple[dict[str, float], float | None]:
            h = runner.embeddings()
            figures = self._figures(model, h, split, "val", ranking=o.monitor == "val_mrr",
                                    seed=rank_seed, device=ctx.device)[0]
            return figures, figures.get(o.monitor)

        best = loop.run(runner.train_epoch, evaluate)
        self._finish(ctx, data, model, runner.embeddings(), split, best.epoch, rank_seed)

    def _runner(self, ctx: RunContext, data: GraphData, model: LinkModel, stepper: Stepper,
                x: torch.Tensor, generator: torch.Generator) -> LinkFullBatch | LinkMiniBatches:
        o = self.options
        g = data.graph
        src, dst = g.edges()
        if src.numel() == 0:
            raise DataError(f"the training graph {data.name!r} has no edges left to train on; "
                            f"hold out fewer pairs in link_split")
        adj = Adjacency.from_graph(g)
        feats = model_input(x, ctx.model, o.sparse_threshold)  # dense unless accepts_sparse
        degree = (g.in_degrees() + g.out_degrees()).float()
        layerwise = ctx.sampler is not None or o.inference_batch_size > 0
        if layerwise and not hasattr(model.encoder, "inference"):
            raise ConfigError(f"model {ctx.model.name!r} has no layer-wise inference, so it can "
                              f"neither train on sampled blocks nor embed in batches; remove "
                              f"the [sample] section and inference_batch_size")
        if ctx.sampler is None:
            draw = NegativeSampler(o.negative_sampler, data.num_nodes, degree)
            if o.self_loops:  # GAE's A + I: every (u, u) is a positive too
                loops = torch.arange(data.num_nodes, dtype=src.dtype)
                src, dst = torch.cat([src, loops]), torch.cat([dst, loops])
            return LinkFullBatch(model, stepper, o.loss, adj, feats, src, dst, draw,
                                 o.negatives, generator,
                                 inference_batch_size=o.inference_batch_size,
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
        edges = EdgeBatches(sampler, graph, src, dst, reverse_edge_ids(src, dst, data.num_nodes),
                            draw, o.negatives)
        return LinkMiniBatches(model, stepper, o.loss, adj, feats, edges, int(src.numel()),
                               generator, use_sampled_features=o.features == "feat"
                               and isinstance(feats, torch.Tensor),
                               inference_batch_size=o.inference_batch_size
                               or MINIBATCH_INFERENCE_BATCH, progress=ctx.progress,
                               workers=ctx.cores.workers if ctx.cores is not None else None)

    def _figures(self, model: LinkModel, h: torch.Tensor, split: LinkSplit, name: str, *,
                 ranking: bool, seed: int, device: torch.device
                 ) -> tuple[dict[str, float], torch.Tensor, torch.Tensor]:
        o = self.options
        pairs = split.get(name)
        model.eval()
        binary, pos, neg = binary_figures(model.decoder, h, pairs, chunk=o.eval_batch_size,
                                          device=device)
        figures = {f"{name}_{k}": v for k, v in binary.items()}
        if ranking and pairs.num_pos:
            ranked = ranking_figures(model.decoder, h, pairs.pos, negatives=o.eval_negatives,
                                     hits=o.hits_at, chunk=o.eval_batch_size, device=device,
                                     generator=torch.Generator().manual_seed(seed))
            figures.update({f"{name}_{k}": v for k, v in ranked.items()})
        return figures, pos, neg

    def _finish(self, ctx: RunContext, data: GraphData, model: LinkModel, h: torch.Tensor,
                split: LinkSplit, best_epoch: int, rank_seed: int) -> None:
        o = self.options
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
            ctx.info(f"[{ctx.stage.section if ctx.stage else 'train'}] scored "
                     f"{cand.shape[1]:,} candidate pairs from {o.score_pairs}")
        figures["best_epoch"] = best_epoch
        ctx.log_metrics(**figures)
        ctx.artifacts.embeddings = h.detach().cpu()  # (N, D)
        ctx.artifacts.links = ScoredLinks(*(torch.cat(cols, dim=-1) for cols in zip(*parts)))
        ctx.artifacts.model = model.cpu().eval()
        shown = ", ".join(f"{k} {v:.4f}" for k, v in figures.items()
                          if k.startswith("test_") and k.count("@") == 0)
        ctx.info(f"[{ctx.stage.section if ctx.stage else 'train'}] {shown}")


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
