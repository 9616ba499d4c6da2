"""Edge columns (+ an optional node table) -> :class:`~graphflow.graph.GraphData`.

Shared by the ``edgelist`` and ``parquet`` loaders (and anything else that reads tables):
id mapping, weights, undirected edges, node data, and the checks that make bad input fail
with a message naming the file and line (or row).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.io.ids import (Column, Where, as_tensor, check_no_nulls, encode_edges, index_edges,
                              normalise_ids)
from graphflow.io.nodes import NodeTable, OnNan, check_finite
from graphflow.io.edge_keys import first_occurrences, undirected_keys


@dataclass
class EdgeColumns:
    """Edges as read from a file: endpoint ids, optional weights, and how to name a row."""

    src: Column
    dst: Column
    weight: Column | None
    where: Where
    source: str


@dataclass
class Assembled:
    """The graph, and what the loader may want to tell the user."""

    data: GraphData
    zeroed: int = 0  # non-finite feature values set to zero (on_nan = "zero")
    dropped: int = 0  # repeated undirected pairs merged


def assemble(edges: EdgeColumns, nodes: NodeTable | None, *, directed: bool, name: str,
             on_nan: OnNan = "error", num_nodes: int | None = None) -> Assembled:
    """Build the graph: ids to ``0..N-1``, weights, both directions when undirected, node data.

    Without a node table, nodes are those the edges mention (see
    :func:`graphflow.io.ids.encode_edges`); with one, nodes are the table's rows in order and
    every edge endpoint must be among them. With ``num_nodes``, the nodes are ``0..N-1``
    (integer ids, checked to lie in range) and ``nodes``, if given, holds their data in order.

    :param directed: False: each row is an undirected edge; the graph holds both directions
        and a pair given twice (in either direction) is kept once, with its first weight.
    :raises DataError: no edges, empty ids, unknown ids, non-finite weights or features.
    """
    if len(edges.src) == 0:
        raise DataError(f"{edges.source} has no edges; the graph would be empty")
    check_no_nulls(edges.src, "source node id", edges.where)
    check_no_nulls(edges.dst, "target node id", edges.where)
    if num_nodes is not None:
        src, dst = in_range(edges, num_nodes)
        ids = NodeIds.identity(num_nodes)
    elif nodes is None:
        src_col, dst_col = normalise_ids(edges.src, edges.dst)
        src, dst, ids = encode_edges(src_col, dst_col)
    else:
        src_col, dst_col, node_ids = normalise_ids(edges.src, edges.dst, nodes.ids)
        src, dst = index_edges(src_col, dst_col, node_ids, where=edges.where,
                               table=nodes.source)
        ids = NodeIds(len(node_ids), node_ids)
    weight = _weights(edges) if edges.weight is not None else None
    s, d = as_tensor(src), as_tensor(dst)
    dropped = 0
    if not directed:
        before = len(s)
        s, d, weight = undirected(s, d, weight, len(ids))
        dropped = before - (len(s) + int((s == d).sum())) // 2
    g = dgl.graph((s, d), num_nodes=len(ids))
    if weight is not None:
        g.edata["weight"] = weight
    zeroed = 0
    meta: dict[str, object] = {"source": edges.source}
    if nodes is not None:
        if nodes.feat is not None:
            g.ndata["feat"], zeroed = check_finite(nodes.feat, on_nan=on_nan, where=nodes.where,
                                                   ids=nodes.ids)
        if nodes.label is not None:
            g.ndata["label"] = nodes.label
        if nodes.classes is not None:
            meta["classes"] = nodes.classes
        g.ndata.update(nodes.masks)
    return Assembled(GraphData(graph=g, ids=ids, name=name, meta=meta), zeroed, dropped)


def in_range(edges: EdgeColumns, num_nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """Integer endpoint ids checked to lie in ``[0, num_nodes)``: int64 (E,) arrays."""
    out = []
    for column, end in ((edges.src, "source"), (edges.dst, "target")):
        if isinstance(column, pa.ChunkedArray):
            column = column.combine_chunks()
        if not (pa.types.is_integer(column.type) or pa.types.is_null(column.type)):
            raise DataError(f"{edges.source}: {end} node ids are {column.type}; with num_nodes "
                            f"they must be integers 0..{num_nodes - 1}")
        ids = column.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        bad = np.flatnonzero((ids < 0) | (ids >= num_nodes))
        if len(bad):
            row = int(bad[0])
            raise DataError(f"{edges.where(row)}: {end} node id {int(ids[row])} is out of range "
                            f"for num_nodes = {num_nodes} (ids 0..{num_nodes - 1})")
        out.append(ids)
    return out[0], out[1]


def _weights(edges: EdgeColumns) -> torch.Tensor:
    column = edges.weight
    if not (pa.types.is_floating(column.type) or pa.types.is_integer(column.type)):
        raise DataError(f"{edges.source}: edge weights must be numbers, not {column.type}")
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    check_no_nulls(column, "edge weight", edges.where)
    w = column.cast(pa.float32()).to_numpy(zero_copy_only=False)
    bad = np.flatnonzero(~np.isfinite(w))
    if len(bad):
        raise DataError(f"{edges.where(int(bad[0]))}: edge weight {w[bad[0]]} is not a finite "
                        f"number")
    return as_tensor(w)


def undirected(src: torch.Tensor, dst: torch.Tensor, weight: torch.Tensor | None,
               num_nodes: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
    """Both directions of every pair, each pair once (first occurrence and its weight).

    Output order: the kept pairs as (lower id, higher id) in input order, then their reverses;
    a self-loop appears once.
    """
    keep = first_occurrences(undirected_keys(src, dst, num_nodes))  # in input order
    s, d = src[keep], dst[keep]
    lo, hi = torch.minimum(s, d), torch.maximum(s, d)
    loop = lo == hi
    s = torch.cat([lo, hi[~loop]])
    d = torch.cat([hi, lo[~loop]])
    w = None
    if weight is not None:
        w = weight[keep]
        w = torch.cat([w, w[~loop]])
    return s, d, w
