"""The ``tables`` loader: a typed graph from one node table per node type and one edge table per
relation (CSV, TSV or Parquet)."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.hetero.tables import EdgeTableSpec, NodeTableSpec, read_typed_tables
from graphflow.io.nodes import OnNan
from graphflow.options import option


@dataclass
class TablesOptions:
    nodes: list[NodeTableSpec] = option(
        doc="[[load.nodes]]: one per node type: type, path (optional), id, features, label, "
            "split.")
    edges: list[EdgeTableSpec] = option(
        doc="[[load.edges]]: one per relation: relation, src_type, dst_type, path, src, dst, "
            "weight, reverse.")
    reverse: bool = option(False, "Add rev-<relation> for every relation (an edge table's own "
                                  "reverse wins).")
    target: str = option("", "The node type tasks predict; default: the one type with labels.")
    name: str = option("", "The graph's name; default: the first edge table's folder name.")
    on_nan: OnNan = option("error", 'NaN/inf features: "error" or "zero" (replace by 0).')


class TablesLoader(Loader):
    """A typed graph from tables, one per node type (``[[load.nodes]]``) and one per relation
    (``[[load.edges]]``), each in CSV, TSV or Parquet (by suffix).

    Ids are strings or integers, unique within their type. A node type without a table has
    the ids its edges name and no data; with a table, its rows are the nodes (in order) and
    every edge endpoint of that type must be one of them. Features, labels (strings become
    class ids) and masks (bool columns, or a split column) follow the node-table conventions
    of the ``parquet`` loader. One node type with one relation gives the same homogeneous
    graph as the ``parquet`` and ``edgelist`` loaders.
    """

    name = "tables"
    summary = "Typed graph from per-type node tables and per-relation edge tables (CSV/Parquet)"
    Options = TablesOptions

    def check(self) -> None:
        o = self.options
        for spec in o.nodes:
            if spec.path is not None and not spec.path.is_file():
                raise DataError(f"node table of type {spec.type!r} not found: {spec.path}")
        for spec in o.edges:
            if not spec.path.is_file():
                raise DataError(f"edge table of relation {spec.relation!r} not found: "
                                f"{spec.path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        self.check()
        name = o.name or (o.edges[0].path.parent.name if o.edges else "graph") or "graph"
        return read_typed_tables(o.nodes, o.edges, reverse=o.reverse, target=o.target,
                                 name=name, on_nan=o.on_nan)
