"""The ``csv`` exporter: per-node artifacts or the graph as CSV files."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.io.atomic import atomic_path
from graphflow.io.delimited import delimiter_char
from graphflow.options import option
from graphflow_plugins.exporters.tables import artifact_table, graph_tables

EDGES_CSV = "edges.csv"
NODES_CSV = "nodes.csv"


@dataclass
class CsvExportOptions:
    what: What = option(doc="embeddings | predictions | logits | links | graph.")
    path: Path | None = option(None, 'Output file (default OUT_DIR/<what>.csv); for what = '
                                     '"graph", a folder of edges.csv + nodes.csv (default '
                                     "OUT_DIR/graph).")
    ids: bool = option(True, "Write the original node ids (false: internal ids 0..N-1).")
    delimiter: str = option("comma", '"comma", "tab", "space" or one character.')

    def __post_init__(self) -> None:
        if delimiter_char(self.delimiter) is None:
            raise ValueError('delimiter = "auto" only makes sense when reading; use "comma", '
                             '"tab", "space" or one character')


class CsvExporter(Exporter):
    """CSV with a header row, written by pyarrow's CSV writer, atomically.

    Vectors (embeddings, logits) become one column per dimension: ``id, embedding_0, ...``
    (``logits_0``...). Predictions: ``id, prediction, class, probability``, multi-label
    lists joined with spaces (``"0 3 5"``). The graph: a folder with ``edges.csv`` (``src,
    dst, weight``) and ``nodes.csv`` (``id, feat_0, ..., label``, masks), which the
    ``edgelist`` loader reads back (``header = true``, ``source = "src"``, ``target = "dst"``,
    ``weight_column = "weight"``, ``nodes = ".../nodes.csv"``).
    """

    name = "csv"
    summary = "CSV with header: ids + one column per dimension, predictions, or the graph"
    writes = ("embeddings", "predictions", "logits", "graph", "links")
    suffix = ".csv"
    graph_files = (EDGES_CSV, NODES_CSV)
    Options = CsvExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        path = self.target(ctx)
        if o.what == "graph":
            edges, nodes = graph_tables(ctx.graph(), o.ids)
            return [self._write(path / EDGES_CSV, flat(edges)),
                    self._write(path / NODES_CSV, flat(nodes))]
        return [self._write(path, flat(artifact_table(ctx, o.what, o.ids)))]

    def _write(self, path: Path, table: pa.Table) -> Path:
        options = pacsv.WriteOptions(delimiter=delimiter_char(self.options.delimiter))
        with atomic_path(path) as tmp:
            pacsv.write_csv(table, tmp, options)
        return path


def flat(table: pa.Table) -> pa.Table:
    """Fixed-size list columns -> one column per element; other lists -> space-joined text."""
    columns: dict[str, pa.Array] = {}
    for name in table.column_names:
        column = table.column(name).combine_chunks()
        if pa.types.is_fixed_size_list(column.type):
            width = column.type.list_size
            matrix = pc.list_flatten(column).to_numpy(zero_copy_only=False).reshape(-1, width)
            for i in range(width):  # over dimensions, not rows
                columns[f"{name}_{i}"] = pa.array(matrix[:, i])
        elif pa.types.is_list(column.type):
            columns[name] = pc.binary_join(column.cast(pa.list_(pa.string())), " ")
        else:
            columns[name] = column
    return pa.table(columns)
