"""The ``dgl`` exporter: the graph, with all its data, in DGL's binary format."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.io.dglfile import save_graph
from graphflow.options import option
from graphflow_plugins.exporters.tables import node_artifact


@dataclass
class DglExportOptions:
    path: Path | None = option(None, "Output file (default OUT_DIR/<what>.bin).")
    what: What = option("graph", 'graph, or an artifact to store as node data of the graph '
                                 '(ndata["embeddings"], ["predictions"] or ["logits"]).')



class DglExporter(Exporter):
    """``dgl.save_graphs`` with the node and edge data, the original ids and the metadata.

    ``dgl.load_graphs`` reads it anywhere; graphflow's ``dgl`` loader also restores the ids
    and ``meta`` (class names...). With ``what`` = an artifact, the graph is written with that
    artifact added as node data under its name.
    """

    name = "dgl"
    summary = "DGL binary graph (dgl.save_graphs) with ids and metadata; readable by the dgl loader"
    writes = ("embeddings", "predictions", "logits", "graph")
    suffix = ".bin"
    Options = DglExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        path = self.target(ctx)
        extra = None if o.what == "graph" else {o.what: node_artifact(ctx, o.what)}
        return [save_graph(path, ctx.graph(), extra)]
