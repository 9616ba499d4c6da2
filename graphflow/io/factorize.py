"""Factorize id columns: values -> codes ``0..K-1`` in order of first appearance, and the uniques.

pyarrow's ``dictionary_encode`` hashes variable-length strings: every row costs a hash of a
string held elsewhere in memory and, on a hit, a comparison against the dictionary's copy,
so on millions of rows it is cache-miss bound. Node ids are usually short (``u123456``,
``user_0042``), so we turn each id into a fixed-width key first: its bytes zero-padded to
``w`` = the longest id rounded up to 8 bytes, gathered from a zero-padded copy of Arrow's data
buffer as little-endian words (a strided numpy view and one gather per word, no per-row work
in Python), and hash those as ``uint64`` (``w = 8``) or ``fixed_size_binary(w)``: exact, and
about twice as fast. The uniques are turned back into strings by dropping the padding.
Ids with a NUL byte, or longer than :data:`MAX_KEY_BYTES`, fall back to hashing the strings.
"""

from __future__ import annotations

from collections.abc import Sequence

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
    """The fixed-width-key path, or None when the ids do not fit it."""
    longest = pc.max(pc.binary_length(column)).as_py()
    if not longest or longest > MAX_KEY_BYTES:
        return None
    width = -(-longest // 8) * 8
    keys = []
    for block in column.chunks:  # over parse blocks, not rows
        words = _block_keys(block, width // 8)
        if words is None:
            return None
        if width == 8:
            keys.append(pa.array(words[:, 0]))
        else:
            raw = np.ascontiguousarray(words).view(np.uint8).reshape(-1)
            keys.append(pa.FixedSizeBinaryArray.from_buffers(
                pa.binary(width), len(block), [None, pa.py_buffer(raw)]))
    encoded = pa.chunked_array(keys).dictionary_encode()
    codes = np.empty(len(column), dtype=np.int64)
    at = 0
    for chunk in encoded.chunks:  # int32 indices -> int64 in one copy
        np.copyto(codes[at:at + len(chunk)], chunk.indices.to_numpy(zero_copy_only=False))
        at += len(chunk)
    uniques = encoded.chunks[0].dictionary
    return codes, _unpad(_key_bytes(uniques, width), column.type)


_MASKS = np.array([(1 << (8 * i)) - 1 for i in range(8)] + [(1 << 64) - 1], dtype=np.uint64)
"""``_MASKS[b]`` keeps the low ``b`` bytes of a little-endian word."""


def _block_keys(block: pa.Array, words: int) -> np.ndarray | None:
    """(n, words) little-endian uint64: each id's bytes, zero-padded, or None when an id
    holds a NUL byte (dropping the padding would change it).

    The data buffer is viewed as overlapping 8-byte words at every byte offset (a strided
    view), so word ``j`` of id ``i`` is one gather at ``offsets[i] + 8 j``, masked to the
    id's remaining length. The last ids' words would run past the buffer's end and Arrow
    buffers (those of pyarrow's CSV reader included) have no spare bytes there, so unless the
    buffer goes on past the block (a slice), its bytes are copied first with ``8 * words`` zero
    bytes appended: one ``memcpy`` per block.
    """
    n = len(block)
    offsets = np.frombuffer(block.buffers()[1], dtype=_offset_type(block.type))
    offsets = offsets[block.offset:block.offset + n + 1].astype(np.int64)
    data = np.frombuffer(block.buffers()[2], dtype=np.uint8) if block.buffers()[2] else \
        np.zeros(0, dtype=np.uint8)
    start, end = int(offsets[0]), int(offsets[-1])
    if np.count_nonzero(data[start:end]) != end - start:
        return None  # a NUL byte inside an id
    if len(data) < end + 8 * words:  # too little slack after the last id to read whole words
        data = np.concatenate([data[:end], np.zeros(8 * words, dtype=np.uint8)])
    view = np.ndarray(shape=(len(data) - 7,), dtype="<u8", buffer=data, strides=(1,))
    lengths = np.diff(offsets)
    out = np.empty((n, words), dtype="<u8")
    for j in range(words):  # over the (at most 4) words of a key
        keep = lengths if words == 1 else np.clip(lengths - 8 * j, 0, 8)  # bytes in word j
        out[:, j] = view[offsets[:-1] + 8 * j] & _MASKS[keep]
    return out


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
