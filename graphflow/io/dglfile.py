"""Graphs in DGL's binary format (``dgl.save_graphs``), with graphflow's ids and metadata.

DGL files hold tensors only, so the original node ids and ``GraphData.meta`` ride along as
graph labels (``save_graphs(..., labels=...)``), which DGL stores next to the graph:

======================  ============================================================
``graphflow_ids``        int64 (N,): integer node ids
``graphflow_id_offsets`` int64 (N+1,) and ``graphflow_id_bytes`` uint8: string node ids,
``graphflow_id_bytes``   as Arrow lays them out (UTF-8 bytes and offsets)
``graphflow_meta``       uint8: UTF-8 JSON of the name and metadata
======================  ============================================================

A file without them (any graph saved by DGL itself) loads with ids ``0..N-1``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData, NodeIds
from graphflow.io.atomic import atomic_path
from graphflow.io.split import MASKS

IDS_INT = "graphflow_ids"
IDS_OFFSETS = "graphflow_id_offsets"
IDS_BYTES = "graphflow_id_bytes"
META = "graphflow_meta"


def id_tensors(ids: NodeIds) -> dict[str, torch.Tensor]:
    """The labels that store ``ids`` (none for identity ids)."""
    if ids.is_identity:
        return {}
    values = ids.to_arrow()
    if pa.types.is_integer(values.type):
        return {IDS_INT: torch.from_numpy(values.to_numpy(zero_copy_only=False).astype(np.int64))}
    values = values.cast(pa.large_string())  # int64 offsets
    n = len(values)
    first = values.offset
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[first:first + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[start:end] if end > start else \
        np.zeros(0, dtype=np.uint8)
    return {IDS_OFFSETS: torch.from_numpy(offsets - start),
            IDS_BYTES: torch.from_numpy(data.copy())}


def ids_from_tensors(labels: dict[str, torch.Tensor], n: int) -> NodeIds:
    """Inverse of :func:`id_tensors`."""
    if IDS_INT in labels:
        return NodeIds(n, pa.array(labels[IDS_INT].numpy()))
    if IDS_OFFSETS in labels:
        offsets = labels[IDS_OFFSETS].numpy().astype(np.int64)
        data = labels[IDS_BYTES].numpy().astype(np.uint8)
        big = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets),
                                                           pa.py_buffer(data)])
        return NodeIds(n, big.cast(pa.string()))
    return NodeIds.identity(n)


def save_graph(path: Path, data: GraphData, extra: dict[str, torch.Tensor] | None = None) -> Path:
    """Write ``data`` (plus ``extra`` node data) atomically to ``path``."""
    g = data.graph
    if extra:
        g = g.clone()
        g.ndata.update(extra)
    labels = id_tensors(data.ids)
    meta = json.dumps({"name": data.name, "meta": data.meta}, default=str).encode()
    labels[META] = torch.frombuffer(bytearray(meta), dtype=torch.uint8)
    with atomic_path(path) as tmp:
        dgl.save_graphs(str(tmp), [g], labels)
    return path


def load_graph(path: Path, index: int = 0) -> GraphData:
    """Read graph ``index`` of a DGL file, with graphflow's ids and metadata when present."""
    if not path.is_file():
        raise DataError(f"DGL graph file not found: {path}")
    try:
        graphs, labels = dgl.load_graphs(str(path))
    except dgl.DGLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path} is not a graph file written by dgl.save_graphs "
                        f"({first.split(': ')[-1]})") from None
    if not 0 <= index < len(graphs):
        raise DataError(f"{path} holds {len(graphs)} graph(s); index = {index} is out of range")
    g = graphs[index]
    if not g.is_homogeneous:
        raise DataError(f"{path}: graph {index} is heterogeneous ({g.ntypes}); graphflow needs "
                        f"one node type and one edge type")
    info: dict[str, Any] = {}
    try:
        if META in labels and len(graphs) == 1:
            info = json.loads(bytes(labels[META].numpy().tobytes()).decode())
        ids = ids_from_tensors(labels, g.num_nodes()) if len(graphs) == 1 else \
            NodeIds.identity(g.num_nodes())
    except (ValueError, TypeError, pa.ArrowException) as exc:  # bad JSON, ids not matching
        raise DataError(f"{path}: the node ids or metadata graphflow stored with the graph are "
                        f"damaged ({first_line(exc)}); export the graph again") from None
    if not isinstance(info, dict):
        raise DataError(f"{path}: the metadata graphflow stored with the graph are damaged "
                        f"(not a JSON object); export the graph again")
    for mask in MASKS:
        if mask in g.ndata:
            g.ndata[mask] = g.ndata[mask].to(torch.bool)
    return GraphData(graph=g, ids=ids, name=info.get("name", path.stem),
                     meta=info.get("meta", {}))
