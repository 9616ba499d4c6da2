"""Inputs that once crashed a native reader, rebuilt byte for byte (no binary in git)."""

from __future__ import annotations

import io
import struct

MAT_HEADER = b"MATLAB 5.0 MAT-file, Platform: test, Created on: Thu Jan  1 00:00:00 1970"


def savemat_fixed(variables: dict, **kwargs) -> bytes:
    """``scipy.io.savemat``'s bytes with a fixed header text (scipy writes the wall-clock
    time into it)."""
    import scipy.io

    buffer = io.BytesIO()
    scipy.io.savemat(buffer, variables, **kwargs)
    data = buffer.getvalue()
    return MAT_HEADER.ljust(116) + data[116:] if data.startswith(b"MATLAB 5.0") else data


def sparse_offsets(data: bytes) -> dict[str, int]:
    """Byte offsets of the parts of the first variable of an uncompressed little-endian
    Level 5 file holding a sparse matrix: flags, dims, name, ir, jc, pr."""
    at = 128 + 8
    found = {}
    for name in ("flags", "dims", "name", "ir", "jc", "pr"):
        found[name] = at
        word, nbytes = struct.unpack_from("<II", data, at)
        at += 8 if word >> 16 else 8 + nbytes + (-nbytes % 8)
    return found


def scipy_segfault_mat() -> bytes:
    """A 3 x 3 sparse ``network`` (the identity) whose column-pointer element has type code
    78 instead of miINT32 (5), at byte 208. scipy 1.17's ``VarReader5`` looks the code up
    in its table of dtypes without a bounds check and dies with SIGSEGV; the fuzzer found
    the same damage (codes 0, 8, 10, 11, 14, 15, 19-25, >= 36 in any number element) in a
    savemat file with corrupted bytes."""
    import numpy as np
    import scipy.sparse as sp

    data = bytearray(savemat_fixed({"network": sp.csc_matrix(np.eye(3))}))
    data[sparse_offsets(bytes(data))["jc"]] = 78
    return bytes(data)
