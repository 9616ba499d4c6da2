"""Artifacts and graphs as Arrow tables, shared by the exporters (Parquet, CSV...).

Layouts (the column names are the contract other tools read):

* embeddings / logits: ``id`` + ``embedding`` / ``logits``, a ``fixed_size_list<float32>``.
  The embeddings of a task on a typed graph cover every node type: ``id``, ``type`` (the
  node type), ``embedding``, one type after the other (ids of types whose ids differ in
  Arrow type become strings).
* predictions: ``id``, ``prediction`` (class id), ``class`` (its name, when the loader knew
  the names) and ``probability`` (the largest softmax probability, when there are logits).
  Multi-label (and a graph task's 0/1 targets): ``prediction`` is the list of predicted
  label ids, ``class`` their names, ``probability`` their sigmoid probabilities. Regression
  (``graph_regression``): ``id`` and ``prediction``, the estimate (float), or the list of
  estimates when there are several targets.
* links: ``src``, ``dst`` (node ids), ``split`` (val / test / candidates), ``label`` (1 edge,
  0 non-edge, null for candidates) and ``score`` (the decoder's raw score), one row per pair.
  On a typed graph also ``relation``, ``src_type`` and ``dst_type`` after ``dst``; ``src`` and
  ``dst`` are ids of those types (strings when the types' ids are of different kinds).
* graph: an edge table ``src``, ``dst`` (node ids) + edge data (``weight``...), and a node
  table ``id`` + node data (``feat`` as a list column, ``label``, masks...).

``id`` holds the users' original ids unless ``ids = false`` (then ``0..N-1``). After a
graph-level task (``graph_classification``...) the artifacts have one row per graph of the
collection and ``id`` holds the graph ids (``0..G-1`` with ``ids = false``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.graph import GraphData
from graphflow.io.node_split import MASKS
from graphflow.linkpred.held_out import LINK_SPLITS
from graphflow.record import package_versions

VECTOR_COLUMNS = {"embeddings": "embedding", "logits": "logits"}
NODE_COLUMNS = ("feat", "label", *MASKS)
"""The node table's first data columns, in this order; other node data follow by name."""


def node_ids(data: GraphData, original: bool) -> pa.Array:
    """The id column: original ids, or ``0..N-1``."""
    if original:
        return data.ids.to_arrow()
    return pa.array(np.arange(data.num_nodes, dtype=np.int64))


def graph_level(ctx: RunContext) -> bool:
    """Whether the artifacts are per graph of a collection (made by a graph-level task)."""
    info = ctx.artifacts.model_info or {}
    return info.get("level") == "graph" and ctx.data is not None \
        and ctx.data.graphs is not None


def typed_rows(ctx: RunContext) -> str | None:
    """The node type whose nodes the artifacts cover (a task on a typed graph), or None."""
    ntype = (ctx.artifacts.model_info or {}).get("node_type")
    if ntype is None:
        return None
    data = ctx.graph()
    return ntype if data.typed_ids is not None else None


def embedding_types(ctx: RunContext, what: str | None) -> list[tuple[str, int]] | None:
    """``[(node type, rows), ...]`` when ``what`` is the ``embeddings`` of a task on a typed
    graph (every node type's rows, type after type), else None."""
    types = (ctx.artifacts.model_info or {}).get("embedding_types")
    if what != "embeddings" or not types or ctx.data is None or not ctx.data.is_typed:
        return None
    return [(str(t), int(n)) for t, n in types]


def typed_ids(ctx: RunContext, types: list[tuple[str, int]], original: bool
              ) -> tuple[pa.Array, pa.Array]:
    """(id, type) columns of per-type rows: each type's original ids (or ``0..n-1`` within
    the type), one type after the other; ids of different Arrow types become strings."""
    data = ctx.graph()
    parts = []
    for t, _ in types:
        ids = data.typed_ids[t] if data.typed_ids is not None else None
        parts.append(ids.to_arrow() if original and ids is not None else
                     pa.array(np.arange(data.graph.num_nodes(t), dtype=np.int64)))
    if len({p.type for p in parts}) > 1:
        parts = [p.cast(pa.string()) for p in parts]
    names = pa.array([t for t, _ in types], pa.string())
    kind = names.take(pa.array(np.repeat(np.arange(len(types)), [n for _, n in types])))
    return pa.concat_arrays(parts) if parts else pa.array([], pa.int64()), kind


def artifact_ids(ctx: RunContext, original: bool, what: str | None = None) -> pa.Array:
    """The id column of an artifact table: graph ids for graph-level artifacts, the target
    type's ids for a task on a typed graph (every type's, in turn, for its ``embeddings``),
    else node ids."""
    data = ctx.graph()
    types = embedding_types(ctx, what)
    if types is not None:
        return typed_ids(ctx, types, original)[0]
    ntype = typed_rows(ctx)
    if ntype is not None:
        ids = data.typed_ids[ntype]
        return ids.to_arrow() if original else pa.array(np.arange(len(ids), dtype=np.int64))
    if not graph_level(ctx):
        return node_ids(data, original)
    graphs = data.graphs
    if original:
        return graphs.ids
    return pa.array(np.arange(graphs.num_graphs, dtype=np.int64))


def run_info(ctx: RunContext, what: str, original_ids: bool) -> dict[str, Any]:
    """Metadata stored with every export: which run, which config, which versions."""
    data = ctx.data
    info: dict[str, Any] = {
        "pipeline": ctx.config.settings.name,
        "config_hash": ctx.config.digest(),
        "seed": ctx.seed,
        "what": what,
        "section": ctx.stage.section if ctx.stage else None,
        "ids": "original" if original_ids else "internal",
        "versions": package_versions(),
    }
    if data is not None:
        info["graph"] = data.name
        if "classes" in data.meta:
            info["classes"] = list(data.meta["classes"])
    return info


def stage_label(ctx: RunContext) -> str:
    """``[export.0] parquet``: how messages name the exporter that is running."""
    return f"[{ctx.stage.section}] {ctx.stage.type}" if ctx.stage else "[export]"


def node_artifact(ctx: RunContext, what: str) -> torch.Tensor:
    """A per-node artifact on the CPU, checked against the graph's node count; messages name
    the running exporter (:func:`stage_label`)."""
    section = stage_label(ctx)
    value = ctx.artifacts.require(what, section=section)
    tensor = value.detach().cpu()
    if graph_level(ctx):
        g = ctx.graph().graphs.num_graphs
        if tensor.shape[0] != g:
            raise ConfigError(f"{section}: the {what} artifact has {tensor.shape[0]} rows but "
                              f"the collection has {g} graphs")
        return tensor
    ntype = typed_rows(ctx)
    n = ctx.graph().graph.num_nodes(ntype) if ntype is not None else ctx.graph().num_nodes
    types = embedding_types(ctx, what)
    if types is not None:
        n = sum(rows for _, rows in types)
    if tensor.shape[0] != n:
        raise ConfigError(f"{section}: the {what} artifact has {tensor.shape[0]} rows but the "
                          f"graph has {n} nodes; the task that made it must return one row per "
                          f"node")
    return tensor


def fixed_list(matrix: torch.Tensor, dtype: pa.DataType = pa.float32()) -> pa.Array:
    """(N, D) -> ``fixed_size_list<dtype>[D]`` without a Python loop."""
    matrix = matrix.reshape(matrix.shape[0], -1)
    values = pa.array(matrix.contiguous().reshape(-1).numpy(), type=dtype)
    return pa.FixedSizeListArray.from_arrays(values, matrix.shape[1])


def vectors_table(ids: pa.Array, matrix: torch.Tensor, what: str) -> pa.Table:
    return pa.table({"id": ids, VECTOR_COLUMNS[what]: fixed_list(matrix.float())})


def predictions_table(ids: pa.Array, predictions: torch.Tensor, logits: torch.Tensor | None,
                      classes: list[str] | None) -> pa.Table:
    """See the module docstring; ``classes`` names the class ids when known."""
    names = pa.array(classes, pa.string()) if classes else None
    if predictions.dim() == 1:
        pred = predictions.long()
        columns: dict[str, pa.Array] = {"id": ids, "prediction": pa.array(pred.numpy())}
        if names is not None:
            columns["class"] = names.take(pa.array(pred.clamp(min=0).numpy()))
        if logits is not None:
            prob = torch.softmax(logits.float(), dim=1).max(dim=1).values
            columns["probability"] = pa.array(prob.numpy())
        return pa.table(columns)
    rows, cols = torch.nonzero(predictions > 0.5, as_tuple=True)  # row-major order
    offsets = pa.array(np.concatenate([[0], torch.bincount(
        rows, minlength=predictions.shape[0]).cumsum(0).numpy()]).astype(np.int32))
    columns = {"id": ids,
               "prediction": pa.ListArray.from_arrays(offsets, pa.array(cols.numpy()))}
    if names is not None:
        columns["class"] = pa.ListArray.from_arrays(offsets, names.take(pa.array(cols.numpy())))
    if logits is not None:
        prob = torch.sigmoid(logits.float())[rows, cols]
        columns["probability"] = pa.ListArray.from_arrays(offsets, pa.array(prob.numpy()))
    return pa.table(columns)


def estimates_table(ids: pa.Array, values: torch.Tensor) -> pa.Table:
    """A regression's predictions: ``id``, ``prediction`` (float, or a list of T floats)."""
    v = values.float().reshape(values.shape[0], -1)  # (G, T)
    column = pa.array(v[:, 0].numpy()) if v.shape[1] == 1 else fixed_list(v)
    return pa.table({"id": ids, "prediction": column})


def links_table(ctx: RunContext, original_ids: bool) -> pa.Table:
    """The ``links`` artifact: one row per scored pair (see the module docstring)."""
    links = ctx.artifacts.require("links", section=stage_label(ctx))
    label = links.label.float()
    known = ~torch.isnan(label)
    if links.relations is not None:
        src, dst, columns = typed_link_columns(ctx.graph(), links, original_ids)
    else:
        ids = node_ids(ctx.graph(), original_ids)
        src = ids.take(pa.array(links.pairs[0].numpy()))
        dst = ids.take(pa.array(links.pairs[1].numpy()))
        columns = {}
    return pa.table({
        "src": src,
        "dst": dst,
        **columns,
        "split": pa.array(LINK_SPLITS, pa.string()).take(pa.array(links.split.long().numpy())),
        "label": pa.array(label.nan_to_num(0).to(torch.int8).numpy(),
                          mask=(~known).numpy()),
        "score": pa.array(links.score.float().numpy()),
    })


def typed_link_columns(data: GraphData, links: Any, original_ids: bool
                       ) -> tuple[pa.Array, pa.Array, dict[str, pa.Array]]:
    """A typed graph's scored pairs: ``src`` and ``dst`` ids of their own node types (as
    strings when the types' ids differ in kind), and ``relation`` (its short name),
    ``src_type``, ``dst_type`` columns. Rows keep their order; one take per relation."""
    rels, code = links.relations, links.relation.long()
    names = links.names or [":".join(r) for r in rels]
    ends = []
    for side in (0, 1):  # src, dst
        types = {r[2 * side] for r in rels}
        kinds = {data.typed_ids[t].to_arrow().type for t in types}
        as_text = original_ids and len(kinds) > 1
        parts, order = [], []
        for i, rel in enumerate(rels):  # over relations
            rows = (code == i).nonzero().squeeze(1)
            ids = data.typed_ids[rel[2 * side]]
            values = ids.to_arrow() if original_ids else \
                pa.array(np.arange(len(ids), dtype=np.int64))
            if as_text:
                values = values.cast(pa.string())
            parts.append(values.take(pa.array(links.pairs[side, rows].numpy())))
            order.append(rows)
        taken = pa.concat_arrays(parts) if parts else pa.array([], pa.int64())
        back = torch.argsort(torch.cat(order)) if order else torch.zeros(0, dtype=torch.int64)
        ends.append(taken.take(pa.array(back.numpy())))
    table = {
        "relation": pa.array(names, pa.string()).take(pa.array(code.numpy())),
        "src_type": pa.array([r[0] for r in rels], pa.string()).take(pa.array(code.numpy())),
        "dst_type": pa.array([r[2] for r in rels], pa.string()).take(pa.array(code.numpy())),
    }
    return ends[0], ends[1], table


def artifact_table(ctx: RunContext, what: str, original_ids: bool) -> pa.Table:
    """The table of an artifact (embeddings, logits, predictions: per node; links: per pair)."""
    if what == "links":
        return links_table(ctx, original_ids)
    data = ctx.graph()
    ids = artifact_ids(ctx, original_ids)
    if what == "predictions":
        if (ctx.artifacts.model_info or {}).get("target_kind") == "regression":
            return estimates_table(ids, node_artifact(ctx, what))
        logits = ctx.artifacts.logits
        classes = data.meta.get("graph_classes" if graph_level(ctx) else "classes")
        return predictions_table(ids, node_artifact(ctx, what),
                                 None if logits is None else logits.detach().cpu(), classes)
    types = embedding_types(ctx, what)
    if types is not None:  # a typed graph's embeddings: id, type, embedding
        ids, kind = typed_ids(ctx, types, original_ids)
        table = vectors_table(ids, node_artifact(ctx, what), what)
        return table.add_column(1, "type", kind)
    return vectors_table(ids, node_artifact(ctx, what), what)


def graph_tables(data: GraphData, original_ids: bool) -> tuple[pa.Table, pa.Table]:
    """(edge table, node table) of a graph: endpoints as node ids, data as columns."""
    g = data.graph
    ids = node_ids(data, original_ids)
    src, dst = g.edges()
    edges = {"src": ids.take(pa.array(src.numpy())), "dst": ids.take(pa.array(dst.numpy()))}
    edges.update({name: _column(t) for name, t in sorted(g.edata.items())})
    nodes = {"id": ids}
    nodes.update({name: _column(t) for name, t in sorted(g.ndata.items(), key=_node_order)})
    return pa.table(edges), pa.table(nodes)


def _node_order(item: tuple[str, torch.Tensor]) -> tuple[int, str]:
    name = item[0]
    return (NODE_COLUMNS.index(name) if name in NODE_COLUMNS else len(NODE_COLUMNS)), name


def _column(t: torch.Tensor) -> pa.Array:
    t = t.detach().cpu()
    if t.dim() == 1:
        return pa.array(t.numpy())
    return fixed_list(t, pa.from_numpy_dtype(t.numpy().dtype))
