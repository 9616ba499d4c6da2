"""graphflow.io.npzfile: .npz archives checked before NumPy reads them; CSR parts checked."""

from __future__ import annotations

import io
import zipfile

import numpy as np
import pytest
import scipy.sparse as sp

from graphflow.errors import DataError
from graphflow.io.npzfile import check_npz, csr_from_parts, load_npz


def _npz(path, **arrays):
    np.savez_compressed(path, **arrays)
    return path


def test_reads_what_savez_writes(tmp_path):
    path = _npz(tmp_path / "g.npz", graph_ind=np.arange(5), labels=np.array([0, 1]))
    assert check_npz(path) == {"graph_ind": (np.dtype("int64"), (5,)),
                               "labels": (np.dtype("int64"), (2,))}
    arrays = load_npz(path, ["labels"])
    assert list(arrays) == ["labels"] and arrays["labels"].tolist() == [0, 1]
    with pytest.raises(DataError, match=r"g.npz has no array 'A'; its arrays: graph_ind, labels"):
        load_npz(path, ["A"])


def test_object_arrays_are_refused_without_unpickling(tmp_path):
    path = tmp_path / "o.npz"
    np.savez(path, bad=np.array([{"a": 1}], dtype=object))
    with pytest.raises(DataError, match=r"o.npz: member 'bad.npy' holds Python objects, which "
                                        r"graphflow does not unpickle"):
        load_npz(path)


def test_not_a_zip_cut_or_foreign_members(tmp_path):
    (tmp_path / "junk.npz").write_bytes(b"not a zip" * 10)
    with pytest.raises(DataError, match=r"junk.npz is not a readable .npz archive"):
        load_npz(tmp_path / "junk.npz")
    data = _npz(tmp_path / "g.npz", a=np.arange(1000)).read_bytes()
    (tmp_path / "cut.npz").write_bytes(data[: len(data) // 2])
    with pytest.raises(DataError, match=r"cut.npz is not a readable .npz archive"):
        load_npz(tmp_path / "cut.npz")
    with zipfile.ZipFile(tmp_path / "x.npz", "w") as archive:
        archive.writestr("readme.txt", "hi")
    with pytest.raises(DataError, match=r"x.npz: member 'readme.txt' is not a .npy array"):
        load_npz(tmp_path / "x.npz")
    with pytest.raises(DataError, match=r".npz file not found"):
        load_npz(tmp_path / "none.npz")


def test_a_header_claiming_more_than_the_member_holds(tmp_path):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, np.arange(4, dtype=np.int64))
    raw = buffer.getvalue().replace(b"(4,)", b"(9999999999,)".ljust(4))
    with zipfile.ZipFile(tmp_path / "h.npz", "w") as archive:
        archive.writestr("a.npy", raw)
    with pytest.raises(DataError, match=r"h.npz: member 'a.npy' claims shape \[9999999999\]"):
        load_npz(tmp_path / "h.npz")


def test_the_inflated_size_is_bounded(tmp_path):
    path = _npz(tmp_path / "big.npz", a=np.zeros(100_000))
    with pytest.raises(DataError, match=r"big.npz: its arrays inflate to \d+ bytes, past the "
                                        r"1000-byte bound"):
        load_npz(path, max_bytes=1000)


def test_a_flipped_byte_in_the_data_fails_the_crc(tmp_path):
    path = tmp_path / "s.npz"
    np.savez(path, a=np.arange(100, dtype=np.int64))
    data = bytearray(path.read_bytes())
    data[data.index(b"\x05\x00\x00\x00\x00\x00\x00\x00")] = 6  # the value 5 -> 6
    path.write_bytes(bytes(data))
    with pytest.raises(DataError, match=r"s.npz is not a readable .npz archive \(BadZipFile"):
        load_npz(path)


def test_csr_from_parts_checks_before_scipy():
    m = sp.random(4, 5, density=0.5, format="csr", random_state=0)
    got = csr_from_parts(m.data, m.indices, m.indptr, np.array(m.shape), "adj")
    assert (got != m).nnz == 0
    with pytest.raises(DataError, match=r"adj: a column index lies outside the 5 columns"):
        csr_from_parts(m.data, m.indices + 5, m.indptr, np.array(m.shape), "adj")
    with pytest.raises(DataError, match=r"adj: row pointers must rise from 0"):
        csr_from_parts(m.data, m.indices, m.indptr[::-1].copy(), np.array(m.shape), "adj")
    with pytest.raises(DataError, match=r"adj: 5 row pointers for 3 rows"):
        csr_from_parts(m.data, m.indices, m.indptr, np.array([3, 5]), "adj")
    with pytest.raises(DataError, match=r"adj: the shape \[-1, 5\] is not two sizes"):
        csr_from_parts(m.data, m.indices, m.indptr, np.array([-1, 5]), "adj")
