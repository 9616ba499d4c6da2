"""``[load] type = "dgl_collection"``: many graphs saved by ``dgl.save_graphs`` with a label
tensor."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData
from graphflow.graphs.build import NodeFeatures, Sources, build_collection
from graphflow.io.dglfile import check_container, probe
from graphflow.options import option


@dataclass
class DglCollectionOptions:
    path: Path = option(doc="A file written by dgl.save_graphs(path, graphs, labels).")
    labels: str = option("labels", "The key of the (G,) or (G, T) label tensor in the file's "
                                   "labels dict (DGL's examples use \"glabel\").")
    feat: str = option("feat", 'Node data key of the features ("" for none).')
    node_labels: str = option("", 'Node data key of node labels to use one-hot ("" for none).')
    edge_feat: str = option("feat", 'Edge data key of the edge features, used when the graphs '
                                    'have it ("" for none): what gine reads.')
    features: NodeFeatures = option(
        "auto", 'Node features: "attributes" (the feat key), "labels" (node_labels one-hot), '
                '"both", "degree", "none", or "auto".')
    targets: bool = option(False, "Read the labels as float regression targets (NaN = "
                                  "missing) instead of classes.")


class DglCollectionLoader(Loader):
    """A collection saved with ``dgl.save_graphs(path, graphs, {"labels": y})`` (DGL's own
    way to store a graph classification set). The file is checked before DGL reads it (a
    damaged file is one line, never a crash: :mod:`graphflow.io.dglfile`). Graph ids are the
    positions ``0..G-1``; node ids ``0..N-1`` over the whole collection.
    """

    name = "dgl_collection"
    summary = "DGL binary file of many graphs + a label tensor (dgl.save_graphs)"
    Options = DglCollectionOptions

    def check(self) -> None:
        if not self.options.path.is_file():
            raise DataError(f"DGL file not found: {self.options.path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        self.check()
        check_container(o.path)
        probe(o.path)
        try:
            graphs, labels = dgl.load_graphs(str(o.path))
        except dgl.DGLError as exc:
            raise DataError(f"{o.path}: DGL could not read it ({first_line(exc)})") from None
        if o.labels not in labels:
            raise DataError(f"{o.path} has no label tensor {o.labels!r}; its labels: "
                            f"{', '.join(sorted(labels)) or '(none)'}")
        if not graphs:
            raise DataError(f"{o.path} holds no graph")
        sizes = np.array([g.num_nodes() for g in graphs])  # one int per graph, at load time
        empty = np.flatnonzero(sizes == 0)
        if empty.size:
            raise DataError(f"{o.path}: graph {int(empty[0])} has no nodes; every graph of a "
                            f"collection needs at least one node")
        whole = dgl.batch(graphs)
        src, dst = (t.numpy() for t in whole.edges())
        y = labels[o.labels]
        feat = whole.ndata.get(o.feat) if o.feat else None
        nl = whole.ndata.get(o.node_labels) if o.node_labels else None
        ef = whole.edata.get(o.edge_feat) if o.edge_feat else None
        return build_collection(
            name=o.path.stem, num_nodes=whole.num_nodes(), src=src, dst=dst,
            graph_of_node=np.repeat(np.arange(len(graphs)), sizes), num_graphs=len(graphs),
            sources=Sources(edges=str(o.path), graph_index=str(o.path),
                            graph_labels=f"{o.path}, {o.labels}", edge_line=0),
            graph_labels=None if o.targets else y.numpy().reshape(len(y), -1)[:, 0]
            if y.dim() == 1 or y.shape[1] == 1 else _multi(y, o.path),
            graph_targets=y.float().numpy() if o.targets else None,
            node_labels=None if nl is None else nl.numpy(),
            node_attributes=None if feat is None else feat.float().reshape(
                whole.num_nodes(), -1).numpy(),
            edge_features=None if ef is None else ef.float().reshape(
                whole.num_edges(), -1).numpy(),
            features=o.features, meta={"source": str(o.path)})


def _multi(y: torch.Tensor, path: Path) -> np.ndarray:
    raise DataError(f"{path}: the labels are {tuple(y.shape)}; several columns are "
                    f"targets: set targets = true")
