"""Progress bars: tqdm on a terminal, silent when stderr is not a TTY (logs, CI, pipes)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import Any, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")


def progress_enabled() -> bool:
    """Bars show on an interactive stderr; ``GRAPHFLOW_PROGRESS=0/1`` forces either way."""
    forced = os.environ.get("GRAPHFLOW_PROGRESS")
    if forced is not None:
        return forced.strip() not in ("0", "", "false", "no")
    return sys.stderr.isatty()


def progress(iterable: Iterable[T], *, desc: str, total: int | None = None, unit: str = "it",
             **kwargs: Any) -> Iterable[T]:
    """Wrap ``iterable`` in a bar (or return it unchanged when bars are off)."""
    if not progress_enabled():
        return iterable
    return tqdm(iterable, desc=desc, total=total, unit=unit, leave=False, dynamic_ncols=True,
                file=sys.stderr, **kwargs)
