"""``[load] type = "networkx_collection"``: a folder of GraphML / GML files, one graph each, with
a graph attribute as its label."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData
from graphflow.graphs.build import NodeFeatures
from graphflow.graphs.convert import from_networkx
from graphflow.options import option

READERS = {".graphml": nx.read_graphml, ".gml": nx.read_gml}


@dataclass
class NetworkxCollectionOptions:
    path: Path = option(doc="A folder of .graphml or .gml files, one graph per file.")
    pattern: str = option("*.graphml", "Which files of the folder to read (a glob).")
    label: str = option("label", "The graph attribute holding each graph's label.")
    targets: bool = option(False, "Read the labels as float regression targets.")
    node_label: str = option("", 'Node attribute of node labels, used one-hot ("" for none).')
    feat: str = option("", 'Node attribute of numeric node features ("" for none).')
    edge_feat: str = option("", 'Edge attribute of numeric edge features, a number or a list '
                                '(edata["edge_feat"], read by gine; "" for none).')
    features: NodeFeatures = option(
        "auto", 'Node features: "attributes" (feat), "labels" (node_label one-hot), "both", '
                '"degree", "none", or "auto".')


class NetworkxCollectionLoader(Loader):
    """Graphs saved by networkx, one per file, in file-name order; the graph ids are the file
    names without their suffix. Undirected graphs get both directions of each edge.
    Programs that already hold networkx graphs can call
    :func:`graphflow.graphs.convert.from_networkx` directly."""

    name = "networkx_collection"
    summary = "Folder of GraphML / GML files, one graph each, graph attribute = label"
    Options = NetworkxCollectionOptions

    def check(self) -> None:
        if not self.options.path.is_dir():
            raise DataError(f"folder not found: {self.options.path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        self.check()
        files = sorted(o.path.glob(o.pattern))
        if not files:
            raise DataError(f"{o.path}: no file matches {o.pattern!r}")
        graphs = []
        for f in files:  # one file per graph: reading them is the loader's job
            reader = READERS.get(f.suffix.lower())
            if reader is None:
                raise DataError(f"{f}: unknown suffix; use .graphml or .gml")
            try:
                graphs.append(reader(f))
            except Exception as exc:  # networkx raises many kinds on malformed files
                raise DataError(f"{f} is not a readable {f.suffix} file "
                                f"({first_line(exc)})") from None
        return from_networkx(graphs, label=o.label, targets=o.targets,
                             node_label=o.node_label or None, feat=o.feat or None,
                             edge_feat=o.edge_feat or None, features=o.features, graph_ids=[f.stem for f in files],
                             name=o.path.name, where=str(o.path))
