"""The ``dgl`` loader: graphs saved with ``dgl.save_graphs`` (or by the ``dgl`` exporter)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.io.dglfile import load_graph
from graphflow.options import option


@dataclass
class DglOptions:
    path: Path = option(doc="A file written by dgl.save_graphs.")
    index: int = option(0, "Which graph of the file (files may hold several).")


class DglLoader(Loader):
    """A graph from DGL's binary format, with all its node and edge data.

    Files written by graphflow's ``dgl`` exporter also carry the original node ids and the
    metadata (class names...); other files get ids ``0..N-1``. Data keep DGL's names:
    ``feat``, ``label``, ``train_mask``... and ``weight`` on edges. A heterograph with several
    node types or relations (``dgl.heterograph``) loads as a typed graph, its data per type
    (docs/heterogeneous.md); its ids are ``0..N_t-1`` per type unless graphflow wrote the
    file.
    """

    name = "dgl"
    summary = ("Graph or heterograph saved with dgl.save_graphs (ids and metadata kept when "
               "graphflow wrote it)")
    Options = DglOptions

    def check(self) -> None:
        if not self.options.path.is_file():
            raise DataError(f"DGL graph file not found: {self.options.path}")

    def load(self, ctx: RunContext) -> GraphData:
        data = load_graph(self.options.path, self.options.index)
        if data.num_edges == 0:
            raise DataError(f"{self.options.path}: graph {self.options.index} has no edges")
        return data
