"""Assemble a collection of graphs (arrays from any format) into a checked :class:`GraphData`.

Every collection loader (TU text files, the graph-kernel ``.mat`` / ``.npz`` files...) reads
its arrays and hands them to :func:`build_collection`, which checks what all formats share (the
graph index sorted, no empty graph, no edge between two graphs, one label per graph) and
builds the block-diagonal DGLGraph, the features and the graph table.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.graphs.collection import (GraphCollection, check_edges_within, encode_labels,
                                         pointer_from_index)
from graphflow.graphs.features import degree_one_hot, label_codes, one_hot
from graphflow.options import option

NodeFeatures = Literal["auto", "attributes", "labels", "both", "degree", "none"]
"""Where node features come from: ``auto`` = the attributes when the set has them, else the
node labels one-hot, else the degrees one-hot (the GIN paper's choices)."""


def features_option(attributes: str = '"attributes"',
                    labels: str = '"labels" (node labels one-hot)') -> Any:
    """The ``features`` option of a collection loader (:data:`NodeFeatures`), its text naming
    where that loader finds ``attributes`` and ``labels``."""
    return option("auto", f'Node features: {attributes}, {labels}, "both", "degree" (one-hot '
                          f'degree), "none", or "auto" (attributes, else labels, else degree).')


def max_degree_option() -> Any:
    """The ``max_degree`` option of a collection loader (``features = "degree"``)."""
    return option(None, 'Degrees above this share the last one-hot column (features = "degree").')


@dataclass
class Sources:
    """Where each array came from, for messages (file names, or ``file, variable``)."""

    edges: str
    graph_index: str
    graph_labels: str
    first_id: int = 0  # what the files call node / graph 0 (1 for TU files)
    edge_line: int = 1  # the line of edge 0 in ``edges``


def build_collection(*, name: str, num_nodes: int, src: np.ndarray, dst: np.ndarray,
                     graph_of_node: np.ndarray, num_graphs: int, sources: Sources,
                     graph_labels: np.ndarray | None = None,
                     graph_targets: np.ndarray | None = None,
                     node_labels: np.ndarray | None = None,
                     node_attributes: np.ndarray | None = None,
                     edge_weight: np.ndarray | None = None,
                     edge_features: np.ndarray | None = None,
                     features: NodeFeatures = "auto", max_degree: int | None = None,
                     graph_ids: pa.Array | None = None, node_ids: pa.Array | None = None,
                     meta: dict | None = None) -> GraphData:
    """A checked collection (0-based ``src``, ``dst``, ``graph_of_node``; see the module doc).

    :param graph_labels: (G,) class labels of any values (mapped to ``0..C-1``, the values kept
        as ``classes``), or None.
    :param graph_targets: float (G,) or (G, T) regression / multi-task targets, NaN = missing
        (used instead of ``graph_labels`` when given).
    :param node_labels: (N,) node labels (any integers), kept as ``ndata["node_label"]`` and
        usable as one-hot features.
    :param node_attributes: float (N, F) node attributes.
    :param edge_features: float (E, D) edge feature vectors in ``src``/``dst`` order, kept as
        ``edata["edge_feat"]`` (what the graph tasks carry into batches, for ``gine``).
    """
    ptr = pointer_from_index(graph_of_node, num_graphs, where=sources.graph_index,
                             first_id=sources.first_id)
    if int(ptr[-1]) != num_nodes:
        raise DataError(f"{sources.graph_index} lists {int(ptr[-1])} nodes but the graph has "
                        f"{num_nodes}; the files disagree on the node count")
    check_edges_within(src, dst, ptr, where=sources.edges, first_id=sources.first_id,
                       line_of_edge=sources.edge_line)
    g = dgl.graph((torch.from_numpy(src.astype(np.int64)),
                   torch.from_numpy(dst.astype(np.int64))), num_nodes=num_nodes)
    if edge_weight is not None:
        g.edata["weight"] = torch.from_numpy(np.asarray(edge_weight, dtype=np.float32))
    if edge_features is not None:
        ef = torch.from_numpy(np.asarray(edge_features, dtype=np.float32)
                              .reshape(len(src), -1).copy())
        bad = (~torch.isfinite(ef)).any(1).nonzero()
        if bad.numel():
            i = int(bad[0, 0])
            edge = (f"the edge on {sources.edges} line {i + sources.edge_line}"
                    if sources.edge_line > 0 else
                    f"edge {int(src[i]) + sources.first_id} -> {int(dst[i]) + sources.first_id} "
                    f"of {sources.edges}")
            raise DataError(f"the features of {edge} are NaN or infinite")
        g.edata["edge_feat"] = ef
    codes, k = (None, 0)
    if node_labels is not None:
        codes, k = label_codes(node_labels, where=sources.graph_index)
        g.ndata["node_label"] = codes
    attrs = None
    if node_attributes is not None:
        attrs = torch.from_numpy(np.asarray(node_attributes, dtype=np.float32)
                                 .reshape(num_nodes, -1))
        if not torch.isfinite(attrs).all():
            row = int((~torch.isfinite(attrs)).any(1).nonzero()[0])
            raise DataError(f"node attributes of node {row + sources.first_id} are NaN or "
                            f"infinite")
    feat = _features(features, attrs, codes, k, g, max_degree)
    if feat is not None:
        g.ndata["feat"] = feat
    labels, classes = None, None
    if graph_targets is not None:
        t = np.asarray(graph_targets, dtype=np.float32)
        _check_count(t.shape[0], num_graphs, sources.graph_labels)
        labels = torch.from_numpy(t.reshape(num_graphs, -1).copy())
    elif graph_labels is not None:
        _check_count(len(graph_labels), num_graphs, sources.graph_labels)
        labels, classes = encode_labels(graph_labels, where=sources.graph_labels)
    if graph_ids is None:
        graph_ids = pa.array(np.arange(num_graphs, dtype=np.int64) + sources.first_id)
    graphs = GraphCollection(graph_ptr=torch.from_numpy(ptr), ids=graph_ids, labels=labels,
                             classes=classes)
    ids = NodeIds(num_nodes, node_ids) if node_ids is not None else NodeIds.identity(num_nodes)
    info = dict(meta or {})
    if classes is not None:
        info["graph_classes"] = classes
    return GraphData(graph=g, ids=ids, name=name, meta=info, graphs=graphs)


def _check_count(have: int, graphs: int, where: str) -> None:
    if have < graphs:
        raise DataError(f"{where} has {have} labels for {graphs} graphs: graph {have + 1} "
                        f"(and any after it) has no label")
    if have > graphs:
        raise DataError(f"{where} has {have} labels but there are {graphs} graphs; the files "
                        f"disagree on the graph count")


def _features(kind: NodeFeatures, attrs: torch.Tensor | None, codes: torch.Tensor | None,
              k: int, g: dgl.DGLGraph, max_degree: int | None) -> torch.Tensor | None:
    labels = one_hot(codes, k) if codes is not None else None
    if kind == "auto":
        kind = "attributes" if attrs is not None else "labels" if labels is not None \
            else "degree"
    if kind == "none":
        return None
    if kind == "degree":
        return degree_one_hot(g.in_degrees(), max_degree)
    if kind in ("attributes", "both") and attrs is None:
        raise DataError(f'features = "{kind}" but the collection has no node attributes; use '
                        f'"labels" or "degree"')
    if kind in ("labels", "both") and labels is None:
        raise DataError(f'features = "{kind}" but the collection has no node labels; use '
                        f'"attributes" or "degree"')
    if kind == "attributes":
        return attrs
    if kind == "labels":
        return labels
    return torch.cat([attrs, labels], dim=1)
