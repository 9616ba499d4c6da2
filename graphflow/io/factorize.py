"""Factorize id columns: values -> codes ``0..K-1`` in order of first appearance, and the uniques.

pyarrow's ``dictionary_encode`` hashes variable-length strings: every row costs a hash of a
string held elsewhere in memory and, on a hit, a comparison against the dictionary's copy,
so on millions of rows it is cache-miss bound. Node ids are usually short (``u123456``,
``user_0042``), so we turn each string into a fixed-width key first: pad it with NUL bytes to
``w`` = its column's longest id rounded up to 8 bytes (``utf8_rpad``, one vectorised pass),
view the padded bytes as ``uint64`` (``w = 8``) or ``fixed_size_binary(w)``, and hash those,
which is exact and 3-4x faster. The uniques are turned back into strings by dropping the
padding. Strings with a NUL byte, non-ASCII padding surprises or ids longer than
:data:`MAX_KEY_BYTES` fall back to hashing the strings themselves.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

MAX_KEY_BYTES = 32
"""Longest id (in bytes) the fixed-width path handles; longer ones hash as strings."""

Column = pa.Array | pa.ChunkedArray


def chunks(column: Column) -> list[pa.Array]:
    return column.chunks if isinstance(column, pa.ChunkedArray) else [column]


def factorize(columns: Sequence[Column]) -> tuple[list[np.ndarray], pa.Array]:
    """Codes for the values of ``columns`` taken together (same type, no nulls).

    :returns: one int64 code array per column, and the uniques in order of first
        appearance (the first column's rows first), so that ``uniques.take(codes[i])``
        gives back column ``i``.
    """
    parts = [c for column in columns for c in chunks(column)]
    dtype = columns[0].type
    if not parts or sum(len(p) for p in parts) == 0:
        return [np.zeros(0, dtype=np.int64) for _ in columns], pa.array([], dtype)
    joined = pa.chunked_array(parts, type=dtype)
    fast = _short_strings(joined) if _is_string(dtype) else None
    if fast is not None:
        codes, uniques = fast
    else:
        encoded = joined.dictionary_encode()
        codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False)
                                for c in encoded.chunks]).astype(np.int64)
        uniques = encoded.chunks[0].dictionary
    bounds = np.cumsum([0] + [len(c) for c in columns])
    return [codes[a:b] for a, b in zip(bounds[:-1], bounds[1:])], uniques


def _is_string(t: pa.DataType) -> bool:
    return pa.types.is_string(t) or pa.types.is_large_string(t)


def _short_strings(column: pa.ChunkedArray) -> tuple[np.ndarray, pa.Array] | None:
    """The fixed-width-key path, or None when the ids do not fit it.

    Large columns are cut into one group of parse blocks per core; each group is padded
    and hashed in its own thread (pyarrow releases the GIL), then the groups' uniques are
    merged, which keeps the codes in order of first appearance.
    """
    lengths = pc.binary_length(column)
    longest = pc.max(lengths).as_py()
    if not longest or longest > MAX_KEY_BYTES:
        return None
    width = -(-longest // 8) * 8
    groups = _groups(column.chunks, workers())
    if len(groups) == 1:
        results = [_encode_group(groups[0], width)]
    else:
        with ThreadPoolExecutor(len(groups)) as pool:
            results = list(pool.map(lambda g: _encode_group(g, width), groups))
    if any(r is None for r in results):
        return None
    if len(results) == 1:
        codes, uniques = results[0][0].astype(np.int64), results[0][1]
    else:  # merge: each group's uniques -> codes of all uniques, in first-appearance order
        merged = pa.chunked_array([r[1] for r in results]).dictionary_encode()
        codes = np.concatenate([
            m.indices.to_numpy(zero_copy_only=False).astype(np.int64)[r[0]]  # int64 gather
            for m, r in zip(merged.chunks, results)])
        uniques = merged.chunks[0].dictionary
    return codes, _unpad(_key_bytes(uniques, width), column.type)


def workers() -> int:
    """Threads for hashing: one per core, at most 4."""
    return max(1, min(4, os.cpu_count() or 1))


GROUP_ROWS = 1 << 21
"""Below this many rows per group, threads cost more than they save."""


def _groups(blocks: list[pa.Array], n: int) -> list[list[pa.Array]]:
    """Consecutive runs of blocks with about equal row counts (at most ``n`` runs)."""
    total = sum(len(b) for b in blocks)
    n = max(1, min(n, total // GROUP_ROWS, len(blocks)))
    groups: list[list[pa.Array]] = [[] for _ in range(n)]
    seen = 0
    for block in blocks:  # over parse blocks
        groups[min(n - 1, seen * n // total)].append(block)
        seen += len(block)
    return [g for g in groups if g]


def _encode_group(blocks: list[pa.Array], width: int) -> tuple[np.ndarray, pa.Array] | None:
    """Pad, view as fixed-width keys and hash: (int32 codes, unique keys), or None if unsuitable."""
    keys = []
    for block in blocks:  # over parse blocks, not rows
        padded = pc.utf8_rpad(block, width=width, padding="\x00")
        offsets = np.frombuffer(padded.buffers()[1], dtype=_offset_type(padded.type))
        start, end = int(offsets[padded.offset]), int(offsets[padded.offset + len(padded)])
        if end - start != len(padded) * width:
            return None  # a multi-byte character made a padded id longer than width
        data = np.frombuffer(padded.buffers()[2], dtype=np.uint8)[start:end]
        real = int(pc.sum(pc.binary_length(block)).as_py() or 0)
        if len(data) - np.count_nonzero(data) != len(data) - real:
            return None  # an id holds a NUL byte: dropping the padding would change it
        if width == 8:
            keys.append(pa.array(data.view(np.uint64)))  # zero-copy view
        else:
            keys.append(pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(width), len(block), [None, pa.py_buffer(data)]))
    encoded = pa.chunked_array(keys).dictionary_encode()
    codes = np.concatenate([c.indices.to_numpy(zero_copy_only=False) for c in encoded.chunks])
    return codes, encoded.chunks[0].dictionary


def _key_bytes(keys: pa.Array, width: int) -> np.ndarray:
    """Unique keys (uint64 or fixed_size_binary) as a (K, width) byte matrix."""
    if width == 8:
        return keys.to_numpy(zero_copy_only=False).view(np.uint8).reshape(-1, 8)
    data = np.frombuffer(keys.buffers()[1], dtype=np.uint8)
    return data[keys.offset * width:(keys.offset + len(keys)) * width].reshape(-1, width)


def _offset_type(t: pa.DataType) -> type:
    return np.int64 if pa.types.is_large_string(t) else np.int32


def _unpad(rows: np.ndarray, dtype: pa.DataType) -> pa.Array:
    """(K, w) NUL-padded byte rows -> a string array without the padding."""
    nonzero = rows != 0
    width = rows.shape[1]
    lengths = np.where(nonzero.any(axis=1), width - np.argmax(nonzero[:, ::-1], axis=1), 0)
    data = rows[np.arange(width)[None, :] < lengths[:, None]]  # row-major: ids in order
    offsets = np.concatenate([[0], np.cumsum(lengths)]).astype(_offset_type(dtype))
    return pa.Array.from_buffers(dtype, len(rows), [None, pa.py_buffer(offsets),
                                                    pa.py_buffer(np.ascontiguousarray(data))])
