"""Per-type node tables and per-relation edge columns -> a checked typed
:class:`~graphflow.graph.GraphData`.

:func:`typed_graph` is what the typed loaders (``tables``, ``rdf``, typed ``dgl`` and
``networkx`` files) build on, and what code that holds typed arrays calls directly::

    data = typed_graph(
        nodes={"user": {"id": ["u1", "u2"], "feat": np.ones((2, 4))}, "item": None},
        edges={("user", "clicks", "item"): (["u1", "u2"], ["i9", "i7"])},
        reverse=True)

Node ids are mapped per type with one hash pass over the type's id column and every endpoint
column of that type (:func:`graphflow.io.factorize.factorize`): no Python loop over nodes or
edges. A type given a node table has exactly the table's rows as nodes, in order, and every
endpoint must be one of them; a type given ``None`` has the nodes its edges mention, numbered
in order of first appearance.

A graph with one node type and one relation is built by the homogeneous assembly path
(:func:`graphflow.io.assemble.assemble`) and comes back as a plain ``GraphData``: the typed
path adds nothing to graphs that have no types.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError, did_you_mean
from graphflow.graph import GraphData, NodeIds
from graphflow.io.assemble import EdgeColumns, _weights as edge_weights, assemble
from graphflow.io.build import as_table, column
from graphflow.io.factorize import factorize
from graphflow.io.ids import Column, Where, as_tensor, check_no_nulls, normalise_ids
from graphflow.io.nodes import NodeTable, OnNan, check_finite, node_table

Canonical = tuple[str, str, str]
REVERSE_PREFIX = "rev-"


@dataclass
class RelationEdges:
    """The edges of one canonical edge type ``(src_type, relation, dst_type)`` as read.

    ``src`` / ``dst`` hold original node ids of ``src_type`` / ``dst_type``; ``where(i)``
    names row ``i`` in messages (``"cites.csv:12"``) and ``source`` names the table.
    """

    src_type: str
    relation: str
    dst_type: str
    src: Column
    dst: Column
    weight: Column | None = None
    where: Where | None = None
    source: str = "(in memory)"

    @property
    def canonical(self) -> Canonical:
        return (self.src_type, self.relation, self.dst_type)

    def row(self, i: int) -> str:
        return self.where(i) if self.where is not None else f"{self.source}, row {i}"


NodeInput = NodeTable | pa.Table | Mapping[str, Any] | None
EdgeInput = Sequence[RelationEdges] | Mapping[Canonical, tuple[Any, ...]]


def typed_graph(nodes: Mapping[str, NodeInput], edges: EdgeInput, *, reverse: bool = False,
                name: str = "graph", meta: Mapping[str, Any] | None = None,
                on_nan: OnNan = "error", target: str | None = None) -> GraphData:
    """A typed graph from node types and relations.

    :param nodes: every node type, mapped to its node table (a
        :class:`~graphflow.io.nodes.NodeTable`, or a table / dict of columns read with the
        node-table conventions: ``id``, features, ``label``, masks), or to None for a type
        whose nodes are those its edges mention (no node data).
    :param edges: :class:`RelationEdges`, or ``{(src_type, relation, dst_type): (src, dst)
        or (src, dst, weight)}``.
    :param reverse: add ``rev-<relation>`` (``dst_type -> src_type``, same weights) for every
        relation, as message passing over typed graphs usually wants.
    :param target: the node type a task predicts; default: the one type with labels, if one.
    :returns: a typed ``GraphData`` (a homogeneous one for one node type and one relation).
    :raises DataError: an edge naming an undeclared node type, two relations with the same
        canonical name, an endpoint missing from its type's node table, empty ids,
        non-finite weights or features.
    """
    relations = _relations(edges)
    tables = {str(t): _node_table(t, v) for t, v in nodes.items()}
    if not tables:
        raise DataError("a typed graph needs at least one node type")
    _check_types(relations, tables)
    _check_unique(relations, reverse)
    if len(tables) == 1 and len(relations) == 1 and not reverse:
        return _homogeneous(relations[0], next(iter(tables.values())), name, meta, on_nan)
    if not any(len(r.src) for r in relations):
        raise DataError(f"{', '.join(r.source for r in relations) or 'the edge tables'}: no "
                        f"edges; the graph would be empty")
    codes, typed_ids = _index(relations, tables)
    data: dict[Canonical, tuple[torch.Tensor, torch.Tensor]] = {}
    weights: dict[Canonical, torch.Tensor] = {}
    for rel, (s, d) in zip(relations, codes):  # over relations, not edges
        s, d = as_tensor(s), as_tensor(d)
        data[rel.canonical] = (s, d)
        w = _weights(rel) if rel.weight is not None else None
        if w is not None:
            weights[rel.canonical] = w
        if reverse:
            rev = (rel.dst_type, REVERSE_PREFIX + rel.relation, rel.src_type)
            data[rev] = (d, s)
            if w is not None:
                weights[rev] = w
    g = dgl.heterograph(data, num_nodes_dict={t: len(ids) for t, ids in typed_ids.items()},
                        idtype=torch.int64)
    for canonical, w in weights.items():
        g.edges[canonical].data["weight"] = w
    out_meta: dict[str, Any] = dict(meta or {})
    labelled = []
    for ntype, table in tables.items():
        if table is None:
            continue
        frame = g.nodes[ntype].data
        if table.feat is not None:
            frame["feat"], _ = check_finite(table.feat, on_nan=on_nan, where=table.where,
                                            ids=table.ids)
        if table.label is not None:
            frame["label"] = table.label
            labelled.append(ntype)
        for mask, values in table.masks.items():
            frame[mask] = values
    if target is None and len(labelled) == 1:
        target = labelled[0]
    if target is not None:
        if target not in tables:
            raise DataError(f"target node type {target!r} is not a node type of the graph; "
                            f"node types: {', '.join(tables)}")
        out_meta["target"] = target
        table = tables[target]
        if table is not None and table.classes is not None and "classes" not in out_meta:
            out_meta["classes"] = table.classes
    total = g.num_nodes()
    return GraphData(graph=g, ids=NodeIds.identity(total), name=name, meta=out_meta,
                     typed_ids=typed_ids)


# ---------------------------------------------------------------------- inputs
def _relations(edges: EdgeInput) -> list[RelationEdges]:
    if isinstance(edges, Mapping):
        out = []
        for key, value in edges.items():
            if not (isinstance(key, tuple) and len(key) == 3):
                raise DataError(f"edges: key {key!r} must be (src_type, relation, dst_type)")
            if not (isinstance(value, tuple) and len(value) in (2, 3)):
                raise DataError(f"edges[{key!r}]: give (src, dst) or (src, dst, weight)")
            what = f"edges[{key!r}]"
            src, dst = column(value[0], f"{what} src"), column(value[1], f"{what} dst")
            weight = column(value[2], f"{what} weight") if len(value) == 3 else None
            for n, part in (("dst", dst), ("weight", weight)):
                if part is not None and len(part) != len(src):
                    raise DataError(f"{what}: {n} has {len(part)} values but src has "
                                    f"{len(src)}; one per edge")
            out.append(RelationEdges(*(str(k) for k in key), src=src, dst=dst, weight=weight,
                                     source=what))
        edges = out
    relations = list(edges)
    if not relations:
        raise DataError("a typed graph needs at least one relation")
    return relations


def _node_table(ntype: str, value: NodeInput) -> NodeTable | None:
    if value is None or isinstance(value, NodeTable):
        return value
    source = f"node table of type {ntype!r}"
    table = as_table(value, source)
    features = ["feat"] if "feat" in table.column_names else []
    return node_table(table, where=lambda r: f"{source}, row {r}", source=source,
                      feature_columns=features)


def _check_types(relations: list[RelationEdges], tables: Mapping[str, NodeTable | None]
                 ) -> None:
    for rel in relations:
        for end, ntype in (("source", rel.src_type), ("target", rel.dst_type)):
            if ntype not in tables:
                raise DataError(f"{rel.source}: relation {rel.relation!r} names the {end} node "
                                f"type {ntype!r}, which is not a node type"
                                f"{did_you_mean(ntype, tables)}; node types: "
                                f"{', '.join(tables)} (declare it, or fix the type)")


def _check_unique(relations: list[RelationEdges], reverse: bool) -> None:
    seen: dict[Canonical, str] = {}
    names = [(rel.canonical, rel.source) for rel in relations]
    if reverse:
        names += [((r.dst_type, REVERSE_PREFIX + r.relation, r.src_type),
                   f"{r.source} (its reverse)") for r in relations]
    for canonical, source in names:
        if canonical in seen:
            raise DataError(f"{source}: the relation {canonical} is also given by "
                            f"{seen[canonical]}; each (source type, relation, target type) "
                            f"must be given once (rename one relation or merge the tables)")
        seen[canonical] = source


# ---------------------------------------------------------------------- ids per type
def _index(relations: list[RelationEdges], tables: Mapping[str, NodeTable | None]
           ) -> tuple[list[tuple[np.ndarray, np.ndarray]], dict[str, NodeIds]]:
    """Internal ids of every endpoint, per type: one factorisation per node type over its
    id column (if any) and every endpoint column of that type."""
    ends: dict[str, list[tuple[int, int]]] = {t: [] for t in tables}  # type -> (rel, 0|1)
    for i, rel in enumerate(relations):
        check_no_nulls(rel.src, "source node id", rel.row)
        check_no_nulls(rel.dst, "target node id", rel.row)
        ends[rel.src_type].append((i, 0))
        ends[rel.dst_type].append((i, 1))
    out: list[list[np.ndarray | None]] = [[None, None] for _ in relations]
    typed_ids: dict[str, NodeIds] = {}
    for ntype, table in tables.items():  # over node types
        cols = [(relations[i].src if e == 0 else relations[i].dst) for i, e in ends[ntype]]
        if table is not None:
            normal = normalise_ids(table.ids, *cols)
            codes, _ = factorize(normal)
            n = len(table.ids)  # unique ids: codes 0..n-1, in table order
            for (i, e), c, col in zip(ends[ntype], codes[1:], normal[1:]):
                _check_known(relations[i], e, c, n, col, table)
                out[i][e] = c
            typed_ids[ntype] = NodeIds(n, table.ids)
        elif cols:
            normal = normalise_ids(*cols)
            codes, uniques = factorize(normal)
            for (i, e), c in zip(ends[ntype], codes):
                out[i][e] = c
            typed_ids[ntype] = NodeIds(len(uniques), uniques)
        else:
            raise DataError(f"node type {ntype!r} has neither a node table nor edges; give "
                            f"its node table or remove it")
    return [(s, d) for s, d in out], typed_ids  # type: ignore[misc]


def _check_known(rel: RelationEdges, end: int, codes: np.ndarray, n: int, col: Column,
                 table: NodeTable) -> None:
    unknown = np.flatnonzero(codes >= n)
    if not len(unknown):
        return
    row = int(unknown[0])
    value = col.slice(row, 1)
    value = (value.combine_chunks() if isinstance(value, pa.ChunkedArray) else value)[0]
    which = ("source", rel.src_type) if end == 0 else ("target", rel.dst_type)
    raise DataError(f"{rel.row(row)}: edge {which[0]} {value.as_py()!r} is not in the node "
                    f"table of type {which[1]!r} ({table.source}); add it there or remove "
                    f"the edge")


def _weights(rel: RelationEdges) -> torch.Tensor:
    return edge_weights(EdgeColumns(src=rel.src, dst=rel.dst, weight=rel.weight, where=rel.row,
                               source=rel.source))


def _homogeneous(rel: RelationEdges, table: NodeTable | None, name: str,
                 meta: Mapping[str, Any] | None, on_nan: OnNan) -> GraphData:
    """One node type, one relation: today's homogeneous graph, built by the same path."""
    built = assemble(EdgeColumns(src=rel.src, dst=rel.dst, weight=rel.weight, where=rel.row,
                                 source=rel.source), table, directed=True, name=name,
                     on_nan=on_nan)
    built.data.meta.update(meta or {})
    return built.data


__all__ = ["RelationEdges", "typed_graph", "REVERSE_PREFIX"]
