"""``[load] type = "table_collection"``: a collection of graphs as node, edge and graph tables
(Parquet or CSV)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData
from graphflow.graphs.build import NodeFeatures, Sources, build_collection
from graphflow.io.parquet import read_parquet
from graphflow.options import option


@dataclass
class TableCollectionOptions:
    nodes: Path = option(doc="Node table (.parquet or .csv): a graph column, a node id column.")
    edges: Path = option(doc="Edge table: a graph column, src and dst node ids.")
    graphs: Path = option(doc="Graph table: a graph id column and a label (or target) column.")
    graph: str = option("graph", "The graph id column (in all three tables).")
    id: str = option("id", "The node id column of the node table (unique within a graph).")
    src: str = option("src", "The edge table's source column.")
    dst: str = option("dst", "The edge table's destination column.")
    label: str = option("label", "The graph table's label column (classes).")
    targets: list[str] = option([], "Graph table columns read as float regression targets "
                                    "(NaN = missing) instead of label.")
    node_label: str = option("", 'Node table column of node labels ("" for none).')
    feature_columns: list[str] = option([], "Node table columns of numeric node attributes.")
    edge_feature_columns: list[str] = option(
        [], 'Edge table columns of numeric edge attributes (bond types, distances): the edge '
            'features (edata["edge_feat"]) that gine reads.')
    features: NodeFeatures = option(
        "auto", 'Node features: "attributes" (feature_columns), "labels" (node_label one-hot), '
                '"both", "degree", "none", or "auto".')


def read_table(path: Path, what: str) -> tuple[pa.Table, int]:
    """The table and the line (CSV, after its header) or row (Parquet, from 1) of its first
    row, for messages."""
    if not path.is_file():
        raise DataError(f"{what} table not found: {path}")
    if path.suffix.lower() == ".parquet":
        return read_parquet(path, what=f"{what} table").table, 1
    try:
        return pacsv.read_csv(path), 2
    except pa.ArrowInvalid as exc:
        raise DataError(f"{what} table {path}: cannot read it ({first_line(exc)})") from None


def _column(table: pa.Table, name: str, path: Path, what: str) -> pa.Array:
    if name not in table.column_names:
        raise DataError(f"{what} table {path}: no column {name!r}; columns: "
                        f"{', '.join(table.column_names)}")
    return table.column(name).combine_chunks()


def _numeric(table: pa.Table, name: str, path: Path, what: str) -> np.ndarray:
    """float32 (rows,) of a numeric column; any other type fails naming the column."""
    col = _column(table, name, path, what)
    if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
            or pa.types.is_boolean(col.type)):
        raise DataError(f"{what} table {path}: column {name!r} holds {col.type}, not numbers; "
                        f"list numeric columns only")
    return col.to_numpy(zero_copy_only=False).astype(np.float32)


def _keys(graph: pa.Array, node: pa.Array) -> pa.Array:
    """One string key per (graph, node) pair, so node ids may repeat across graphs."""
    return pc.binary_join_element_wise(pc.cast(graph, pa.string()), pc.cast(node, pa.string()),
                                       "\x1f")


def _positions(values: pa.Array, within: pa.Array, *, path: Path, what: str, line0: int,
               noun: str) -> np.ndarray:
    pos = pc.index_in(values, value_set=within)
    if pos.null_count:
        row = int(np.flatnonzero(pos.is_null().to_numpy(zero_copy_only=False))[0])
        table = "graph" if noun == "graph" else "node"
        shown = str(values[row].as_py()).replace("\x1f", ", ")
        raise DataError(f"{what} table {path} line {row + line0}: {noun} {shown} is not in "
                        f"the {table} table")
    return pos.to_numpy(zero_copy_only=False).astype(np.int64)


class TableCollectionLoader(Loader):
    """A collection as three tables (Parquet or CSV): nodes (``graph``, ``id``, optional node
    label and attribute columns), edges (``graph``, ``src``, ``dst``) and graphs (``graph``,
    ``label`` or target columns). Node ids need only be unique within their graph. Nodes are
    grouped by graph in the graph table's order (a stable sort: the table's own order within a
    graph); graph ids are the graph table's.
    """

    name = "table_collection"
    summary = "Graph collection as node, edge and graph tables (Parquet / CSV)"
    Options = TableCollectionOptions

    def check(self) -> None:
        o = self.options
        for path, what in ((o.nodes, "node"), (o.edges, "edge"), (o.graphs, "graph")):
            if not path.is_file():
                raise DataError(f"{what} table not found: {path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        graphs, g0 = read_table(o.graphs, "graph")
        nodes, n0 = read_table(o.nodes, "node")
        edges, e0 = read_table(o.edges, "edge")
        graph_ids = _column(graphs, o.graph, o.graphs, "graph")
        if pc.count_distinct(graph_ids).as_py() != len(graph_ids):
            raise DataError(f"graph table {o.graphs}: graph ids in {o.graph!r} repeat")
        node_graph = _positions(_column(nodes, o.graph, o.nodes, "node"), graph_ids,
                                path=o.nodes, what="node", line0=n0, noun="graph")
        order = np.argsort(node_graph, kind="stable")  # nodes grouped by graph
        nodes = nodes.take(pa.array(order))
        keys = _keys(_column(nodes, o.graph, o.nodes, "node"),
                     _column(nodes, o.id, o.nodes, "node"))
        if pc.count_distinct(keys).as_py() != len(keys):
            raise DataError(f"node table {o.nodes}: a node id repeats within a graph")
        eg = _column(edges, o.graph, o.edges, "edge")
        src = _positions(_keys(eg, _column(edges, o.src, o.edges, "edge")), keys, path=o.edges,
                         what="edge", line0=e0, noun="source (graph, node)")
        dst = _positions(_keys(eg, _column(edges, o.dst, o.edges, "edge")), keys, path=o.edges,
                         what="edge", line0=e0, noun="destination (graph, node)")
        labels = targets = None
        if o.targets:
            targets = np.column_stack([_column(graphs, c, o.graphs, "graph").to_numpy(
                zero_copy_only=False).astype(np.float32) for c in o.targets])
        else:
            labels = _column(graphs, o.label, o.graphs, "graph").to_numpy(zero_copy_only=False)
        attrs = None
        if o.feature_columns:
            attrs = np.column_stack([_numeric(nodes, c, o.nodes, "node")
                                     for c in o.feature_columns])
        edge_features = None
        if o.edge_feature_columns:
            edge_features = np.column_stack([_numeric(edges, c, o.edges, "edge")
                                             for c in o.edge_feature_columns])
        node_labels = None
        if o.node_label:
            node_labels = _column(nodes, o.node_label, o.nodes, "node").to_numpy(
                zero_copy_only=False)
        return build_collection(
            name=o.graphs.stem, num_nodes=nodes.num_rows, src=src, dst=dst,
            graph_of_node=node_graph[order], num_graphs=len(graph_ids),
            sources=Sources(edges=f"edge table {o.edges}", graph_index=f"node table {o.nodes}",
                            graph_labels=f"graph table {o.graphs}", edge_line=e0),
            graph_labels=labels, graph_targets=targets, node_labels=node_labels,
            node_attributes=attrs, edge_features=edge_features, features=o.features,
            graph_ids=graph_ids,
            node_ids=_column(nodes, o.id, o.nodes, "node"), meta={"source": str(o.graphs)})
