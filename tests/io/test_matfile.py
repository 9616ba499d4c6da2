"""graphflow.io.matfile: a .mat file's structure is checked before scipy reads it."""

from __future__ import annotations

import faulthandler
import io
import os
import signal
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp

from fuzzing.found import MAT_HEADER, savemat_fixed, scipy_segfault_mat, sparse_offsets
from graphflow.errors import DataError
from graphflow.io.matfile import MatVariable, check_mat, check_mat_bytes, load_mat, mat_version

def test_every_kind_of_variable_scipy_writes_passes():
    cell = np.empty((1, 2), dtype=object)
    cell[0, 0], cell[0, 1] = np.eye(2), "x"
    variables = {"network": sp.random(6, 6, density=0.3, format="csc", random_state=0),
                 "d": np.eye(3), "c": np.array([[1 + 2j]]), "s": "text", "cell": cell,
                 "st": {"a": 1, "b": np.arange(3)}, "b": np.eye(2) > 0,
                 "i": np.arange(6, dtype=np.int16).reshape(2, 3), "e": np.zeros((0, 3)),
                 "z": sp.csc_matrix((4, 5))}
    for compressed in (False, True):
        found = check_mat_bytes(savemat_fixed(variables, do_compression=compressed), "x.mat")
        assert [v.name for v in found] == list(variables)
        kinds = {v.name: v.kind for v in found}
        assert kinds["network"] == "sparse" and kinds["cell"] == "cell"
        assert kinds["st"] == "struct" and kinds["b"] == "logical" and kinds["i"] == "int16"
        assert MatVariable("e", "double", (0, 3)) in found


def test_level_4_files_pass_and_are_walked():
    data = savemat_fixed({"network": sp.random(5, 5, density=0.4, format="csc", random_state=0),
                    "d": np.eye(3)}, format="4")
    assert mat_version(data) == "4"
    assert [v.name for v in check_mat_bytes(data, "v4.mat")] == ["network", "d"]
    with pytest.raises(DataError, match=r"v4.mat is not a readable MATLAB file \(a 3 x 3 "
                                        r"Level 4 variable at byte \d+ runs past the end"):
        check_mat_bytes(data[:-8], "v4.mat")


def test_the_crashing_bytes_are_refused_naming_the_element():
    with pytest.raises(DataError, match=r"g.mat is not a readable MATLAB file \(element type "
                                        r"78 at byte 208 where 1/2/3/4/5/6/7/9/12/13 "
                                        r"belongs\); save it again"):
        check_mat_bytes(scipy_segfault_mat(), "g.mat")


def test_the_crashing_bytes_still_crash_scipy_itself(tmp_path):
    """Why the check exists: scipy's own reader dies on these bytes (in a fresh process, as
    graphflow's was; where scipy reads a wild pointer, whether it dies depends on memory)."""
    path = tmp_path / "g.mat"
    path.write_bytes(scipy_segfault_mat())
    code = f"import scipy.io; scipy.io.loadmat({str(path)!r})"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=120)
    if proc.returncode != -signal.SIGSEGV:
        pytest.skip(f"scipy {scipy.__version__} did not crash on these bytes this time "
                    f"(exit {proc.returncode})")


@pytest.mark.parametrize("damage, message", [
    ("jc_decreasing", r"column pointers \[0, 1, 0, 3\]\.\.\. do not rise"),
    ("row_out_of_range", r"a row index lies outside its 3 rows"),
    ("dims_negative", r"array dimensions \[-3, 3\]"),
    ("endian", r"endian indicator b'XX' at byte 126"),
    ("version", r"header version 0x0300"),
    ("cut", r"the element at byte 128 claims \d+ bytes; the file ends \d+ bytes later"),
    ("top_type", r"element type 9 at byte 128; a variable is miMATRIX"),
])
def test_damage_is_named(damage, message):
    data = bytearray(savemat_fixed({"network": sp.csc_matrix(np.eye(3))}))
    at = sparse_offsets(bytes(data))
    if damage == "jc_decreasing":
        struct.pack_into("<i", data, at["jc"] + 8 + 8, 0)
    elif damage == "row_out_of_range":
        struct.pack_into("<i", data, at["ir"] + 8 + 4, 7)
    elif damage == "dims_negative":
        struct.pack_into("<i", data, at["dims"] + 8, -3)
    elif damage == "endian":
        data[126:128] = b"XX"
    elif damage == "version":
        data[124:126] = b"\x00\x03"
    elif damage == "cut":
        data = data[:200]
    elif damage == "top_type":
        struct.pack_into("<I", data, 128, 9)
    with pytest.raises(DataError, match=message):
        check_mat_bytes(bytes(data), "g.mat")


def _compressed(inner: bytes) -> bytes:
    raw = zlib.compress(inner)
    head = MAT_HEADER.ljust(116) + bytes(8) + b"\x00\x01IM"
    return head + struct.pack("<II", 15, len(raw)) + raw


def test_compressed_elements_are_inflated_with_a_cap_and_checked():
    plain = savemat_fixed({"network": sp.csc_matrix(np.eye(3))})
    inner = plain[128:]
    assert check_mat_bytes(_compressed(inner), "z.mat")[0].name == "network"
    with pytest.raises(DataError, match=r"compressed elements inflate past 64 bytes"):
        check_mat_bytes(_compressed(inner), "z.mat", max_inflated=64)
    cut = _compressed(inner)[:-5]
    with pytest.raises(DataError, match=r"cut short|damaged|claims"):
        check_mat_bytes(cut, "z.mat")
    bad = bytearray(inner)
    struct.pack_into("<I", bad, sparse_offsets(plain)["jc"] - 128, 78)
    with pytest.raises(DataError, match=r"element type 78"):
        check_mat_bytes(_compressed(bytes(bad)), "z.mat")
    bomb = _compressed(struct.pack("<II", 14, 1 << 20) + bytes(1 << 20))
    with pytest.raises(DataError, match=r"inflate past"):
        check_mat_bytes(bomb, "bomb.mat", max_inflated=1 << 16)


def test_v73_is_refused_with_the_fix(tmp_path):
    data = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 ." + bytes(600)
    with pytest.raises(DataError, match=r"v73.mat is a MATLAB v7.3 \(HDF5\) file.*'-v7'"):
        check_mat_bytes(data, "v73.mat")


def test_classes_graphflow_does_not_read_are_refused():
    data = bytearray(savemat_fixed({"network": np.eye(2)}))
    data[128 + 16] = 16  # array class: function handle
    with pytest.raises(DataError, match=r"'network' is a MATLAB function \(class 16\)"):
        check_mat_bytes(bytes(data), "f.mat")


def test_load_mat_reads_what_passed_and_names_missing_variables(tmp_path):
    path = tmp_path / "g.mat"
    path.write_bytes(savemat_fixed({"network": sp.csc_matrix(np.eye(3)), "group": np.eye(3)}))
    assert set(load_mat(path, ["network"])) >= {"network"}
    with pytest.raises(DataError, match=r"g.mat has no variable 'adj'; its variables: network, "
                                        r"group \(set it\)"):
        load_mat(path, ["adj"], fix="set it")
    with pytest.raises(DataError, match=r"\.mat file not found"):
        check_mat(tmp_path / "none.mat")


def test_mutated_files_either_fail_the_check_or_read_without_a_crash():
    """A seeded sweep: 300 damaged copies of two files; each one the check lets through is
    read by scipy (and turned into COO, as the loader does) in a child that must not die."""
    rng = np.random.default_rng(0)
    bases = [savemat_fixed({"network": sp.random(5, 5, density=0.4, format="csc", random_state=1),
                      "group": np.eye(5)}, do_compression=c) for c in (False, True)]
    passed = 0
    for i in range(300):
        data = bytearray(bases[i % 2])
        for _ in range(int(rng.integers(1, 4))):
            data[int(rng.integers(128, len(data)))] = int(rng.integers(0, 256))
        try:
            check_mat_bytes(bytes(data), "m.mat")
        except DataError:
            continue
        passed += 1
        pid = os.fork()
        if pid == 0:  # pragma: no cover (the child)
            faulthandler.disable()  # pytest's dump would go to its saved stderr
            os.dup2(os.open(os.devnull, os.O_WRONLY), 2)
            try:
                for value in scipy.io.loadmat(io.BytesIO(bytes(data))).values():
                    if sp.issparse(value):
                        sp.coo_matrix(value).sum_duplicates()
                        value.toarray()
            except Exception:  # noqa: BLE001
                pass
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        assert not os.WIFSIGNALED(status), f"case {i}: scipy crashed on a file that passed"
    assert passed > 10  # the sweep reached scipy, not only the check
