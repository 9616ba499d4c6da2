"""What the server answers, independent of HTTP: a bundle, the served graph, its outputs.

At start :func:`start_service` runs the data pipeline (the ``--data`` file's, else the
training run's own ``[load]`` and ``[[transform]]`` sections) with the bundle's ``predict``
stage: the served graph goes through the training's transforms and fitted statistics,
and every node's output (class scores, or a link model's embeddings) is computed once, by
layer-wise inference; for a graph model, every graph's scores of the served collection.
Requests for the served graph's nodes (or the collection's graphs) are then lookups; a
posted subgraph (or posted graphs) is transformed and inferred per request.

A typed model (``rgcn``, ``hetero``) serves its target type's nodes of the served typed
graph, named by their original ids; it takes no posted subgraphs (its featureless types are
learnt per node of the training graph).
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.bundle.load import Bundle
from graphflow.context import RunContext
from graphflow.errors import GraphflowError
from graphflow.graph import GraphData

SUBGRAPH_SKIP = ("split", "link_split", "hold_out_nodes", "largest_component")
"""Transforms of the data pipeline not applied to posted subgraphs: they choose nodes,
edges or splits for training, not features."""


class RequestError(Exception):
    """A request the service refuses: an HTTP status and one line saying what is wrong."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass
class Service:
    """The served model and graph (see the module docstring)."""

    bundle: Bundle
    ctx: RunContext
    outputs: torch.Tensor  # (N, C) logits or (N, D) embeddings; (G, C) scores of graphs
    max_items: int = 100_000
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def data(self) -> GraphData:
        return self.ctx.graph()

    # -- GET ------------------------------------------------------------------------------
    @property
    def node_ids(self) -> Any:
        """The original ids of the served rows: the graph's nodes, or a typed model's target
        type's nodes."""
        target = self.bundle.target
        if target is None:
            return self.data.ids
        from graphflow.bundle.typed import type_ids

        return type_ids(self.data, target)

    def health(self) -> dict[str, Any]:
        out = {"status": "ok", "kind": self.bundle.kind, "nodes": self.data.num_nodes}
        if self.bundle.target is not None:
            out["node_type"] = self.bundle.target
            out["target_nodes"] = len(self.node_ids)
        if self.data.graphs is not None:
            out["graphs"] = self.data.graphs.num_graphs
        return out

    def model(self) -> dict[str, Any]:
        b = self.bundle
        meta = b.meta
        return {"bundle": str(b.path), "kind": b.kind, "model": meta.get("model"),
                "task": (meta.get("task") or {}).get("type"), "in_dim": b.in_dim,
                "classes": b.class_names, "multilabel": b.multilabel,
                "versions": b.versions, "created": meta.get("created"),
                "differences": [d.line() for d in b.differences],
                "graph": {"name": self.data.name, "nodes": self.data.num_nodes,
                          "edges": self.data.num_edges,
                          **({"graphs": self.data.graphs.num_graphs}
                             if self.data.graphs is not None else {})},
                **({"typed": {"target": b.target, "node_types": b.typed["ntypes"],
                              "relations": b.typed["relations"]}}
                   if b.typed is not None else {}),
                "endpoints": endpoints(b.kind, typed=b.typed is not None)}

    # -- POST -----------------------------------------------------------------------------
    def predict_nodes(self, body: Any) -> dict[str, Any]:
        """``{"ids": [...]}`` → one prediction per id (node models)."""
        self._require("node", "/predict/nodes")
        ids = _list(body, "ids", self.max_items)
        index = self._lookup(self.data, ids, "ids", known=self.node_ids)
        return {"predictions": self._rows(ids, self.outputs[index])}

    def score_pairs(self, body: Any) -> dict[str, Any]:
        """``{"pairs": [[src, dst], ...]}`` → a score per pair (link models)."""
        self._require("link", "/score/pairs")
        pairs = _list(body, "pairs", self.max_items)
        if not all(isinstance(p, list) and len(p) == 2 for p in pairs):
            raise RequestError(422, "pairs: give a list of [src, dst] pairs of node ids")
        flat = [v for p in pairs for v in p]
        index = self._lookup(self.data, flat, "pairs").reshape(-1, 2).T  # (2, P)
        from graphflow.bundle.infer import pair_scores

        scores = pair_scores(self.bundle, self.outputs, index)
        return {"scores": [{"src": s, "dst": d, "score": float(v)}
                           for (s, d), v in zip(pairs, scores.tolist())]}

    def predict_subgraph(self, body: Any) -> dict[str, Any]:
        """``{"nodes": [...], "features": [[...]], "edges": [[src, dst], ...],
        "predict": [...]}`` → predictions for ``predict`` (default: every posted node),
        inferred on the posted subgraph alone (inductive)."""
        self._require("node", "/predict/subgraph")
        if self.bundle.typed is not None:
            raise RequestError(400, f"/predict/subgraph takes one-type graphs; this model "
                                    f"reads a typed graph: ask for its served "
                                    f"{self.bundle.target!r} nodes with POST /predict/nodes")
        data = self._subgraph(body)
        want = body.get("predict")
        with self.lock:  # transforms and inference on one request at a time
            try:
                data = self._transform(data)
                from graphflow.bundle.infer import node_outputs

                logits = node_outputs(self.bundle, data, batch_size=0)
            except GraphflowError as exc:
                raise RequestError(422, str(exc)) from None
        if want is None:
            ids, index = data.ids.to_arrow().to_pylist(), torch.arange(data.num_nodes)
        else:
            ids = _list(body, "predict", self.max_items)
            index = self._lookup(data, ids, "predict")
        return {"predictions": self._rows(ids, logits[index])}

    def predict_graphs(self, body: Any) -> dict[str, Any]:
        """``{"ids": [...]}`` → one prediction per graph of the served collection (graph
        models)."""
        self._require("graph", "/predict/graphs")
        ids = _list(body, "ids", self.max_items)
        from graphflow.bundle.ids import lookup

        if not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
            raise RequestError(422, "ids: graph ids must be strings or integers")
        known = self.data.graphs.ids
        try:
            index = lookup(known, pa.array(ids) if ids else pa.array([], known.type),
                           what="ids: graph id", member="a graph of the served collection")
        except (GraphflowError, pa.ArrowException) as exc:
            raise RequestError(404, str(exc).replace("; use ids of the loaded graph", ""))\
                from None
        return {"predictions": self._graph_rows(ids, self.outputs[index])}

    def predict_new_graphs(self, body: Any) -> dict[str, Any]:
        """``{"graphs": [{"id": ..., "features": [[...]], "edges": [[i, j], ...],
        "edge_features": [[...]]}, ...]}`` → one prediction per posted graph (graph models),
        inferred on the posted graphs after the training's transforms. Edges join node
        positions of their own graph (``0..len(features) - 1``)."""
        self._require("graph", "/predict/graphs/new")
        graphs = _list(body, "graphs", self.max_items)
        data = posted_collection(graphs, self.bundle.in_dim, self.max_items)
        with self.lock:  # transforms and inference on one request at a time
            try:
                data = self._transform(data)
                self.bundle.check_data(data, where="the posted graphs")
                from graphflow.bundle.infer import graph_outputs

                scores, _ = graph_outputs(self.bundle, data)
            except GraphflowError as exc:
                raise RequestError(422, str(exc)) from None
        return {"predictions": self._graph_rows(data.graphs.ids.to_pylist(), scores)}

    # -- helpers --------------------------------------------------------------------------
    def _graph_rows(self, ids: list[Any], scores: torch.Tensor) -> list[dict[str, Any]]:
        """Rows of a graph model: classes as node models' rows; 0/1 tasks their labels and
        probabilities; regression the estimates."""
        kind = self.bundle.model_info.get("target_kind", "classes")
        if kind == "classes":
            return self._rows(ids, scores)
        if kind == "binary":
            prob = torch.sigmoid(scores)
            return [{"id": i, "labels": [int(p > 0.5) for p in row],
                     "probabilities": [round(p, 6) for p in row]}
                    for i, row in zip(ids, prob.tolist())]
        return [{"id": i, "prediction": row if len(row) > 1 else row[0]}
                for i, row in zip(ids, scores.tolist())]

    def _require(self, kind: str, path: str) -> None:
        if self.bundle.kind != kind:
            raise RequestError(400, f"{path} needs a {kind} model; this is a "
                                    f"{self.bundle.kind} model: use "
                                    f"{', '.join(endpoints(self.bundle.kind)[2:]) or 'GET /model'}")

    @staticmethod
    def _lookup(data: GraphData, ids: list[Any], what: str, known: Any = None) -> torch.Tensor:
        """Internal ids of ``ids`` among ``known`` (default: the nodes of ``data``)."""
        from graphflow.bundle.ids import lookup

        known = data.ids if known is None else known
        if not all(isinstance(i, (str, int)) and not isinstance(i, bool) for i in ids):
            raise RequestError(422, f"{what}: node ids must be strings or integers")
        values = pa.array(ids) if ids else pa.array([], known.to_arrow().type)
        try:
            return lookup(known, values, what=f"{what}: node id")
        except (GraphflowError, pa.ArrowException) as exc:
            raise RequestError(404, str(exc).replace("is not a node of the graph; use ids of "
                                                     "the loaded graph",
                                                     "is not a node of the served graph")) \
                from None

    def _rows(self, ids: list[Any], logits: torch.Tensor) -> list[dict[str, Any]]:
        names = self.bundle.class_names
        if self.bundle.multilabel:
            prob = torch.sigmoid(logits)
            return [{"id": i, "labels": [k for k, p in enumerate(row) if p > 0.5],
                     "probabilities": [round(p, 6) for p in row]}
                    for i, row in zip(ids, prob.tolist())]
        prob = torch.softmax(logits, dim=1)
        best, cls = prob.max(dim=1)
        out = []
        for i, c, p in zip(ids, cls.tolist(), best.tolist()):
            row: dict[str, Any] = {"id": i, "prediction": c, "probability": p}
            if names:
                row["class"] = names[c]
            out.append(row)
        return out

    def _subgraph(self, body: Any) -> GraphData:
        nodes = _list(body, "nodes", self.max_items)
        feats = _list(body, "features", self.max_items)
        edges = body.get("edges", [])
        if not isinstance(edges, list) or not all(isinstance(e, list) and len(e) == 2
                                                  for e in edges):
            raise RequestError(422, "edges: give a list of [src, dst] pairs of posted node ids")
        if len(edges) > self.max_items * 10:
            raise RequestError(413, f"edges: at most {self.max_items * 10:,} per request")
        if len(feats) != len(nodes):
            raise RequestError(422, f"features: {len(feats)} rows for {len(nodes)} nodes; give "
                                    f"one row per node")
        if not nodes:
            raise RequestError(422, "nodes: give at least one node")
        if len(set(map(repr, nodes))) != len(nodes):
            raise RequestError(422, "nodes: ids must be unique")
        try:
            x = torch.tensor(feats, dtype=torch.float32)
        except (TypeError, ValueError):
            raise RequestError(422, "features: give rows of numbers, all of the same width") \
                from None
        if x.dim() != 2 or x.shape[1] != self.bundle.in_dim:
            width = x.shape[1] if x.dim() == 2 else 0
            raise RequestError(422, f"features: rows of {width} numbers, but the model reads "
                                    f"{self.bundle.in_dim} feature columns")
        if not bool(torch.isfinite(x).all()):
            raise RequestError(422, "features: NaN or infinite values")
        from graphflow.compat.dgl import dgl
        from graphflow.graph import NodeIds

        ids = NodeIds(len(nodes), pa.array(nodes))
        empty = GraphData(graph=dgl.graph((torch.zeros(0, dtype=torch.int64),
                                           torch.zeros(0, dtype=torch.int64)),
                                          num_nodes=len(nodes)), ids=ids, name="request")
        if edges:
            flat = [v for e in edges for v in e]
            try:
                ends = self._lookup(empty, flat, "edges").reshape(-1, 2)  # (E, 2)
            except RequestError as exc:
                raise RequestError(422, str(exc).replace("a node of the served graph",
                                                         "a posted node")) from None
            g = dgl.graph((ends[:, 0], ends[:, 1]), num_nodes=len(nodes))
        else:
            g = empty.graph
        g.ndata["feat"] = x
        return GraphData(graph=g, ids=ids, name="request")

    def _transform(self, data: GraphData) -> GraphData:
        from graphflow.bundle.fitted import REPLAY

        data.meta[REPLAY] = self.bundle.fitted
        for spec in self.ctx.config.transforms:
            if spec.type not in SUBGRAPH_SKIP:
                data = spec.build().apply(data, self.ctx)
        return data


def endpoints(kind: str, *, typed: bool = False) -> list[str]:
    """The endpoints that serve a model of ``kind`` (``typed``: of a typed graph, whose
    served rows are its target type's nodes)."""
    common = ["GET /health", "GET /model"]
    if kind == "node":
        return common + ["POST /predict/nodes"] + ([] if typed else ["POST /predict/subgraph"])
    if kind == "link":
        return common + ["POST /score/pairs"]
    if kind == "graph":
        return common + ["POST /predict/graphs", "POST /predict/graphs/new"]
    return common


def posted_collection(graphs: list[Any], in_dim: int, max_items: int) -> GraphData:
    """The posted graphs (see :meth:`Service.predict_new_graphs`) as a collection, assembled
    by :func:`graphflow.graphs.build.build_collection` as the collection loaders do.

    :raises RequestError: 422 naming the graph (its position and id) and what is wrong.
    """
    from graphflow.graphs.build import Sources, build_collection

    if not graphs:
        raise RequestError(422, "graphs: give at least one graph")
    feats, edge_lists, efeats, ids, sizes = [], [], [], [], []
    with_edges: bool | None = None  # whether the graphs carry edge features
    edges_total, offset = 0, 0  # edges so far; the first node of this graph
    for k, item in enumerate(graphs):  # request parsing: one pass over the posted graphs
        if not isinstance(item, dict):
            raise RequestError(422, f"graphs[{k}]: expected an object with features and edges")
        gid = item.get("id", k)
        where = f"graphs[{k}] (id {gid!r})"
        if not isinstance(gid, (str, int)) or isinstance(gid, bool):
            raise RequestError(422, f"graphs[{k}]: id must be a string or an integer")
        rows = item.get("features")
        if not isinstance(rows, list) or not rows:
            raise RequestError(422, f"{where}: features: give one row of {in_dim} numbers per "
                                    f"node, at least one node")
        x = _numbers(rows, where, "features", in_dim)
        edges = item.get("edges", [])
        if not isinstance(edges, list) or not all(isinstance(e, list) and len(e) == 2 and
                                                  all(isinstance(v, int) and
                                                      not isinstance(v, bool) for v in e)
                                                  for e in edges):
            raise RequestError(422, f"{where}: edges: give [i, j] pairs of node positions "
                                    f"(integers)")
        e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)  # (E, 2)
        n = x.shape[0]
        if e.size and (e.min() < 0 or e.max() >= n):
            bad = int(e[(e < 0) | (e >= n)][0])
            raise RequestError(422, f"{where}: edges: node {bad} out of range 0..{n - 1}")
        edges_total += e.shape[0]
        if edges_total > max_items * 10:
            raise RequestError(413, f"edges: at most {max_items * 10:,} per request")
        has = "edge_features" in item
        if with_edges is None:
            with_edges = has
        elif has != with_edges:
            raise RequestError(422, f"{where}: edge_features: give them for every graph or "
                                    f"for none")
        if has:
            ef = item["edge_features"]
            if not isinstance(ef, list) or len(ef) != e.shape[0]:
                raise RequestError(422, f"{where}: edge_features: give one row per edge "
                                        f"({e.shape[0]})")
            efeats.append(_numbers(ef, where, "edge_features", None).numpy() if ef else None)
        feats.append(x.numpy())
        edge_lists.append(e + offset)
        ids.append(gid)
        sizes.append(n)
        offset += n
    if len(set(map(repr, ids))) != len(ids):
        raise RequestError(422, "graphs: ids must be unique")
    ends = np.concatenate(edge_lists)  # (E, 2) rows of the whole collection
    edge_features = None
    if with_edges:
        present = [f for f in efeats if f is not None]
        if len({f.shape[1] for f in present}) > 1:
            raise RequestError(422, "edge_features: rows of different widths across graphs")
        width = present[0].shape[1] if present else 0
        edge_features = np.concatenate([f if f is not None else np.zeros((0, width), np.float32)
                                        for f in efeats])
    return build_collection(
        name="request", num_nodes=offset, src=ends[:, 0], dst=ends[:, 1],
        graph_of_node=np.repeat(np.arange(len(sizes)), sizes), num_graphs=len(sizes),
        sources=Sources(edges="the posted edges", graph_index="the posted graphs",
                        graph_labels="the posted graphs"),
        node_attributes=np.concatenate(feats), edge_features=edge_features,
        features="attributes", graph_ids=pa.array(ids))


def _numbers(rows: list[Any], where: str, key: str, width: int | None) -> torch.Tensor:
    """Rows of numbers as float32 (R, W), all finite, ``width`` wide when given."""
    try:
        x = torch.tensor(rows, dtype=torch.float32)
    except (TypeError, ValueError):
        raise RequestError(422, f"{where}: {key}: give rows of numbers, all of the same "
                                f"width") from None
    if x.dim() != 2 or (width is not None and x.shape[1] != width):
        got = x.shape[1] if x.dim() == 2 else 0
        raise RequestError(422, f"{where}: {key}: rows of {got} numbers, but the model reads "
                                f"{width}")
    if not bool(torch.isfinite(x).all()):
        raise RequestError(422, f"{where}: {key}: NaN or infinite values")
    return x


def _list(body: Any, key: str, limit: int) -> list[Any]:
    if not isinstance(body, dict):
        raise RequestError(422, "the body must be a JSON object")
    value = body.get(key)
    if value is None:
        raise RequestError(422, f"{key}: missing; send {{\"{key}\": [...]}}")
    if not isinstance(value, list):
        raise RequestError(422, f"{key}: expected a list, got {type(value).__name__}")
    if len(value) > limit:
        raise RequestError(413, f"{key}: {len(value):,} items, at most {limit:,} per request")
    return value


def start_service(run_dir: Path, *, data: Path | None = None, stage: str | None = None,
                  batch_size: int | None = None, quiet: bool = False) -> Any:
    """Load the bundle, the served graph (``data``: a pipeline file, else the training
    run's data sections) and every node's output (see the module docstring): a
    :class:`Service`; for a knowledge-graph bundle a :class:`~graphflow.serve.kg.KgService`
    (its names and known triples, no graph)."""
    from graphflow.bundle.layout import find_bundle
    from graphflow.bundle.load import read_meta
    from graphflow.config import read_toml, validate_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    folder = find_bundle(run_dir, stage)
    meta = read_meta(folder)
    if meta["kind"] == "kg":  # no graph to load: the bundle holds the names and triples
        from graphflow.bundle import load_bundle
        from graphflow.errors import ConfigError
        from graphflow.serve.kg import start_kg_service

        if data is not None or batch_size is not None:
            raise ConfigError(f"{'--data' if data is not None else '--batch-size'}: a "
                              f"knowledge-graph model serves from its bundle alone; drop it")
        return start_kg_service(load_bundle(folder, warn=None if not quiet else
                                            (lambda line: None)))
    if data is not None:
        raw = {k: v for k, v in read_toml(data).items() if k in ("pipeline", "load", "transform")}
        source = data
    else:
        recorded = meta["data"]
        raw = {"pipeline": dict(recorded["pipeline"]), "load": _no_none(recorded["load"]),
               "transform": [_no_none(t) for t in recorded["transform"]]}
        source = folder / "bundle.json"
    settings = dict(raw.get("pipeline") or {})
    settings["out_dir"] = str((Path(run_dir) / "serve").resolve())
    settings["device"] = "cpu"
    raw["pipeline"] = settings
    stage_table: dict[str, Any] = {"type": "predict", "bundle": str(folder.resolve())}
    if batch_size is not None:
        stage_table["batch_size"] = batch_size
    raw["train"] = stage_table
    host = create_host()
    config = validate_config(raw, host.registry, source=Path(source))
    result = run_pipeline(config, host, quiet=quiet)
    ctx = result.ctx
    ctx.quiet = True  # per-request transforms print nothing
    a = ctx.artifacts
    outputs = a.embeddings if meta["kind"] == "link" else a.logits
    from graphflow.bundle import load_bundle

    bundle = load_bundle(folder, host=host, warn=lambda line: None)
    return Service(bundle=bundle, ctx=ctx, outputs=outputs)


def _no_none(table: dict[str, Any]) -> dict[str, Any]:
    """A resolved section without its None values (the defaults, which TOML cannot hold)."""
    return {k: v for k, v in table.items() if v is not None and not
            (isinstance(v, float) and math.isnan(v))}
