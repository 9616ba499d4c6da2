"""Fitted transform state: what a transform learnt from the training data, replayed at predict.

A transform that fits statistics on its input (``normalize_features`` with ``method =
"standard"``: per-column mean and standard deviation) must apply the *training* statistics
to new data, never refit them. Two lists in ``GraphData.meta`` carry that state:

``meta["fitted_transforms"]``
    appended by every stateful transform as it runs: ``{"type": ..., "state": {...}}``
    (plain JSON data). A training run's bundle saves the list (``bundle.json``,
    ``fitted``).
``meta["fitted_replay"]``
    set before the transforms of a predicting pipeline run (the ``predict`` task's
    lifecycle hook): the bundle's list. The ``k``-th transform of a type takes the
    ``k``-th entry of that type instead of fitting.

Transforms use :func:`frozen_state` and :func:`record_state`; both are cheap (no tensor
work) and keep ``meta`` copies independent.
"""

from __future__ import annotations

from typing import Any

from graphflow.graph import GraphData

FITTED = "fitted_transforms"
REPLAY = "fitted_replay"


def _of_type(entries: Any, kind: str) -> list[dict[str, Any]]:
    if not isinstance(entries, list):
        return []
    return [e for e in entries if isinstance(e, dict) and e.get("type") == kind]


def frozen_state(data: GraphData, kind: str) -> dict[str, Any] | None:
    """The training state this transform (the next one of type ``kind``) must apply, or
    None when the pipeline trains (nothing to replay: fit on ``data``)."""
    index = len(_of_type(data.meta.get(FITTED), kind))
    replay = _of_type(data.meta.get(REPLAY), kind)
    return replay[index]["state"] if index < len(replay) else None


def record_state(data: GraphData, kind: str, state: dict[str, Any]) -> None:
    """Append the state a transform of type ``kind`` used to ``data.meta`` (``data`` is the
    transform's output)."""
    entries = list(data.meta.get(FITTED) or [])
    entries.append({"type": kind, "state": state})
    data.meta[FITTED] = entries


def fitted_of(data: GraphData) -> list[dict[str, Any]]:
    """The fitted state every stateful transform recorded on ``data``, in order."""
    return list(data.meta.get(FITTED) or [])


def missing_replay(data: GraphData) -> list[str]:
    """Types of replayed entries no transform of the predicting pipeline used (a stateful
    training transform the new data did not go through), in order."""
    used = [e.get("type") for e in fitted_of(data)]
    left: list[str] = []
    for entry in data.meta.get(REPLAY) or []:
        kind = entry.get("type")
        if kind in used:
            used.remove(kind)
        else:
            left.append(str(kind))
    return left
