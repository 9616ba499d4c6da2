"""The ``networkx`` loader: GraphML, GML, adjacency lists and edge lists via networkx, or one of
networkx's built-in graphs (``karate_club``...)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import networkx as nx
import numpy as np
import pyarrow as pa
import scipy.sparse as sp
import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData, NodeIds
from graphflow.hetero.build import RelationEdges, typed_graph
from graphflow.io.nodes import NodeTable, OnNan, check_finite, node_table
from graphflow.options import option

READERS: dict[str, Callable[[str], nx.Graph]] = {
    "graphml": nx.read_graphml,
    "gml": nx.read_gml,
    "adjlist": nx.read_adjlist,
    "edgelist": lambda p: nx.read_edgelist(p, data=[("weight", float)]),
}
SUFFIXES = {".graphml": "graphml", ".xml": "graphml", ".gml": "gml", ".adjlist": "adjlist",
            ".edgelist": "edgelist", ".edges": "edgelist", ".txt": "edgelist"}
BUILTINS: dict[str, Callable[[], nx.Graph]] = {
    "karate_club": nx.karate_club_graph,
    "davis_southern_women": nx.davis_southern_women_graph,
    "florentine_families": nx.florentine_families_graph,
    "les_miserables": nx.les_miserables_graph,
}
LABEL_ATTRIBUTES = ("label", "club", "class", "community", "bipartite")
"""Node attributes taken as the label, first found first (karate's ``club``...)."""
FEATURE_ATTRIBUTES = ("feat", "features", "x")


@dataclass
class NetworkxOptions:
    path: Path | None = option(None, "A graph file: .graphml, .gml, .adjlist, .edgelist.")
    format: Literal["auto", "graphml", "gml", "adjlist", "edgelist"] = option(
        "auto", "File format; auto: from the suffix.")
    graph: str = option("", f"A networkx built-in instead of a file: {', '.join(BUILTINS)}.")
    label: str = option("auto", "Node attribute holding the label; auto: the first of "
                                f"{', '.join(LABEL_ATTRIBUTES)} present on every node; "
                                f'"" for none.')
    features: list[str] = option(
        [], "Numeric node attributes to use as features (one column each); default: a list "
            f"attribute named {' / '.join(FEATURE_ATTRIBUTES)} if every node has one.")
    weight: str = option("weight", "Edge attribute holding the weight, used when every edge "
                                   'has it ("" for none).')
    on_nan: OnNan = option("error", 'NaN/inf features: "error" or "zero" (replace by 0).')
    node_type: str = option("", 'Node attribute naming each node\'s type (e.g. "type"): the '
                                "graph loads as a typed graph; \"\" for none.")
    edge_type: str = option("", 'Edge attribute naming each edge\'s relation (e.g. "type"): '
                                'the graph loads as a typed graph; "" for none.')
    reverse: bool = option(False, "Typed graphs: add rev-<relation> for every relation.")

    def __post_init__(self) -> None:
        if (self.path is None) == (not self.graph):
            raise ValueError(f'give either path = "file.graphml" or graph = "<name>" '
                             f"({', '.join(BUILTINS)})")
        if self.graph and self.graph not in BUILTINS:
            raise ValueError(f"graph = {self.graph!r}: unknown; choose one of "
                             f"{', '.join(BUILTINS)}")
        if self.path is not None and self.format == "auto" \
                and self.path.suffix.lower() not in SUFFIXES:
            raise ValueError(f"cannot tell the format of {self.path.name} from its suffix; set "
                             f"format = {' | '.join(READERS)}")


class NetworkxLoader(Loader):
    """Graphs that networkx reads, with their node ids and known attributes.

    Undirected graphs get both edge directions; directed ones keep theirs; a multigraph's
    parallel edges are merged (weights summed). Node ids stay as networkx has them (integers
    or strings). A label attribute (``club`` for karate) becomes ``label`` with its values'
    names in ``meta["classes"]``; a list attribute ``feat`` (or the attributes listed in
    ``features``) becomes ``feat``.
    """

    name = "networkx"
    summary = "GraphML / GML / adjlist / edgelist files via networkx, or karate_club & co"
    Options = NetworkxOptions

    def check(self) -> None:
        if self.options.path is not None and not self.options.path.is_file():
            raise DataError(f"graph file not found: {self.options.path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        graph, source = self._read()
        if graph.number_of_nodes() == 0 or graph.number_of_edges() == 0:
            raise DataError(f"{source} has no edges; the graph would be empty")
        if o.node_type or o.edge_type:
            return self._typed(graph, source)
        nodes = list(graph.nodes)  # networkx holds nodes as Python objects: one pass
        ids = _ids(nodes)
        weight = o.weight if o.weight and _all_have(graph.edges(data=True), o.weight) else None
        try:
            adj = sp.coo_matrix(nx.to_scipy_sparse_array(graph, nodelist=nodes, weight=weight,
                                                         dtype=np.float32))
        except (ValueError, TypeError) as exc:  # weights given as text, lists...
            raise DataError(f"{source}: edge attribute {weight!r} must hold numbers "
                            f"({first_line(exc)}); set weight = \"\" to ignore it") from None
        g = dgl.graph((torch.from_numpy(adj.row.astype(np.int64)),
                       torch.from_numpy(adj.col.astype(np.int64))), num_nodes=len(nodes))
        if weight is not None:
            g.edata["weight"] = torch.from_numpy(adj.data.astype(np.float32))
        meta: dict[str, Any] = {"source": source}
        columns = self._node_columns(graph, nodes)
        if columns:
            table = node_table(pa.table({"id": ids, **columns}), where=lambda r: f"{source}, "
                               f"node {nodes[r]!r}", source=source,
                               feature_columns=[c for c in columns if c != "label"] or None)
            if table.label is not None:
                g.ndata["label"] = table.label
                if table.classes is not None:
                    meta["classes"] = table.classes
            if table.feat is not None:
                g.ndata["feat"], zeroed = check_finite(table.feat, on_nan=o.on_nan,
                                                       where=table.where, ids=ids)
                if zeroed:
                    ctx.info(f'on_nan = "zero": set {zeroed} NaN/inf feature values to 0')
        name = o.graph or (o.path.stem if o.path else "graph")
        return GraphData(graph=g, ids=NodeIds(len(ids), ids), name=name, meta=meta)

    def _read(self) -> tuple[nx.Graph, str]:
        o = self.options
        if o.graph:
            return BUILTINS[o.graph](), f"networkx {o.graph}"
        assert o.path is not None
        if not o.path.is_file():
            raise DataError(f"graph file not found: {o.path}")
        fmt = SUFFIXES[o.path.suffix.lower()] if o.format == "auto" else o.format
        try:
            return READERS[fmt](str(o.path)), str(o.path)
        except Exception as exc:  # networkx's parsers fail on bad files in many ways
            raise DataError(f"{o.path}: cannot read it as {fmt} ({first_line(exc)})") from None

    def _typed(self, graph: nx.Graph, source: str) -> GraphData:
        """Nodes grouped by their ``node_type`` attribute, edges by their ``edge_type``
        attribute (parallel edges of a multigraph kept); an undirected edge gives both
        directions. One type and one relation give the homogeneous graph."""
        o = self.options
        nodes = list(graph.nodes)  # networkx holds Python objects: passes over them
        types = _attribute(graph.nodes(data=True), o.node_type, "node", source, "node")
        by_type: dict[str, list[Any]] = {}
        for n, t in zip(nodes, types):
            by_type.setdefault(t, []).append(n)
        type_of = dict(zip(nodes, types))
        tables = {t: self._type_table(graph, members, t, source)
                  for t, members in by_type.items()}
        for name in o.features:
            if not any(all(name in graph.nodes[n] for n in m) for m in by_type.values()):
                raise DataError(f"{source}: no node type has the feature attribute {name!r} on "
                                f"all its nodes; node types: {', '.join(by_type)}")
        as_id = {t: (lambda n: n) if pa.types.is_integer(tables[t].ids.type) else str
                 for t in tables}
        edges = list(graph.edges(data=True))
        rels = _attribute(edges, o.edge_type, "edge", source, "edge")
        groups: dict[tuple[str, str, str], list[tuple[Any, Any, dict]]] = {}
        for (u, v, d), r in zip(edges, rels):
            groups.setdefault((type_of[u], r, type_of[v]), []).append((u, v, d))
            if not graph.is_directed() and u != v:
                groups.setdefault((type_of[v], r, type_of[u]), []).append((v, u, d))
        relations = []
        for (st, r, dt), members in groups.items():  # over relations
            w = None
            if o.weight and all(o.weight in d for _, _, d in members):
                w = _column([d[o.weight] for _, _, d in members], o.weight)
            relations.append(RelationEdges(
                st, r, dt, pa.array([as_id[st](u) for u, _, _ in members]),
                pa.array([as_id[dt](v) for _, v, _ in members]), w,
                source=f"{source}, relation {r!r}"))
        name = o.graph or (o.path.stem if o.path else "graph")
        return typed_graph(tables, relations, reverse=o.reverse, name=name,
                           meta={"source": source}, on_nan=o.on_nan)

    def _type_table(self, graph: nx.Graph, members: list[Any], ntype: str,
                    source: str) -> NodeTable:
        """The node table of one type: ids, and the label and features its nodes all have."""
        o = self.options
        attrs = graph.nodes
        data = [attrs[n] for n in members]
        columns: dict[str, pa.Array] = {"id": _ids(members)}
        label = o.label
        if label == "auto":
            label = next((a for a in LABEL_ATTRIBUTES if all(a in d for d in data)), "")
        if label and all(label in d for d in data):
            columns["label"] = _column([d[label] for d in data], label)
        names = list(o.features) or [a for a in FEATURE_ATTRIBUTES
                                     if all(a in d for d in data)][:1]
        names = [a for a in names if all(a in d for d in data)]
        for name in names:
            columns[f"feature:{name}"] = _column([d[name] for d in data], name)
        return node_table(pa.table(columns), where=lambda r: f"{source}, node "
                          f"{members[r]!r} ({ntype})", source=f"{source} ({ntype} nodes)",
                          feature_columns=[c for c in columns if c.startswith("feature:")])

    def _node_columns(self, graph: nx.Graph, nodes: list[Any]) -> dict[str, pa.Array]:
        o = self.options
        attrs = graph.nodes
        columns: dict[str, pa.Array] = {}
        label = o.label
        if label == "auto":
            label = next((a for a in LABEL_ATTRIBUTES if _all_have(attrs(data=True), a)), "")
        elif label and not _all_have(attrs(data=True), label):
            raise DataError(f"not every node has the label attribute {label!r}")
        if label:
            columns["label"] = _column([attrs[n][label] for n in nodes], label)
        names = list(o.features)
        if not names:
            names = [a for a in FEATURE_ATTRIBUTES if _all_have(attrs(data=True), a)][:1]
        for name in names:
            if not _all_have(attrs(data=True), name):
                raise DataError(f"not every node has the feature attribute {name!r}")
            columns[f"feature:{name}"] = _column([attrs[n][name] for n in nodes], name)
        return columns


def _attribute(items: list[Any], key: str, default: str, source: str, what: str) -> list[str]:
    """``str(item[key])`` for each node or edge (``default`` without ``key``)."""
    if not key:
        return [default] * len(items)
    values = []
    for item in items:  # networkx attribute dicts: one pass
        if key not in item[-1]:
            shown = item[0] if what == "node" else item[:2]
            raise DataError(f"{source}: {what} {shown!r} has no {key!r} attribute; give every "
                            f"{what} one, or set {what}_type = \"\"")
        values.append(str(item[-1][key]))
    return values


def _all_have(items: Any, key: str) -> bool:
    return all(key in item[-1] for item in items)


def _ids(nodes: list[Any]) -> pa.Array:
    if all(isinstance(n, (int, np.integer)) and not isinstance(n, bool) for n in nodes):
        return pa.array(nodes, type=pa.int64())
    return pa.array([str(n) for n in nodes], type=pa.string())


def _column(values: list[Any], name: str) -> pa.Array:
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        raise DataError(f"node attribute {name!r} mixes types; it cannot be a column") from None
