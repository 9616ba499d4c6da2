"""The ``edgelist`` loader: CSV / TSV / space-separated edge lists, with an optional node table."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.io.delimited import delimiter_char, read_delimited
from graphflow.io.nodes import OnNan, read_node_file
from graphflow.options import option


@dataclass
class EdgelistOptions:
    path: Path = option(doc="The edge list: one edge per line, source then target.")
    delimiter: str = option("auto", 'Field separator: "auto" (tab, comma or space, from the '
                                    'first line), "tab", "comma", "space" or one character.')
    header: bool = option(False, "Whether the first line names the columns.")
    comment: str = option("#", 'Lines starting with this are skipped ("" for none).')
    directed: bool = option(False, "False: each line is an undirected edge (both directions "
                                   "are added, a repeated pair is kept once).")
    source: int | str = option(0, "Source column: 0-based position or header name.")
    target: int | str = option(1, "Target column: 0-based position or header name.")
    weight_column: int | str | None = option(
        None, "Edge weight column (position or name); becomes edata['weight'].")
    nodes: Path | None = option(
        None, "Node table (.parquet or .csv/.tsv with a header): id, features, label, masks.")
    id_column: str = option("id", "Node table: the id column.")
    label_column: str = option("label", "Node table: the label column, if present.")
    feature_columns: list[str] | None = option(
        None, "Node table: feature columns; default: its list column (feat if several), "
              "else every numeric column besides id, label and masks.")
    on_nan: OnNan = option("error", 'NaN/inf features: "error" or "zero" (replace by 0).')

    def __post_init__(self) -> None:
        delimiter_char(self.delimiter)  # raises ValueError naming the choices


class EdgelistLoader(Loader):
    """Edge lists in delimited text, read with pyarrow's multithreaded CSV reader.

    Node ids may be integers or strings and are kept: exporters write them back. Without a
    node table, nodes are numbered in order of first appearance (integer ids that already are
    ``0..N-1`` keep their values); with ``nodes``, the table's row order is the node order
    and every edge must name a node of the table. String labels become class ids, their names
    kept in ``meta["classes"]``. A malformed line is reported with its line number.
    """

    name = "edgelist"
    summary = "CSV/TSV/space-separated edge list (+ Parquet/CSV node table), string or int ids"
    Options = EdgelistOptions

    def check(self) -> None:
        o = self.options
        if not o.path.is_file():
            raise DataError(f"edge list not found: {o.path}")
        if o.nodes is not None and not o.nodes.is_file():
            raise DataError(f"node table not found: {o.nodes}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        select: dict[str, int | str] = {"src": o.source, "dst": o.target}
        if o.weight_column is not None:
            select["weight"] = o.weight_column
        read = read_delimited(o.path, delimiter=delimiter_char(o.delimiter), header=o.header,
                              comment=o.comment, select=select,
                              types={"weight": pa.float32()}, ids=("src", "dst"),
                              what="edge list")
        nodes = None
        if o.nodes is not None:
            nodes = read_node_file(o.nodes, id_column=o.id_column, comment=o.comment)
        return GraphData.from_tables(
            read.table, None if nodes is None else nodes.table,
            weight="weight" if "weight" in select else None, id_column=o.id_column,
            label_column=o.label_column, feature_columns=o.feature_columns,
            classes=None if nodes is None else nodes.classes, directed=o.directed,
            name=o.path.stem, on_nan=o.on_nan, edge_rows=read.where,
            node_rows=None if nodes is None else nodes.where,
            edges_source=f"edge list {o.path}", nodes_source=str(o.nodes), info=ctx.info)
