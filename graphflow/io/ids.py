"""Users' node ids (strings or integers) <-> internal ids ``0..N-1``, vectorised in pyarrow.

* :func:`encode_edges`: number the nodes an edge list mentions (one hash pass over sources
  then targets, see :mod:`graphflow.io.factorize`, so nodes are numbered in order of first
  appearance), or keep integer ids as they are when they already are ``0..N-1``.
* :func:`index_edges`: map an edge list onto the ids of a node table (the same pass over the
  table's ids then the edges), with a clear error for an edge naming a node the table lacks.
* :func:`check_unique`: a node table must not list an id twice.

Positions in messages go through a ``where(row) -> str`` callback, so that a text file can say
``file:line`` and a Parquet file ``file, row r``.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import torch

from graphflow.errors import DataError
from graphflow.graph import NodeIds
from graphflow.io.factorize import factorize

Column = pa.Array | pa.ChunkedArray
Where = Callable[[int], str]
"""Describes row ``i`` of a column for a message, e.g. ``"edges.tsv:12"``."""


def is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def normalise_ids(*columns: Column) -> list[Column]:
    """Give id columns one type: int64 when all are integers, else string.

    Integer ids that have to meet string ids (an edge list with numbers, a node table with
    text) are compared as their decimal text.
    """
    types = [c.type for c in columns]
    for t, c in zip(types, columns):
        if not (pa.types.is_integer(t) or is_string(t) or pa.types.is_null(t)):
            raise DataError(f"node ids must be integers or strings, not {t}")
    target = pa.int64() if all(pa.types.is_integer(t) or pa.types.is_null(t) for t in types) \
        else pa.string()
    return [c if c.type == target else c.cast(target) for c in columns]


def _chunks(column: Column) -> list[pa.Array]:
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def _to_numpy(column: Column) -> np.ndarray:
    parts = [c.to_numpy(zero_copy_only=False) for c in _chunks(column)]
    if not parts:
        return np.zeros(0, dtype=np.int64)
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def as_tensor(array: np.ndarray) -> torch.Tensor:
    """``torch.from_numpy``, copying first when the array is a read-only view of Arrow data."""
    if not array.flags.writeable:
        array = array.copy()
    return torch.from_numpy(np.ascontiguousarray(array))


def first_null(column: Column) -> int | None:
    """Row of the first null in ``column``, or None."""
    if column.null_count == 0:
        return None
    return int(np.flatnonzero(_to_numpy(column.is_null()))[0])


def check_no_nulls(column: Column, name: str, where: Where) -> None:
    row = first_null(column)
    if row is not None:
        raise DataError(f"{where(row)}: empty {name}")


def encode_edges(src: Column, dst: Column) -> tuple[np.ndarray, np.ndarray, NodeIds]:
    """Internal ids for the nodes an edge list mentions.

    :returns: ``(src_index, dst_index, ids)``: int64 arrays of length E and the original ids.
        Integer ids that are exactly ``0..N-1`` stay as they are (identity ids); any other
        ids are numbered in order of first appearance, sources before targets.
    """
    n_edges = len(src)
    if pa.types.is_integer(src.type):
        s, d = _to_numpy(src).astype(np.int64, copy=False), _to_numpy(dst).astype(np.int64,
                                                                                copy=False)
        if n_edges and min(s.min(), d.min()) == 0:
            n = int(max(s.max(), d.max())) + 1
            if n <= 2 * n_edges and _covers(s, d, n):  # at most 2E distinct ids
                return s, d, NodeIds.identity(n)
    (s, d), uniques = factorize([src, dst])
    return s, d, NodeIds(len(uniques), uniques)


def _covers(s: np.ndarray, d: np.ndarray, n: int) -> bool:
    """Whether every id in ``0..n-1`` occurs among ``s`` and ``d``."""
    seen = np.zeros(n, dtype=bool)
    seen[s] = True
    seen[d] = True
    return bool(seen.all())


def index_edges(src: Column, dst: Column, node_ids: pa.Array, *, where: Where,
                table: str) -> tuple[np.ndarray, np.ndarray]:
    """Positions of each edge's endpoints in ``node_ids`` (a node table's id column).

    :param where: names an edge row in messages.
    :param table: names the node table in messages.
    :raises DataError: for the first edge whose endpoint is not in the table.
    """
    (_, s, d), uniques = factorize([node_ids, src, dst])
    n = len(node_ids)  # unique, so they take codes 0..n-1 in order
    for codes, column, end in ((s, src, "source"), (d, dst, "target")):
        unknown = np.flatnonzero(codes >= n)
        if len(unknown):
            row = int(unknown[0])
            node = column[row] if isinstance(column, pa.Array) else _chunk_value(column, row)
            raise DataError(f"{where(row)}: edge {end} {node.as_py()!r} is not in the node "
                            f"table {table}; add it there or remove the edge")
    return s, d


def _chunk_value(column: pa.ChunkedArray, row: int) -> pa.Scalar:
    return column.slice(row, 1).combine_chunks()[0]


def check_unique(ids: pa.Array, *, where: Where) -> None:
    """Raise ``DataError`` naming the first id that occurs twice, and both of its rows."""
    encoded = ids.dictionary_encode()
    if len(encoded.dictionary) == len(ids):
        return
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    _, first_seen = np.unique(codes, return_index=True)  # codes are 0..K-1: first row of each
    rows = np.arange(len(codes))
    repeat = rows[first_seen[codes] != rows][0]
    earlier = first_seen[codes[repeat]]
    raise DataError(f"{where(int(repeat))}: node id {ids[int(repeat)].as_py()!r} appears "
                    f"again (first at {where(int(earlier))}); node ids must be unique")
