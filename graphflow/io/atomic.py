"""Atomic file output: write to a temporary sibling, then rename over the target.

A run that is interrupted half-way leaves either the previous file or no file, never a
truncated one that looks complete. The temporary name starts with ``.`` and ends in
``.partial`` so that it is obviously not a result. A folder that takes no new file and a
full disk raise a ``DataError`` that names the target, not the temporary file.
"""

from __future__ import annotations

import errno
import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from graphflow.errors import DataError


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
    """Yield a temporary path beside ``path``; on success it is renamed to ``path``.

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
        os.replace(tmp, target)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError) and exc.errno in _NO_ROOM:
            raise DataError(f"cannot write {target}: {exc.strerror}") from exc
        raise


_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EFBIG)
"""Errors of the disk rather than of the writer: reported as the target's, not as a bug."""


def write_text(path: str | os.PathLike[str], text: str) -> Path:
    """Atomically write ``text`` (UTF-8) to ``path``."""
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
    return Path(path)


def write_json(path: str | os.PathLike[str], obj: Any) -> Path:
    """Atomically write ``obj`` as indented JSON."""
    return write_text(path, json.dumps(obj, indent=2, sort_keys=False, default=str) + "\n")
