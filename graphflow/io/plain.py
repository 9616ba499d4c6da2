"""Metadata reduced to plain values, which JSON and torch's ``weights_only`` loading accept."""

from __future__ import annotations

from typing import Any


def plain(value: Any) -> Any:
    """``value`` with dict keys as strings, tuples as lists, and anything that is not a str,
    int, float, bool or None as its ``str()``, recursively."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)
