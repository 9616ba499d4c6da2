"""The ``parquet`` loader: an edge table and an optional node table in Parquet files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.io.nodes import OnNan, read_node_file
from graphflow.io.parquet import EDGES_FILE, NODES_FILE, read_parquet
from graphflow.options import option


@dataclass
class ParquetOptions:
    path: Path | None = option(
        None, f"A graph folder holding {EDGES_FILE} and, optionally, {NODES_FILE} (what the "
              f'parquet exporter writes for what = "graph"). Or give edges / nodes.')
    edges: Path | None = option(None, "The edge table.")
    nodes: Path | None = option(None, "The node table (id, features, label, masks).")
    src_column: str = option("src", "Edge table: source node id column.")
    dst_column: str = option("dst", "Edge table: target node id column.")
    weight_column: str = option(
        "weight", "Edge table: weight column; used when present (another name must exist).")
    directed: bool = option(True, "False: each row is an undirected edge (both directions are "
                                  "added, a repeated pair is kept once).")
    id_column: str = option("id", "Node table: the id column.")
    label_column: str = option("label", "Node table: the label column, if present.")
    feature_columns: list[str] | None = option(
        None, "Node table: feature columns; default: its list column (feat if several), "
              "else every numeric column besides id, label and masks.")
    on_nan: OnNan = option("error", 'NaN/inf features: "error" or "zero" (replace by 0).')

    def __post_init__(self) -> None:
        if (self.path is None) == (self.edges is None):
            raise ValueError('give either path = "graph folder" or edges = "edges.parquet"')

    def files(self) -> tuple[Path, Path | None]:
        """The edge table and the node table (None when there is none)."""
        if self.path is not None:
            nodes = self.path / NODES_FILE
            return self.path / EDGES_FILE, (nodes if nodes.exists() else None)
        return self.edges, self.nodes  # type: ignore[return-value]


class ParquetLoader(Loader):
    """Graphs stored as Parquet tables, read in batches through pyarrow.

    The edge table has source and target id columns (integers or strings) and optionally a
    weight column. The node table, when given, fixes the node order and carries features
    (one list column or several numeric columns), labels and masks; every edge must name a
    node of the table. ``path`` reads a folder written by the ``parquet`` exporter.
    """

    name = "parquet"
    summary = "Edge table + node table in Parquet (reads the parquet exporter's graph folder)"
    Options = ParquetOptions

    def check(self) -> None:
        o = self.options
        _check_folder(o.path)
        edges, nodes = o.files()
        if not edges.is_file():
            raise DataError(f"edge table not found: {edges}")
        if nodes is not None and not nodes.is_file():
            raise DataError(f"node table not found: {nodes}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        _check_folder(o.path)
        edges_path, nodes_path = o.files()
        select = {"src": o.src_column, "dst": o.dst_column, "weight": o.weight_column}
        optional = ("weight",) if o.weight_column == "weight" else ()
        read = read_parquet(edges_path, select=select, optional=optional, what="edge table")
        for role in ("src", "dst"):  # name the file: the builder only knows the columns
            t = read.table.column(role).type
            if not (pa.types.is_integer(t) or pa.types.is_string(t)
                    or pa.types.is_large_string(t) or pa.types.is_null(t)):
                raise DataError(f"edge table {edges_path}: {select[role]!r} holds {t}; node ids "
                                f"must be integers or strings")
        nodes = None
        if nodes_path is not None:
            nodes = read_node_file(nodes_path, id_column=o.id_column)
        name = o.path.name if o.path is not None else edges_path.stem
        return GraphData.from_tables(
            read.table, None if nodes is None else nodes.table,
            weight="weight" if "weight" in read.table.column_names else None,
            id_column=o.id_column, label_column=o.label_column,
            feature_columns=o.feature_columns, classes=None if nodes is None else nodes.classes,
            directed=o.directed, name=name, on_nan=o.on_nan, edge_rows=read.where,
            node_rows=None if nodes is None else nodes.where,
            edges_source=f"edge table {edges_path}", nodes_source=str(nodes_path),
            info=ctx.info)


def _check_folder(path: Path | None) -> None:
    """``path`` must be a graph folder; a file there is the commonest slip, so say what to do."""
    if path is None or path.is_dir():
        return
    if path.is_file():
        raise DataError(f"path = {path} is a file, but path takes a graph folder (holding "
                        f"{EDGES_FILE} and optionally {NODES_FILE}); for a single edge table "
                        f'write edges = "{path}" instead of path')
    raise DataError(f"graph folder not found: {path}")
