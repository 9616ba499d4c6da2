"""The ``[[track]]`` trackers of a run: configuration in, epochs and files out.

:func:`tracked` wraps a run (the runner enters it once the run's context exists): it builds
the configured trackers, starts them, registers a hook plugin that feeds them each epoch
(``graphflow_epoch_end``) and flushes them at each stage's end (``graphflow_stage_end``), and
finishes them once ``run.json`` is written, whatever the run's outcome. Only rank 0 of a
data-parallel run tracks.

A tracker whose method raises (its package is missing, its server is down, the disk is
full) is dropped with one warning line on stderr, and recorded in ``run.json`` under
``reports["track.N"]``; the run goes on and loses nothing.

Names every tracker shares, so that their records compare:

* :func:`params`: the resolved configuration flattened to dotted keys, the keys ``--set``
  takes (``train.0.lr``, ``model.hidden``, ``transform.0.type``);
* :func:`metric_key`: an epoch figure's name: ``loss`` for the one ``[train]`` stage,
  ``train.1/loss`` for each stage of ``[[train]]``; the run's final metrics are
  ``final/<name>`` (``final/test_acc``), since a final ``val_acc`` (of the best epoch) is not
  one more point of the epoch series;
* :func:`run_files`: what a tracker uploads: ``run.json``, ``metrics.jsonl``, the exported
  files and the checkpoints.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.plugin import hookimpl

if TYPE_CHECKING:
    from graphflow.components import Tracker
    from graphflow.context import RunContext, Stage
    from graphflow.record import RunRecord

PLUGIN_NAME = "graphflow-tracking"
"""The name of the hook plugin :func:`tracked` registers for the length of a run."""


def params(resolved: dict[str, Any]) -> dict[str, Any]:
    """The resolved configuration as ``{"section.key": value}`` (list sections indexed:
    ``transform.0.type``, ``train.0.epochs``); empty top-level lists are left out."""
    out: dict[str, Any] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), item)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for i, item in enumerate(value):
                walk(f"{prefix}.{i}", item)
        elif not (isinstance(value, list) and not value and "." not in prefix):
            out[prefix] = value

    walk("", resolved)
    return out


def param_text(value: Any) -> str:
    """A parameter as trackers show it: strings as they are, anything else as JSON."""
    return value if isinstance(value, str) else json.dumps(value)


def metric_key(section: str | None, name: str) -> str:
    """An epoch figure's key: ``name`` in the ``train`` stage, ``section/name`` otherwise."""
    return name if section in (None, "train") else f"{section}/{name}"


def final_key(name: str) -> str:
    """A final metric's key (``run.json``'s ``metrics``): ``final/name``."""
    return f"final/{name}"


def run_files(record: dict[str, Any]) -> list[tuple[Path, str]]:
    """``(path, folder)`` of each file a tracker uploads: ``run.json`` and ``metrics.jsonl``
    at the top, checkpoints under ``model/``, exported files under ``outputs/``; files that
    do not exist (a failed run's missing outputs) and trackers' own stores are left out."""
    files: list[tuple[Path, str]] = []
    seen: set[Path] = set()
    for out in record.get("outputs", []):
        path = Path(out["path"])
        if path in seen or not path.exists():
            continue
        seen.add(path)
        what = out.get("what", "")
        if what.endswith(" tracker"):  # a tracker's own store is no file of the run
            continue
        folder = "" if what in ("record", "epoch log") else \
            "model" if what == "checkpoint" or what == "model" else "outputs"
        files.append((path, folder))
    return files


def versions_tags(record: dict[str, Any]) -> dict[str, str]:
    """``graphflow.version``, ``torch.version``, ``dgl.version`` and the run's identity."""
    tags = {f"{name}.version": str(v) for name, v in record.get("versions", {}).items()
            if name in ("graphflow", "torch", "dgl", "python") and v}
    for key in ("config_hash", "device", "seed"):
        if record.get(key) is not None:
            tags[f"graphflow.{key}"] = str(record[key])
    return tags


class _Guarded:
    """One tracker; its first exception drops it with one warning line."""

    def __init__(self, section: str, tracker: Tracker, ctx: RunContext):
        self.section = section
        self.tracker = tracker
        self.ctx = ctx
        self.failed: str | None = None

    def call(self, method: str, *args: Any) -> Any:
        if self.failed is not None:
            return None
        try:
            return getattr(self.tracker, method)(*args)
        except Exception as exc:  # a tracker never fails the run
            self.failed = f"{method}: {type(exc).__name__}: {_first_line(exc)}"
            print(f"graphflow: warning: [{self.section}] {self.tracker.name} tracker failed in "
                  f"{self.failed}; the run goes on without it", file=sys.stderr, flush=True)
            self.ctx.reports.setdefault(self.section, {})["error"] = self.failed
            return None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


class _TrackingHooks:
    """The hook plugin of one tracked run: each epoch and stage end, to every tracker."""

    def __init__(self, trackers: list[_Guarded]):
        self.trackers = trackers

    @hookimpl
    def graphflow_epoch_end(self, ctx: RunContext, stage: Stage, epoch: int,
                            metrics: dict[str, float]) -> None:
        section = stage.section if stage is not None else None
        values = {metric_key(section, k): v for k, v in metrics.items()}
        for t in self.trackers:
            t.call("log_epoch", values, epoch)

    @hookimpl
    def graphflow_stage_end(self, ctx: RunContext, stage: Stage, seconds: float) -> None:
        for t in self.trackers:
            t.call("flush")


@contextmanager
def tracked(ctx: RunContext, record: RunRecord) -> Iterator[None]:
    """Track the run inside the block with ``ctx.config.tracks`` (nothing without any, and
    nothing on ranks other than 0). The trackers finish after the block, when ``record``
    holds the final ``run.json``; an exception from the block goes on unchanged."""
    specs = ctx.config.tracks
    if not specs or not ctx.world.is_main:
        yield
        return
    trackers = [_Guarded(spec.section, spec.build(), ctx) for spec in specs]
    for t in trackers:
        ctx.reports[t.section] = {"type": t.tracker.name}
        ctx.reports[t.section].update(t.call("start", ctx) or {})
        if "path" in ctx.reports[t.section]:  # a local store: say where it is
            ctx.add_output(Path(ctx.reports[t.section]["path"]), f"{t.tracker.name} tracker")
    hooks = _TrackingHooks(trackers)
    pm = ctx.host.pm
    name = PLUGIN_NAME if pm.get_plugin(PLUGIN_NAME) is None else f"{PLUGIN_NAME}-{id(hooks)}"
    pm.register(hooks, name=name)
    try:
        yield
    finally:
        pm.unregister(hooks)
        for t in trackers:
            t.call("flush")
            t.call("finish", ctx, record.data)
