import numpy as np
import pyarrow as pa
import pytest

import graphflow.io.factorize as fz


def _reference(columns):
    joined = pa.chunked_array([c for col in columns for c in
                               (col.chunks if isinstance(col, pa.ChunkedArray) else [col])])
    enc = joined.dictionary_encode()
    codes = np.concatenate([c.indices.to_numpy() for c in enc.chunks])
    return codes, enc.chunks[0].dictionary.to_pylist()


@pytest.mark.parametrize("ids", [
    ["u1", "bob", "u1", "", "zz", "bob", "q", "u1", "new"],  # fits 8 bytes: uint64 keys
    ["user_000001", "user_2", "user_000001", "x", "user_2", "y"],  # 16-byte keys
    ["é", "e", "é", "ü"],  # multi-byte characters are bytes like any other
    ["a\x00", "a", "a\x00"],  # NUL inside an id: falls back
    ["x" * 40, "y", "x" * 40],  # longer than MAX_KEY_BYTES: falls back
])
def test_matches_dictionary_encode(ids):
    col = pa.chunked_array([pa.array(ids[:3]), pa.array(ids[3:5], pa.string()),
                           pa.array(ids[5:], pa.string())])
    other = pa.array(list(reversed(ids)))
    (a, b), uniques = fz.factorize([col, other])
    codes, names = _reference([col, other])
    assert np.array_equal(np.concatenate([a, b]), codes)
    assert a.dtype == np.int64
    assert uniques.to_pylist() == names
    assert uniques.take(pa.array(b)).to_pylist() == other.to_pylist()


def test_integers_and_empty():
    (a,), uniques = fz.factorize([pa.array([30, 10, 30, 20])])
    assert a.tolist() == [0, 1, 0, 2] and uniques.to_pylist() == [30, 10, 20]
    (a, b), uniques = fz.factorize([pa.array([], pa.string()), pa.array([], pa.string())])
    assert len(a) == len(b) == len(uniques) == 0


def test_which_ids_take_the_fixed_width_path():
    def fast(ids):
        return fz._short_strings(pa.chunked_array([pa.array(ids, pa.string())])) is not None

    assert fast(["u1", "bob", "é"]) and fast(["user_000001", "x"]) and fast(["a" * 32])
    assert not fast(["a\x00", "a"]) and not fast(["a" * 33]) and not fast(["", ""])
