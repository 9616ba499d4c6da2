"""``[train] type = "predict"``: apply a trained model bundle instead of training."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from graphflow.bundle.fitted import REPLAY
from graphflow.bundle.layout import find_bundle
from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.options import option
from graphflow.train.task import check_at_least


PAIR_CHUNK = 65536
"""Pairs scored at once by default."""
GRAPH_BATCH = 1024
"""Graphs per batch by default, for a bundle that does not record its stage's."""


@dataclass
class PredictOptions:
    bundle: Path = option(doc="A training run's folder (with its model/ bundle), or a "
                              "bundle folder.")
    stage: str | None = option(
        None, 'The training stage whose bundle to use when the run trained several '
              '([[train]]), e.g. "train.1".')
    nodes: Path | None = option(
        None, "Node models: predict only these nodes: a Parquet, CSV (column id) or text "
              "file (one id a line) of original node ids. Default: every node.")
    graphs: Path | None = option(
        None, "Graph models: predict only these graphs of the collection: a Parquet, CSV "
              "(column id) or text file of original graph ids. Default: every graph.")
    pairs: Path | None = option(
        None, "Link models: a Parquet or CSV file of src, dst pairs (original ids) to score; "
              'they make the links artifact (split = "candidates").')
    batch_size: int | None = option(
        None, "Nodes per batch of layer-wise inference (bounds memory); default: the "
              "training stage's (0: the whole graph in one forward pass).")
    eval_batch_size: int | None = option(
        None, "Pairs scored at once (default 65536), or graphs per batch (default: the "
              "training stage's eval_batch_size, 1024 unless set).")

    def __post_init__(self) -> None:
        check_at_least(self, 0, "batch_size")
        if self.eval_batch_size is not None:
            check_at_least(self, 1, "eval_batch_size")


class Predict(Task):
    """Load a model bundle (``OUT_DIR/model/`` of a training run) and apply it to the
    pipeline's graph: what ``graphflow predict`` runs (docs/inference.md).

    The bundle's fitted transform state (``normalize_features`` statistics) replaces
    refitting: the pipeline's transforms apply the training statistics to the new data.
    The data must match the model's input (feature width and columns, edge weights); a
    stateful training transform missing from the pipeline is refused.

    Node models: ``predictions`` and ``logits`` of every node (or of ``nodes``: the
    graph after this stage is then those nodes, for the exporters), and the ``embeddings``
    (the last hidden layer's vectors) when an export asks for them. A typed model's rows
    are its target type's nodes (its embeddings: every node type's). Link models: the
    ``embeddings``, and the ``links`` scores of ``pairs``. Graph models: per-graph
    ``predictions``, ``logits`` and ``embeddings``. The ``model`` artifact is the loaded
    module. With labels in the data, ``predict_acc`` (node and graph classes) is logged.
    """

    name = "predict"
    summary = "Apply a trained model bundle to the graph instead of training"
    level = "any"
    Options = PredictOptions
    options: PredictOptions

    def check(self) -> None:
        find_bundle(self.options.bundle, self.options.stage)

    def run(self, ctx: RunContext) -> None:
        from graphflow.bundle import load_bundle

        o = self.options
        bundle = load_bundle(o.bundle, stage=o.stage, host=ctx.host, warn=ctx.info)
        data = ctx.graph()
        bundle.check_data(data, where=f"the graph {data.name!r}")
        ctx.info(f"[{ctx.section}] predict: {bundle.kind} model "
                 f"{bundle.meta['model']['type']!r} from {bundle.path}")
        a = ctx.artifacts
        a.model, a.model_info = bundle.model, {**bundle.model_info, "bundle": str(bundle.path)}
        self._check_selection(bundle.kind)
        if bundle.kind == "graph":
            self._graphs(ctx, bundle, data)
        elif bundle.kind == "link":
            self._links(ctx, bundle, data)
        else:
            self._nodes(ctx, bundle, data)

    def _check_selection(self, kind: str) -> None:
        """``nodes`` for node models, ``graphs`` for graph models: one line otherwise."""
        o = self.options
        if o.nodes is not None and kind != "node":
            fix = ("choose graphs with graphs = FILE (--graphs)" if kind == "graph" else
                   "it embeds every node; score chosen pairs with pairs = FILE (--pairs)")
            raise ConfigError(f"nodes = {o.nodes}: the bundle holds a {kind} model; {fix}")
        if o.graphs is not None and kind != "graph":
            fix = (", which predicts nodes; choose nodes with nodes = FILE (--nodes)"
                   if kind == "node" else
                   "; score chosen pairs with pairs = FILE (--pairs)")
            raise ConfigError(f"graphs = {o.graphs}: the bundle holds a {kind} model{fix}")

    def _nodes(self, ctx: RunContext, bundle: Any, data: GraphData) -> None:
        from graphflow.bundle.infer import node_outputs, node_predictions
        from graphflow.bundle.ids import lookup, read_id_file

        o = self.options
        logits = node_outputs(bundle, data, batch_size=o.batch_size, device=ctx.device,
                              progress=ctx.progress)  # (N, C); a typed model: (n_target, C)
        target = bundle.target  # None for a one-type model
        emb, types = None, None
        if any(getattr(e.options, "what", None) == "embeddings" for e in ctx.config.exports):
            emb, types = self._embeddings(ctx, bundle, data)
        if o.nodes is not None:
            if target is None:
                index = lookup(data.ids, read_id_file(o.nodes), what=f"{o.nodes}: node id")
                data = _only_nodes(data, index)
            else:
                index = lookup(data.typed_ids[target] if data.typed_ids is not None
                               else NodeIds.identity(logits.shape[0]), read_id_file(o.nodes),
                               what=f"{o.nodes}: node id", member=f"a {target!r} node")
                data = _only_typed_nodes(data, target, index)
            ctx.data = data
            logits = logits[index]
            if emb is not None and types is not None:  # the target type's rows only
                starts = dict(zip((t for t, _ in types), _offsets(types)))
                emb = emb[starts[target]:starts[target] + int(dict(types)[target])]
                types = None
            if emb is not None:
                emb = emb[index]
        ctx.artifacts.model_info.pop("embedding_types", None)  # the training graph's rows
        if emb is not None:
            ctx.artifacts.embeddings = emb
            if types is not None:
                ctx.artifacts.model_info = {**ctx.artifacts.model_info,
                                            "embedding_types": types}
        predictions = node_predictions(bundle, logits)
        ctx.artifacts.logits, ctx.artifacts.predictions = logits, predictions
        if bundle.class_names and "classes" not in data.meta:
            data.meta["classes"] = list(bundle.class_names)
        if target is not None and data.is_typed:  # exporters write the target type's rows
            ctx.artifacts.model_info = {**ctx.artifacts.model_info, "node_type": target}
            label = data.graph.nodes[target].data.get("label")
        else:
            label = data.graph.ndata.get("label") if not data.is_typed else None
        figures: dict[str, float] = {"predicted_nodes": float(logits.shape[0])}
        if label is not None and label.dim() == 1 and not bundle.multilabel:
            known = label >= 0
            if bool(known.any()):
                figures["predict_acc"] = float((predictions[known] == label[known])
                                               .float().mean())
        self._log(ctx, figures)

    def _embeddings(self, ctx: RunContext, bundle: Any, data: GraphData) -> tuple[Any, Any]:
        """A node model's embeddings (an export asks for them), as node_classification leaves
        them: the last hidden layer's node vectors; a typed model's: every node type's rows,
        with their ``[[type, rows], ...]``."""
        from graphflow.bundle.infer import batch_size_of, node_embeddings

        adj, x = bundle.inputs(data)
        emb, types = node_embeddings(
            bundle.model, adj, x, device=ctx.device, progress=ctx.progress,
            batch_size=0 if bundle.typed is not None
            else batch_size_of(bundle, self.options.batch_size))
        if emb is None:
            raise ConfigError(f"[{ctx.section}] the bundle's model "
                              f"{bundle.meta['model']['type']!r} is not a graphflow layer "
                              f"stack, so its embeddings (the last hidden layer) are not "
                              f"known; export predictions or logits")
        return emb, types

    def _links(self, ctx: RunContext, bundle: Any, data: GraphData) -> None:
        from graphflow.bundle.infer import node_outputs, pair_scores
        from graphflow.linkpred.edge_split import read_pairs
        from graphflow.linkpred.held_out import LINK_SPLITS, ScoredLinks

        o = self.options
        h = node_outputs(bundle, data, batch_size=o.batch_size, device=ctx.device,
                         progress=ctx.progress)  # (N, D)
        ctx.artifacts.embeddings = h
        figures: dict[str, float] = {"embedded_nodes": float(h.shape[0])}
        if o.pairs is not None:
            pairs = read_pairs(o.pairs, data.ids, what="pairs file")  # (2, P)
            scores = pair_scores(bundle, h, pairs, chunk=o.eval_batch_size or PAIR_CHUNK,
                                 device=ctx.device)
            p = pairs.shape[1]
            ctx.artifacts.links = ScoredLinks(
                pairs, torch.full((p,), LINK_SPLITS.index("candidates"), dtype=torch.int8),
                torch.full((p,), float("nan")), scores)
            figures["scored_pairs"] = float(p)
        self._log(ctx, figures)

    def _graphs(self, ctx: RunContext, bundle: Any, data: GraphData) -> None:
        from graphflow.bundle.ids import lookup, read_id_file
        from graphflow.bundle.infer import graph_outputs, graph_predictions

        o = self.options
        if o.graphs is not None:
            index = lookup(data.graphs.ids, read_id_file(o.graphs, "graph"),
                           what=f"{o.graphs}: graph id", member="a graph of the collection")
            data = ctx.data = data.take_graphs(index)
        # graphs per batch as the training stage evaluated them: a batch of a few thousand
        # small graphs stays in the caches, one of the whole collection does not
        per_batch = o.eval_batch_size or int((bundle.meta.get("task") or {}).get(
            "eval_batch_size") or GRAPH_BATCH)
        scores, emb = graph_outputs(bundle, data, batch_size=per_batch, device=ctx.device)
        a = ctx.artifacts
        a.logits, a.embeddings = scores, emb
        a.predictions = graph_predictions(bundle, scores)
        a.model_info = {**a.model_info, "level": "graph"}
        if bundle.class_names and "graph_classes" not in data.meta:
            data.meta["graph_classes"] = list(bundle.class_names)
        figures: dict[str, float] = {"predicted_graphs": float(scores.shape[0])}
        labels = data.graphs.labels
        if labels is not None and labels.dim() == 1 and not labels.is_floating_point() \
                and a.predictions.dim() == 1:
            figures["predict_acc"] = float((a.predictions == labels).float().mean())
        self._log(ctx, figures)

    @staticmethod
    def _log(ctx: RunContext, figures: dict[str, float]) -> None:
        ctx.log_metrics(**figures)
        ctx.info(f"[{ctx.section}] " + ", ".join(
            f"{k} {v:.4f}" if k.endswith("acc") else f"{k} {int(v):,}"
            for k, v in figures.items()))


def _only_nodes(data: GraphData, index: torch.Tensor) -> GraphData:
    """The nodes ``index`` without edges: what the exporters write rows for."""
    from graphflow.compat.dgl import dgl

    g = dgl.graph((torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64)),
                  num_nodes=int(index.numel()))
    for name, values in data.graph.ndata.items():
        g.ndata[name] = values[index]
    return GraphData(graph=g, ids=data.ids.take(index), name=data.name, meta=dict(data.meta))


def _offsets(types: list[list[Any]]) -> list[int]:
    """The first row of each type in rows laid out type after type."""
    out, start = [], 0
    for _, n in types:
        out.append(start)
        start += int(n)
    return out


def _only_typed_nodes(data: GraphData, ntype: str, index: torch.Tensor) -> GraphData:
    """The nodes ``index`` of type ``ntype`` of a typed graph, as a one-type graph without
    edges (their data and original ids): what the exporters write rows for."""
    from graphflow.compat.dgl import dgl

    g = dgl.graph((torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64)),
                  num_nodes=int(index.numel()))
    for name, values in data.graph.nodes[ntype].data.items():
        g.ndata[name] = values[index]
    ids = data.typed_ids[ntype] if data.typed_ids is not None \
        else NodeIds.identity(data.graph.num_nodes(ntype))
    return GraphData(graph=g, ids=ids.take(index), name=data.name, meta=dict(data.meta))


def replay_fitted_state(ctx: RunContext) -> None:
    """Before a predicting pipeline's transforms run: hand them the bundle's fitted state
    (:mod:`graphflow.bundle.fitted`), so that they reuse the training statistics."""
    from graphflow.bundle.load import read_meta

    stage = next((t for t in ctx.config.train if t.task.type == Predict.name), None)
    if stage is None or ctx.data is None:
        return
    o = stage.task.options
    try:
        meta = read_meta(find_bundle(o.bundle, o.stage))
    except DataError:
        return  # the predict stage reports it, naming its section
    ctx.data.meta[REPLAY] = list(meta.get("fitted") or [])
