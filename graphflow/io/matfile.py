"""MATLAB ``.mat`` files, checked before scipy's native reader sees them.

scipy's MAT v5 reader (``scipy.io.matlab._mio5_utils``, Cython without bounds checks) trusts
the file: a data element whose type code is not one of MATLAB's (``0``, ``8``, ``10``,
``11``, ``14``, ``15``, ``19``... where a number array belongs) indexes its table of dtypes
out of bounds and crashes the process with SIGSEGV; a sparse matrix whose row indices or
column pointers are damaged is handed on unchecked and crashes the first scipy.sparse
routine that trusts it. So :func:`check_mat` walks the whole file in Python first and
:func:`load_mat` only calls ``scipy.io.loadmat`` on a file that passed.

Level 5 (MATLAB v5 to v7) layout, as the MAT-File Format reference describes it::

    128-byte header: 116 bytes of text, 8 bytes subsystem offset, uint16 version 0x0100,
                     2 bytes endian indicator "IM" (little-endian) or "MI" (big-endian)
    data elements:   uint32 type, uint32 nbytes, data, padding to 8 bytes
                     (a "small" element packs nbytes <= 4 into the upper 16 bits of the
                     type word and its data into the next 4 bytes)

At the top level every element is ``miMATRIX`` (14) or ``miCOMPRESSED`` (15: a zlib stream
holding one ``miMATRIX`` element). An ``miMATRIX`` holds array flags (``miUINT32`` x 2:
class, complex/global/logical bits, nzmax), dimensions (``miINT32`` x ndim, ndim >= 2,
each >= 0), a name (``miINT8``), then by class:

* numeric (double ... uint64): real part, imaginary part if complex; each a number element
  with ``nbytes = prod(dims) * itemsize``;
* char: one element of character codes;
* sparse (2-D, M x N): row indices ``ir``, column pointers ``jc`` (N + 1 of them, from 0,
  never decreasing), real (and imaginary) values; the first ``jc[N]`` row indices lie in
  ``[0, M)`` and there are at least ``jc[N]`` indices and values;
* cell: ``prod(dims)`` ``miMATRIX`` elements; struct (and object, after its class name): a
  field-name length, the names, then ``prod(dims) * fields`` ``miMATRIX`` elements.

Every element must end inside its parent, compressed elements are inflated with a cap on the
total (:data:`MAX_INFLATED`) and checked the same way, nesting is bounded
(:data:`MAX_DEPTH`). MATLAB v7.3 files (HDF5) are refused with the fix; Level 4 files (no
text header) are walked against their length (scipy reads them in Python).
"""

from __future__ import annotations

import struct
import warnings
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from graphflow.errors import DataError, first_line

HEADER_BYTES = 128
MAX_INFLATED = 1 << 30
"""Bytes all compressed elements of one file may inflate to (a zip bomb stops here)."""
MAX_DEPTH = 32
"""Nesting of cells and structs (scipy reads them recursively)."""
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"

MI_INT8, MI_INT32, MI_UINT32, MI_MATRIX, MI_COMPRESSED = 1, 5, 6, 14, 15
NUMBER_TYPES = {1: "i1", 2: "u1", 3: "i2", 4: "u2", 5: "i4", 6: "u4", 7: "f4", 9: "f8",
                12: "i8", 13: "u8"}
"""The element types that hold numbers, and their numpy codes."""
TEXT_TYPES = {16: 1, 17: 2, 18: 4}
"""miUTF8, miUTF16, miUTF32 (character data only), and their unit sizes."""
CLASSES = {1: "cell", 2: "struct", 3: "object", 4: "char", 5: "sparse", 6: "double",
           7: "single", 8: "int8", 9: "uint8", 10: "int16", 11: "uint16", 12: "int32",
           13: "uint32", 14: "int64", 15: "uint64", 16: "function", 17: "opaque"}
NUMERIC_CLASSES = range(6, 16)
COMPLEX, LOGICAL = 0x800, 0x200


@dataclass(frozen=True)
class MatVariable:
    """One top-level variable: its name, MATLAB class and dimensions."""

    name: str
    kind: str
    shape: tuple[int, ...]


class _Damage(Exception):
    """What is wrong, for the one-line error (position in bytes of the part it names)."""


def check_mat(path: Path, *, max_inflated: int = MAX_INFLATED) -> list[MatVariable]:
    """Check that scipy can read the ``.mat`` file at ``path`` without trusting it: raise
    :class:`DataError` naming the file and the damage, else return its variables."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f".mat file not found: {path}")
    data = path.read_bytes()
    return check_mat_bytes(data, str(path), max_inflated=max_inflated)


def check_mat_bytes(data: bytes, where: str, *,
                    max_inflated: int = MAX_INFLATED) -> list[MatVariable]:
    """:func:`check_mat` on bytes in memory; ``where`` names them in errors."""
    version = mat_version(data)
    if version == "7.3":
        raise DataError(f"{where} is a MATLAB v7.3 (HDF5) file, which graphflow cannot read; "
                        f"re-save it in MATLAB with save(..., '-v7')")
    try:
        if version == "4":
            return _check_v4(data)
        return _Walker(data, max_inflated).file()
    except _Damage as exc:
        raise DataError(f"{where} is not a readable MATLAB file ({exc}); save it again "
                        f"from MATLAB or scipy.io.savemat") from None


def mat_version(data: bytes) -> str:
    """``"5"`` (v5 to v7), ``"7.3"`` (HDF5) or ``"4"`` (no text header), from the first
    bytes, as scipy decides (``scipy.io.matlab._miobase._get_matfile_version``)."""
    if data[512:520] == HDF5_SIGNATURE or data[:10] == b"MATLAB 7.3":
        return "7.3"
    if len(data) >= 4 and 0 in data[:4]:
        return "4"
    if len(data) >= HEADER_BYTES and data[124:126] in (b"\x00\x02", b"\x02\x00"):
        return "7.3"
    return "5"


class _Walker:
    """A walk over a Level 5 file's data elements (see the module docstring)."""

    def __init__(self, data: bytes, max_inflated: int):
        self.data = data
        self.left = max_inflated
        self.cap = max_inflated
        self.order = "<"

    def file(self) -> list[MatVariable]:
        data = self.data
        if len(data) < HEADER_BYTES:
            raise _Damage(f"{len(data)} bytes, shorter than the 128-byte MAT header")
        endian = data[126:128]
        if endian not in (b"IM", b"MI"):
            raise _Damage(f"endian indicator {endian!r} at byte 126, expected 'IM' or 'MI'")
        self.order = "<" if endian == b"IM" else ">"
        (version,) = struct.unpack_from(self.order + "H", data, 124)
        if version != 0x0100:
            raise _Damage(f"header version {version:#06x}, expected 0x0100")
        found = []
        at = HEADER_BYTES
        while at < len(data):
            kind, nbytes, start, small = self.tag(data, at, len(data))
            if small or nbytes == 0:
                raise _Damage(f"an empty or small top-level element at byte {at}")
            end = start + nbytes
            if end > len(data):
                raise _Damage(f"the element at byte {at} claims {nbytes} bytes; the file "
                              f"ends {len(data) - start} bytes later")
            if kind == MI_COMPRESSED:
                found.append(self.compressed(data[start:end], at))
            elif kind == MI_MATRIX:
                found.append(self.matrix(data, start, end, 0, top=True))
            else:
                raise _Damage(f"element type {kind} at byte {at}; a variable is "
                              f"miMATRIX (14) or miCOMPRESSED (15)")
            at = end
        return [v for v in found if v is not None]

    def tag(self, buf: bytes, at: int, end: int) -> tuple[int, int, int, bool]:
        """``(type, nbytes, data start, small)`` of the element at ``at``."""
        if at + 8 > end:
            raise _Damage(f"a data element at byte {at} is cut short")
        (word,) = struct.unpack_from(self.order + "I", buf, at)
        if word >> 16:  # small data element: nbytes in the upper half
            nbytes, kind = word >> 16, word & 0xFFFF
            if nbytes > 4:
                raise _Damage(f"a small data element of {nbytes} bytes at byte {at}")
            return kind, nbytes, at + 4, True
        (nbytes,) = struct.unpack_from(self.order + "I", buf, at + 4)
        return word, nbytes, at + 8, False

    def element(self, buf: bytes, at: int, end: int,
                types: dict[int, Any]) -> tuple[int, int, int, int]:
        """A leaf element of one of ``types``: ``(type, data start, nbytes, next)``."""
        kind, nbytes, start, small = self.tag(buf, at, end)
        if kind not in types:
            raise _Damage(f"element type {kind} at byte {at} where "
                          f"{'/'.join(map(str, sorted(types)))} belongs")
        stop = at + 8 if small else start + nbytes + (-nbytes % 8)
        if start + nbytes > end or stop > end:
            raise _Damage(f"the element at byte {at} claims {nbytes} bytes past its parent")
        return kind, start, nbytes, stop

    def numbers(self, buf: bytes, at: int, end: int) -> tuple[np.ndarray, int]:
        kind, start, nbytes, stop = self.element(buf, at, end, NUMBER_TYPES)
        dtype = np.dtype(NUMBER_TYPES[kind]).newbyteorder(self.order)
        if nbytes % dtype.itemsize:
            raise _Damage(f"{nbytes} bytes at byte {at} are not whole {dtype.name} values")
        return np.frombuffer(buf, dtype, nbytes // dtype.itemsize, start), stop

    def compressed(self, raw: bytes, at: int) -> MatVariable | None:
        inflater = zlib.decompressobj()
        try:
            inner = inflater.decompress(raw, self.left + 1)
        except zlib.error as exc:
            raise _Damage(f"the compressed element at byte {at} is damaged ({exc})") from None
        if len(inner) > self.left:
            raise _Damage(f"compressed elements inflate past {self.cap} bytes")
        if not inflater.eof:
            raise _Damage(f"the compressed element at byte {at} is cut short")
        self.left -= len(inner)
        kind, nbytes, start, small = self.tag(inner, 0, len(inner))
        if kind != MI_MATRIX or small:
            raise _Damage(f"the compressed element at byte {at} holds element type {kind}, "
                          f"not miMATRIX (14)")
        if nbytes == 0 or start + nbytes > len(inner):
            raise _Damage(f"the compressed element at byte {at} inflates to "
                          f"{len(inner)} bytes, holding a {nbytes}-byte array")
        return self.matrix(inner, start, start + nbytes, 0, top=True)

    def matrix(self, buf: bytes, at: int, end: int, depth: int,
               top: bool = False) -> MatVariable | None:
        """The content of an miMATRIX element in ``buf[at:end]``."""
        if depth > MAX_DEPTH:
            raise _Damage(f"cells or structs nested deeper than {MAX_DEPTH}")
        if at == end and not top:
            return None  # an empty array inside a cell or struct
        flags, at = self.numbers(buf, at, end)
        if flags.dtype.kind != "u" or flags.dtype.itemsize != 4 or len(flags) != 2:
            raise _Damage(f"array flags at byte {at} are not two uint32")
        word = int(flags[0])
        cls, is_complex = word & 0xFF, bool(word & COMPLEX)
        if cls not in CLASSES:
            raise _Damage(f"array class {cls} at byte {at} is not a MATLAB class")
        dims, at = self.numbers(buf, at, end)
        if dims.dtype != np.dtype("i4").newbyteorder(self.order) or len(dims) < 2 \
                or (dims < 0).any():
            raise _Damage(f"array dimensions {dims.tolist()[:8]} before byte {at} "
                          f"are not two or more int32 >= 0")
        shape = tuple(int(d) for d in dims)
        count = int(np.prod(dims.astype(object)))
        kind, start, nbytes, at = self.element(buf, at, end, {MI_INT8: 0, 16: 0})
        name = bytes(buf[start:start + nbytes]).decode("latin1")
        kind_name = CLASSES[cls]
        if cls in NUMERIC_CLASSES:
            for _ in range(2 if is_complex else 1):
                values, at = self.numbers(buf, at, end)
                if len(values) != count:
                    raise _Damage(f"{name!r} is {'x'.join(map(str, shape))} but holds "
                                  f"{len(values)} values")
        elif cls == 4:  # char
            self.element(buf, at, end, {**NUMBER_TYPES, **TEXT_TYPES})
        elif cls == 5:
            self.sparse(buf, at, end, name, shape, is_complex)
        elif cls in (1, 2, 3):
            fields = 1
            if cls in (2, 3):
                if cls == 3:  # an object: its class name first
                    *_, at = self.element(buf, at, end, {MI_INT8: 0})
                length, at = self.numbers(buf, at, end)
                if len(length) != 1 or not 0 < int(length[0]) <= 4096:
                    raise _Damage(f"struct {name!r} has a field-name length of "
                                  f"{length.tolist()[:2]}")
                _, _, nbytes, at = self.element(buf, at, end, {MI_INT8: 0})
                fields = nbytes // int(length[0])
            if count * fields * 8 > end - at:
                raise _Damage(f"{kind_name} {name!r} of {count} x {fields} entries does not "
                              f"fit its {end - at} bytes")
            for _ in range(count * fields):
                sub, nbytes, start, small = self.tag(buf, at, end)
                if sub != MI_MATRIX or small or start + nbytes > end:
                    raise _Damage(f"an entry of {kind_name} {name!r} at byte {at} is not an "
                                  f"miMATRIX element inside it")
                self.matrix(buf, start, start + nbytes, depth + 1)
                at = start + nbytes
        else:
            raise _Damage(f"{name!r} is a MATLAB {kind_name} (class {cls}), which graphflow "
                          f"does not read")
        return MatVariable(name, "logical" if word & LOGICAL else kind_name, shape)

    def sparse(self, buf: bytes, at: int, end: int, name: str, shape: tuple[int, ...],
               is_complex: bool) -> None:
        if len(shape) != 2:
            raise _Damage(f"sparse {name!r} has {len(shape)} dimensions")
        m, n = shape
        rows, at = self.numbers(buf, at, end)
        starts, at = self.numbers(buf, at, end)
        if rows.dtype.kind not in "iu" or starts.dtype.kind not in "iu":
            raise _Damage(f"sparse {name!r}: row indices or column pointers are not integers")
        if len(starts) != n + 1:
            raise _Damage(f"sparse {name!r} is {m}x{n} but has {len(starts)} column "
                          f"pointers, expected {n + 1}")
        starts = starts.astype(np.int64)
        nnz = int(starts[-1])
        if starts[0] != 0 or (np.diff(starts) < 0).any() or nnz > len(rows):
            raise _Damage(f"sparse {name!r}: column pointers {starts[:6].tolist()}... do not "
                          f"rise from 0 to at most its {len(rows)} row indices")
        used = rows[:nnz].astype(np.int64)
        if nnz and (used.min() < 0 or used.max() >= m):
            raise _Damage(f"sparse {name!r}: a row index lies outside its {m} rows")
        for _ in range(2 if is_complex else 1):
            values, at = self.numbers(buf, at, end)
            if len(values) < nnz:
                raise _Damage(f"sparse {name!r}: {len(values)} values for {nnz} entries")


V4_TYPES = {0: 8, 1: 4, 2: 4, 3: 2, 4: 2, 5: 1}
"""Level 4 precision digit P of ``MOPT`` and its item size (double, single, int32, int16,
uint16, uint8)."""


def _check_v4(data: bytes) -> list[MatVariable]:
    """Level 4: per variable ``int32 MOPT, mrows, ncols, imagf, namlen``, the name, then
    ``mrows * ncols`` values (twice if imaginary); MOPT's digits give the byte order (M: 0
    little-, 1 big-endian), precision (P) and type (T: 0 full, 1 text, 2 sparse)."""
    found = []
    at = 0
    order = "<" if struct.unpack_from("<i", data.ljust(4, b"\0"), 0)[0] in range(5000) else ">"
    while at < len(data):
        if at + 20 > len(data):
            raise _Damage(f"a Level 4 variable header at byte {at} is cut short")
        mopt, rows, cols, imag, namelen = struct.unpack_from(order + "5i", data, at)
        m, o, p, t = mopt // 1000, mopt // 100 % 10, mopt // 10 % 10, mopt % 10
        if not 0 <= mopt < 5000 or m not in (0, 1) or o != 0 or p not in V4_TYPES or t > 2 \
                or (m == 0) != (order == "<"):
            raise _Damage(f"Level 4 type word {mopt} at byte {at} is not one scipy reads")
        if rows < 0 or cols < 0 or imag not in (0, 1) or not 0 < namelen <= 4096:
            raise _Damage(f"Level 4 header at byte {at}: {rows} x {cols}, imaginary flag "
                          f"{imag}, name of {namelen} bytes")
        start = at + 20 + namelen
        size = rows * cols * V4_TYPES[p] * (2 if imag else 1)
        if start + size > len(data):
            raise _Damage(f"a {rows} x {cols} Level 4 variable at byte {at} runs past the "
                          f"end of the file")
        name = data[at + 20:start].rstrip(b"\0").decode("latin1")
        if t == 2:
            _check_v4_sparse(data, start, rows, cols, order, V4_TYPES[p], p, name)
        found.append(MatVariable(name, ("double", "char", "sparse")[t], (rows, cols)))
        at = start + size
    return found


def _check_v4_sparse(data: bytes, start: int, rows: int, cols: int, order: str, size: int,
                     p: int, name: str) -> None:
    """A Level 4 sparse matrix is an (nnz + 1) x 3 or 4 array of (row, col, value[, imag])
    with 1-based indices; its last row holds the shape."""
    if cols not in (3, 4) or rows < 1:
        raise _Damage(f"sparse {name!r} is stored as {rows} x {cols}, not (nnz + 1) x 3 or 4")
    code = {0: "f8", 1: "f4", 2: "i4", 3: "i2", 4: "u2", 5: "u1"}[p]
    table = np.frombuffer(data, np.dtype(code).newbyteorder(order), rows * cols, start)
    table = table.reshape(cols, rows).astype(np.float64)
    i, j = table[0], table[1]
    if not (np.isfinite(i).all() and np.isfinite(j).all()):
        raise _Damage(f"sparse {name!r} has non-finite indices")
    m, n = i[-1], j[-1]
    if m < 0 or n < 0 or (i[:-1] < 1).any() or (j[:-1] < 1).any() or \
            (i[:-1] > m).any() or (j[:-1] > n).any() or (i != np.floor(i)).any() or \
            (j != np.floor(j)).any() or max(m, n) >= 2**31:
        raise _Damage(f"sparse {name!r}: an index lies outside its {m:g} x {n:g} shape")


def load_mat(path: Path, names: list[str], *, fix: str = "") -> dict[str, Any]:
    """Read the variables ``names`` of the ``.mat`` file at ``path`` with scipy, after
    :func:`check_mat`; a name the file lacks, or any error, is one :class:`DataError`
    (``fix``, when given, ends the message about a missing name)."""
    import scipy.io

    path = Path(path)
    present = [v.name for v in check_mat(path)]
    missing = [k for k in names if k not in present]
    if missing:
        raise DataError(f"{path} has no variable {missing[0]!r}; its variables: "
                        f"{', '.join(present) or '(none)'}" + (f" ({fix})" if fix else ""))
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return scipy.io.loadmat(str(path), variable_names=names)
    except Exception as exc:  # noqa: BLE001 (structure checked: scipy's own ValueErrors)
        raise DataError(f"{path} is not a readable MATLAB file ({first_line(exc)})") from None
