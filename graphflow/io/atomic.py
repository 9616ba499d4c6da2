"""Atomic file output: write to a temporary sibling, then rename over the target.

Every file a run writes goes through this module (:func:`atomic_path` for one file,
:func:`atomic_dir` for a folder written whole, and the ``write_*`` helpers built on them).

A run that is interrupted half-way leaves either the previous file or no file, never a
truncated one that looks complete. The temporary name starts with ``.`` and ends in
``.partial`` so that it is obviously not a result. A folder that takes no new file and a
full disk raise a ``DataError`` that names the target, not the temporary file.

Permissions: ``mkstemp`` / ``mkdtemp`` create private files (0600) and folders (0700)
whatever the umask. Before the rename the temporary file gets ``0o666 & ~umask`` (folders
``0o777 & ~umask``), the mode a plain ``open(path, "w")`` would have given it, as pandas and
pyarrow writers do: with the usual umask 0022 a teammate or a web server can read the
results (0644); with umask 0077 they stay private (0600).
"""

from __future__ import annotations

import errno
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphflow.errors import DataError

_UMASK_LOCK = threading.Lock()


def current_umask() -> int:
    """The process's umask (read from ``/proc/self/status`` on Linux; elsewhere set and
    restored under a lock, the only portable way to read it)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    with _UMASK_LOCK:
        mask = os.umask(0o022)
        os.umask(mask)
    return mask


def file_mode() -> int:
    """The mode a new file gets from ``open()``: ``0o666 & ~umask``."""
    return 0o666 & ~current_umask()


def folder_mode() -> int:
    """The mode a new folder gets from ``mkdir()``: ``0o777 & ~umask``."""
    return 0o777 & ~current_umask()


def ensure_parent(path: Path) -> None:
    """Create ``path``'s folder, or raise a ``DataError`` that names it."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(
            f"cannot create output folder {path.parent}: {exc.strerror or exc}"
        ) from exc


@contextmanager
def atomic_path(path: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; on success it gets the umask's mode and is
    renamed to ``path``.

    On any exception the temporary file is removed and ``path`` is left untouched.
    """
    target = Path(path)
    ensure_parent(target)
    try:
        fd, tmp_name = tempfile.mkstemp(
            prefix=f".{target.name}.", suffix=".partial", dir=target.parent
        )
    except OSError as exc:  # a read-only or special folder
        raise DataError(f"cannot write {target}: {exc.strerror or exc}") from exc
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        if tmp.exists():  # a writer may have replaced it with a file of its own mode
            os.chmod(tmp, file_mode())
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
            raise DataError(f"cannot write {target}: {exc.strerror}") from exc
        raise


@contextmanager
def atomic_dir(path: str | os.PathLike[str], *, what: str = "folder") -> Iterator[Path]:
    """Yield a temporary folder beside ``path``; on success it replaces ``path`` whole.

    Everything in it gets the umask's modes, then the old folder (if any) is moved aside,
    the new one renamed into place and the old one removed. On any exception the temporary
    folder is removed and ``path`` is left untouched.

    :param what: what the folder is, for the error line (``"model bundle"``).
    """
    target = Path(path)
    ensure_parent(target)
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial",
                                    dir=target.parent))
    except OSError as exc:
        raise DataError(f"cannot write the {what} {target}: {exc.strerror or exc}") from exc
    try:
        yield tmp
        files, folders = file_mode(), folder_mode()
        for root, dirs, names in os.walk(tmp):
            os.chmod(root, folders)
            for name in names:
                os.chmod(os.path.join(root, name), files)
        old = None
        if target.exists():
            old = target.with_name(f".{target.name}.old-{os.getpid()}")
            shutil.rmtree(old, ignore_errors=True)
            os.replace(target, old)
        os.replace(tmp, target)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
            raise DataError(f"cannot write the {what} {target}: {exc.strerror}") from exc
        raise


_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""Errors of the disk rather than of the writer: reported as the target's, not as a bug."""


def write_bytes(path: str | os.PathLike[str], data: bytes) -> Path:
    """Atomically write ``data`` to ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Atomically write ``obj`` as indented JSON."""
    return write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")


def save_torch(path: str | os.PathLike[str], obj: Any) -> Path:
    """Atomically ``torch.save`` ``obj`` to ``path``."""
    import torch

    with atomic_path(path) as tmp:
        torch.save(obj, tmp)
    return Path(path)
