"""NumPy ``.npz`` archives, checked before NumPy reads them.

``np.load`` on an ``.npz`` trusts the archive: an object array unpickles whatever the file
holds (``allow_pickle=True``), and a member's header may claim any shape, so a small file
can ask for gigabytes. :func:`load_npz` therefore reads only after these checks, each
failure one :class:`DataError` naming the file and the member:

* the file is a zip archive whose members are ``NAME.npy``, stored or deflated, with a
  total inflated size of at most ``max_bytes`` (:data:`MAX_BYTES`);
* each member read starts with the ``.npy`` magic, its header gives a plain dtype (no
  object fields: nothing is unpickled, ``allow_pickle=False``) and a shape whose size
  times the item size is what the member holds;
* zip's CRC is checked as the data are read.

:func:`csr_from_parts` turns stored CSR parts (``data``, ``indices``, ``indptr``,
``shape``, as ``scipy.sparse.save_npz`` or a graph collection keeps them) into a matrix only
when they agree: ``indptr`` from 0, never decreasing, ending at ``len(indices)``; indices
inside the columns.
"""

from __future__ import annotations

import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from graphflow.errors import DataError, first_line

MAX_BYTES = 4 << 30
"""Bytes the members of one archive may inflate to in all."""


def check_npz(path: Path, *, max_bytes: int = MAX_BYTES) -> dict[str, tuple[np.dtype, tuple]]:
    """Check the archive at ``path`` (see the module docstring) and return each member's
    dtype and shape by name (without ``.npy``); raise :class:`DataError` on damage."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f".npz file not found: {path}")
    members: dict[str, tuple[np.dtype, tuple]] = {}
    try:
        with zipfile.ZipFile(path) as archive:
            infos = archive.infolist()
            total = sum(info.file_size for info in infos)
            if total > max_bytes:
                raise DataError(f"{path}: its arrays inflate to {total} bytes, past the "
                                f"{max_bytes}-byte bound of one .npz file")
            for info in infos:
                name = _name(path, info)
                members[name] = _header(path, archive, info)
    except DataError:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, NotImplementedError, OSError,
            ValueError, EOFError) as exc:
        raise DataError(f"{path} is not a readable .npz archive ({first_line(exc)})") from None
    return members


def _name(path: Path, info: zipfile.ZipInfo) -> str:
    if info.is_dir() or not info.filename.endswith(".npy"):
        raise DataError(f"{path}: member {info.filename!r} is not a .npy array")
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        raise DataError(f"{path}: member {info.filename!r} uses zip compression "
                        f"{info.compress_type}; np.savez writes stored or deflated members")
    return info.filename[: -len(".npy")]


def _header(path: Path, archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> tuple[np.dtype, tuple]:
    """The dtype and shape of one member, from its ``.npy`` header."""
    fmt = np.lib.format
    with archive.open(info) as fh:
        version = fmt.read_magic(fh)
        if version == (1, 0):
            shape, fortran, dtype = fmt.read_array_header_1_0(fh)
        elif version in ((2, 0), (3, 0)):
            shape, fortran, dtype = fmt.read_array_header_2_0(fh)
        else:
            raise DataError(f"{path}: member {info.filename!r} has .npy version {version}")
        offset = fh.tell()
    if dtype.hasobject:
        raise DataError(f"{path}: member {info.filename!r} holds Python objects, which "
                        f"graphflow does not unpickle; save numeric arrays")
    need = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if offset + need != info.file_size:
        raise DataError(f"{path}: member {info.filename!r} claims shape {list(shape)} of "
                        f"{dtype} ({need} bytes) but holds {info.file_size - offset}")
    return dtype, tuple(shape)


def load_npz(path: Path, names: list[str] | None = None, *,
             max_bytes: int = MAX_BYTES) -> dict[str, np.ndarray]:
    """The arrays ``names`` (all when None) of the ``.npz`` at ``path``, after
    :func:`check_npz`, read with ``allow_pickle=False``."""
    path = Path(path)
    members = check_npz(path, max_bytes=max_bytes)
    wanted = list(members) if names is None else names
    missing = [k for k in wanted if k not in members]
    if missing:
        raise DataError(f"{path} has no array {missing[0]!r}; its arrays: "
                        f"{', '.join(members) or '(none)'}")
    try:
        with np.load(path, allow_pickle=False) as archive:
            return {k: archive[k] for k in wanted}
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:  # CRC, cut data
        raise DataError(f"{path} is not a readable .npz archive ({first_line(exc)})") from None


def csr_from_parts(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray,
                   shape: Any, where: str) -> Any:
    """A ``scipy.sparse.csr_array`` from its parts, checked first (scipy's kernels trust
    them); ``where`` names the source in errors."""
    import scipy.sparse as sp

    shape = np.asarray(shape).ravel()
    if len(shape) != 2 or shape.dtype.kind not in "iu" or (shape < 0).any() or \
            (shape >= 2**62).any():
        raise DataError(f"{where}: the shape {shape.tolist()[:4]} is not two sizes >= 0")
    rows, cols = int(shape[0]), int(shape[1])
    if indptr.ndim != 1 or indices.ndim != 1 or data.ndim != 1 or \
            indptr.dtype.kind not in "iu" or indices.dtype.kind not in "iu":
        raise DataError(f"{where}: data, indices and indptr must be 1-D (integer indices)")
    if len(indptr) != rows + 1:
        raise DataError(f"{where}: {len(indptr)} row pointers for {rows} rows (expected "
                        f"{rows + 1})")
    ptr = indptr.astype(np.int64)
    if ptr[0] != 0 or (np.diff(ptr) < 0).any() or ptr[-1] != len(indices) or \
            len(indices) != len(data):
        raise DataError(f"{where}: row pointers must rise from 0 to the {len(indices)} "
                        f"indices, with one value per index ({len(data)} values)")
    if len(indices) and (int(indices.min()) < 0 or int(indices.max()) >= cols):
        raise DataError(f"{where}: a column index lies outside the {cols} columns")
    return sp.csr_array((data, indices.astype(np.int64), ptr), shape=(rows, cols))
