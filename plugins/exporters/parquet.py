"""The ``parquet`` exporter: per-node artifacts or the whole graph as Parquet tables."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.io.parquet import EDGES_FILE, NODES_FILE, run_metadata, write_parquet
from graphflow.options import option
from graphflow_plugins.exporters.tables import artifact_table, graph_tables, run_info


@dataclass
class ParquetExportOptions:
    what: What = option(doc="embeddings | predictions | logits | links | graph.")
    path: Path | None = option(None, 'Output file (default OUT_DIR/<what>.parquet); for what = '
                                     '"graph", a folder of edges.parquet + nodes.parquet '
                                     "(default OUT_DIR/graph).")
    ids: bool = option(True, "Write the original node ids (false: internal ids 0..N-1).")
    row_group_size: int = option(1 << 20, "Rows per Parquet row group.")

    def __post_init__(self) -> None:
        if self.row_group_size < 1:
            raise ValueError(f"row_group_size = {self.row_group_size}: must be >= 1")


class ParquetExporter(Exporter):
    """Parquet files with the node ids and run metadata, written atomically in row groups.

    Embeddings and logits: ``id`` + a ``fixed_size_list<float32>`` column (``embedding`` /
    ``logits``). Predictions: ``id``, ``prediction``, ``class`` (names, when known) and
    ``probability`` (max softmax of the logits, when present); list columns for multi-label
    predictions. The graph: a folder with ``edges.parquet`` (``src``, ``dst`` as node ids,
    ``weight``...) and ``nodes.parquet`` (``id``, ``feat``, ``label``, masks), which the
    ``parquet`` loader reads back with ``path = "that folder"``.

    The schema metadata key ``graphflow`` holds JSON: pipeline name, config hash, seed,
    package versions, and the class names when known.
    """

    name = "parquet"
    summary = "Parquet: ids + vectors / predictions, or the graph (edges + nodes tables)"
    writes = ("embeddings", "predictions", "logits", "graph", "links")
    suffix = ".parquet"
    graph_files = (EDGES_FILE, NODES_FILE)
    Options = ParquetExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        path = self.target(ctx)
        metadata = run_metadata(run_info(ctx, o.what, o.ids))
        if o.what == "graph":
            edges, nodes = graph_tables(ctx.graph(), o.ids)
            return [write_parquet(path / EDGES_FILE, edges, metadata=metadata,
                                  row_group_size=o.row_group_size),
                    write_parquet(path / NODES_FILE, nodes, metadata=metadata,
                                  row_group_size=o.row_group_size)]
        table = artifact_table(ctx, o.what, o.ids)
        return [write_parquet(path, table, metadata=metadata, row_group_size=o.row_group_size)]
