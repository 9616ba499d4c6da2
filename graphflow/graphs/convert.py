"""A collection from networkx graphs: ``from_networkx([g1, g2, ...], label="label")``.

Each graph's nodes are renumbered ``0..n-1`` in its own node order and stacked; the graph
attribute ``label`` (``g.graph[label]``) becomes the graph's class (or float target with
``targets = True``). Conversion walks the graphs once at load time; training never does.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.graphs.build import NodeFeatures, Sources, build_collection


def from_networkx(graphs: Sequence[Any], *, label: str = "label", targets: bool = False,
                  node_label: str | None = None, feat: str | None = None,
                  edge_feat: str | None = None, features: NodeFeatures = "auto", graph_ids: Sequence[Any] | None = None,
                  name: str = "networkx", where: str = "networkx graphs") -> GraphData:
    """A checked collection (see the module docstring).

    :param node_label: node attribute holding a node label (used one-hot), or None.
    :param feat: node attribute holding a number or a list of numbers, or None.
    :param edge_feat: edge attribute holding a number or a list of numbers (the edge
        features, ``edata["edge_feat"]``; both directions of an undirected edge get it), or
        None.
    :param where: how messages name the input (a folder, a file).
    """
    if not graphs:
        raise DataError(f"{where}: no graph")
    sizes, srcs, dsts, labels, nl, fe, ef = [], [], [], [], [], [], []
    offset = 0
    for i, g in enumerate(graphs):
        gid = graph_ids[i] if graph_ids is not None else i
        if label not in g.graph:
            raise DataError(f"{where}: graph {gid} has no graph attribute {label!r} (its "
                            f"attributes: {', '.join(map(str, g.graph)) or 'none'})")
        labels.append(g.graph[label])
        index = {v: k for k, v in enumerate(g.nodes)}
        edges = np.array([(index[u], index[v]) for u, v in g.edges()], dtype=np.int64) \
            .reshape(-1, 2)
        if edge_feat is not None:
            rows = [np.atleast_1d(np.asarray(_edge_value(d, edge_feat, gid, u, v, where),
                                             dtype=np.float32)) for u, v, d in g.edges(data=True)]
            ef.extend(rows if g.is_directed() else rows + rows)
        if not g.is_directed():  # both directions, as the other loaders store them
            edges = np.concatenate([edges, edges[:, ::-1]])
        srcs.append(edges[:, 0] + offset)
        dsts.append(edges[:, 1] + offset)
        sizes.append(g.number_of_nodes())
        offset += g.number_of_nodes()
        data = list(g.nodes(data=True))
        if node_label is not None:
            nl.extend(_node_value(d, node_label, gid, v, where) for v, d in data)
        if feat is not None:
            fe.extend(np.atleast_1d(np.asarray(_node_value(d, feat, gid, v, where),
                                               dtype=np.float32)) for v, d in data)
    y = np.asarray(labels)
    return build_collection(
        name=name, num_nodes=offset, src=np.concatenate(srcs), dst=np.concatenate(dsts),
        graph_of_node=np.repeat(np.arange(len(graphs)), sizes), num_graphs=len(graphs),
        sources=Sources(edges=where, graph_index=where, graph_labels=where, edge_line=0),
        graph_labels=None if targets else y, graph_targets=y.astype(np.float32) if targets
        else None, node_labels=np.asarray(nl) if node_label is not None else None,
        node_attributes=np.stack(fe) if fe else None,
        edge_features=_stack(ef, "edge attribute " + repr(edge_feat), where) if ef else None,
        features=features,
        graph_ids=pa.array(list(graph_ids)) if graph_ids is not None else None)


def _node_value(data: dict[str, Any], key: str, gid: Any, node: Any, where: str) -> Any:
    if key not in data:
        raise DataError(f"{where}: node {node!r} of graph {gid} has no attribute {key!r}")
    return data[key]


def _edge_value(data: dict[str, Any], key: str, gid: Any, u: Any, v: Any, where: str) -> Any:
    if key not in data:
        raise DataError(f"{where}: edge {u!r} -> {v!r} of graph {gid} has no attribute {key!r}")
    return data[key]


def _stack(rows: list[np.ndarray], what: str, where: str) -> np.ndarray:
    """(E, D) from one row per edge; rows of different lengths fail naming the widths."""
    widths = {r.shape[0] for r in rows}
    if len(widths) > 1:
        raise DataError(f"{where}: the {what} has {len(widths)} different lengths "
                        f"({', '.join(map(str, sorted(widths)))}); every edge needs the same")
    return np.stack(rows)
