"""``graphflow runs``: the runs under a folder, read from their ``run.json``, side by side.

A run is a folder holding ``run.json``; :func:`find_runs` looks below the folder it is given
and does not descend into a run (a tracker's copies of ``run.json`` stay unseen). The table
shows what tells runs apart: the configuration keys whose values differ between them (dotted,
as ``--set`` takes them) and the final metrics.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.errors import ConfigError
from graphflow.experiments.tracking import params

RECORD = "run.json"
IGNORED_KEYS = ("pipeline.out_dir", "track.")
"""Keys (or prefixes, ending in '.') that tell nothing about a run's results: its folder,
and the trackers that recorded it."""


@dataclass
class Run:
    """One run: its folder and its record."""

    path: Path
    record: dict[str, Any]

    @property
    def config(self) -> dict[str, Any]:
        flat = params(self.record.get("config") or {})
        return {k: v for k, v in flat.items()
                if not any(k == i or (i.endswith(".") and k.startswith(i))
                           for i in IGNORED_KEYS)}

    @property
    def metrics(self) -> dict[str, Any]:
        return dict(self.record.get("metrics") or {})

    def get(self, key: str) -> Any:
        return self.record.get(key)


def read_run(path: Path) -> Run:
    """The run of folder ``path`` (or of the ``run.json`` file itself)."""
    file = path if path.name == RECORD and path.is_file() else path / RECORD
    if not file.is_file():
        raise ConfigError(f"{path}: no {RECORD} (not a graphflow run folder)")
    try:
        record = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{file}: unreadable run record ({type(exc).__name__}: "
                          f"{str(exc).splitlines()[0] if str(exc) else ''}); remove the folder "
                          f"or restore the file") from None
    if not isinstance(record, dict) or "config" not in record:
        raise ConfigError(f"{file}: not a graphflow run record (no \"config\"); remove the "
                          f"folder or restore the file")
    return Run(file.parent, record)


def find_runs(root: Path) -> list[Run]:
    """Every run at or below ``root``, oldest first."""
    if not root.exists():
        raise ConfigError(f"{root}: no such folder; give the folder of your runs "
                          f"(default runs/)")
    if (root / RECORD).is_file() or root.name == RECORD:
        return [read_run(root)]
    found: list[Path] = []
    for folder, dirs, files in os.walk(root):
        if RECORD in files:
            found.append(Path(folder))
            dirs.clear()  # a run's own subfolders (tracker stores) hold no other runs
        dirs.sort()
    if not found:
        raise ConfigError(f"{root}: no {RECORD} found below it; runs write one in their "
                          f"out_dir (graphflow run PIPELINE.toml)")
    runs = [read_run(f) for f in found]
    return sorted(runs, key=lambda r: (str(r.get("started") or ""), str(r.path)))


def differing_keys(runs: list[Run]) -> list[str]:
    """Configuration keys whose value is not the same in every run (absent counts)."""
    configs = [r.config for r in runs]
    keys = sorted({k for c in configs for k in c})
    missing = object()
    return [k for k in keys
            if len({json.dumps(c.get(k, missing), default=str) for c in configs}) > 1]


def metric_keys(runs: list[Run]) -> list[str]:
    keys: list[str] = []
    for r in runs:
        keys += [k for k in r.metrics if k not in keys]
    return keys


def table(runs: list[Run], root: Path) -> dict[str, Any]:
    """The data of ``graphflow runs --json``."""
    diff, metrics = differing_keys(runs), metric_keys(runs)
    return {"runs": [{"path": str(r.path), "run": _label(r.path, root),
                      "name": r.get("name"), "status": r.get("status"),
                      "started": r.get("started"), "seconds": r.get("seconds"),
                      "config": {k: r.config.get(k) for k in diff},
                      "metrics": {k: r.metrics.get(k) for k in metrics}} for r in runs],
            "differing": diff, "metrics": metrics}


def compare(a: Run, b: Run) -> dict[str, Any]:
    """The data of ``graphflow runs --compare A B --json``."""
    diff = differing_keys([a, b])
    metrics = metric_keys([a, b])
    head = {k: [a.get(k), b.get(k)] for k in ("name", "status", "started", "seconds",
                                              "device", "config_hash")}
    return {"a": str(a.path), "b": str(b.path), "run": head,
            "config": {k: [a.config.get(k), b.config.get(k)] for k in diff},
            "metrics": {k: [a.metrics.get(k), b.metrics.get(k)] for k in metrics}}


def _label(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root.resolve())
    except ValueError:
        return str(path)
    return str(rel) if str(rel) != "." else path.name


def cell(value: Any) -> str:
    """A value as the table shows it: numbers to 4 significant digits, absent (or None) as
    '-'."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, str):
        return value
    return json.dumps(value)


def render(rows: list[list[str]]) -> str:
    """Rows of cells as aligned columns, the first row a header."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def render_table(data: dict[str, Any]) -> str:
    header = ["run", "name", "status", "started", *data["differing"], *data["metrics"]]
    rows = [header]
    for r in data["runs"]:
        rows.append([r["run"], cell(r["name"]), cell(r["status"]),
                     cell((r["started"] or "")[:19].replace("T", " ")),
                     *[cell(r["config"][k]) for k in data["differing"]],
                     *[cell(r["metrics"][k]) for k in data["metrics"]]])
    return render(rows)


def render_compare(data: dict[str, Any]) -> str:
    out = [render([["", "A", "B"]] + [[k, cell(a), cell(b)] for k, (a, b) in
                                      data["run"].items()])]
    out.append("")
    if data["config"]:
        out.append(render([["config", "A", "B"]] + [[k, cell(a), cell(b)] for k, (a, b) in
                                                    data["config"].items()]))
    else:
        out.append("config: identical")
    out.append("")
    if data["metrics"]:
        rows = [["metric", "A", "B", "B - A"]]
        for k, (a, b) in data["metrics"].items():
            both = isinstance(a, (int, float)) and isinstance(b, (int, float))
            rows.append([k, cell(a), cell(b), f"{b - a:+.4g}" if both else "-"])
        out.append(render(rows))
    else:
        out.append("metrics: none")
    return f"A: {data['a']}\nB: {data['b']}\n\n" + "\n".join(out)
