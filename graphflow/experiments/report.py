"""``graphflow report RUN_OR_SWEEP_DIR``: one self-contained HTML file of a run or a sweep.

For a **run** (a folder with ``run.json``): its summary, its learning curves (every figure of
``metrics.jsonl`` against the epoch, one chart per figure family and training stage:
``loss`` with ``val_loss``, ``train_acc`` with ``val_acc`` and ``test_acc``...) and its stage
timings (``run.json`` ``stages``).

For an **explanation** (a folder written by ``graphflow explain``: ``explain.json`` and its
``edges`` file), or a run with one in its ``explain/`` folder: each explained node's or
graph's top-k subgraph as inline SVG, edge widths by importance
(:mod:`graphflow.explain.view`); an explanation alone needs no plotly.

For a **sweep** (a folder written by ``graphflow sweep``: ``summary.json`` and its SQLite
study): the best trial, the optimisation history, the parameter importances, a
parallel-coordinates view, the intermediate values the pruner saw (when it had any), all
drawn by Optuna's visualisation module, and the table of trials.

The charts are plotly figures; plotly.js is written inline into the file, once, so the page
needs no network to open (it is ~5 MB for that reason). Each chart is a ``<div>`` with a
stable id (``curve-STAGE-FAMILY``, ``stage-timings``, ``optimization-history``,
``param-importances``, ``parallel-coordinates``, ``intermediate-values``) and an ``<h2>``
title. The file is written atomically; plotly is imported only here (the ``report`` extra).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.errors import ConfigError, EnvironmentProblem
from graphflow.explain.view import EXPLAIN_RECORD, explanation_html, find_explanation

RUN_RECORD = "run.json"
SWEEP_SUMMARY = "summary.json"
DEFAULT_STORAGE = "sweep.db"
PREFIXES = ("train_", "val_", "test_")


@dataclass
class Section:
    """One part of the page: a title and its HTML (a chart's ``<div>``, or a table)."""

    id: str
    title: str
    body: str


def _plotly() -> Any:
    try:
        import plotly
        import plotly.graph_objects  # noqa: F401
    except ImportError:
        raise EnvironmentProblem("graphflow report needs plotly: pip install "
                                 "'graphflow[report]'") from None
    return plotly


def kind_of(folder: Path) -> str:
    """``"run"``, ``"sweep"`` or ``"explanation"``; a folder that is none is one
    ``ConfigError``."""
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such folder; give a run's or a sweep's folder")
    if (folder / RUN_RECORD).is_file():
        return "run"
    if (folder / SWEEP_SUMMARY).is_file() or (folder / DEFAULT_STORAGE).is_file():
        return "sweep"
    if (folder / EXPLAIN_RECORD).is_file():
        return "explanation"
    raise ConfigError(f"{folder}: neither a run (no {RUN_RECORD}) nor a sweep (no "
                      f"{SWEEP_SUMMARY} or {DEFAULT_STORAGE}) nor an explanation (no "
                      f"{EXPLAIN_RECORD}); give a folder written by graphflow run, "
                      f"graphflow sweep or graphflow explain")


def write_report(folder: Path, out: Path | None = None) -> tuple[Path, int]:
    """Write the report of ``folder`` (default ``folder/report.html``); returns the file and
    the number of charts in it."""
    kind = kind_of(folder)
    if kind == "explanation":
        title, sections = f"graphflow report: explanation {folder.name}", []
        plotly_js = ""
    else:
        plotly = _plotly()
        title, sections = run_sections(folder) if kind == "run" else sweep_sections(folder)
        plotly_js = plotly.offline.get_plotlyjs()
    found = find_explanation(folder)
    if found is not None:
        info, body = explanation_html(found)
        sections.append(Section("explanation", f"Explanation ({info.get('method')})",
                                table([info]) + body))
    out = out or folder / "report.html"
    from graphflow.io.atomic import write_text

    write_text(out, page(title, sections, plotly_js))
    return out, sum('class="plotly-graph-div"' in s.body for s in sections)


# --- a run ------------------------------------------------------------------------------

def read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: unreadable ({type(exc).__name__}); restore the file or "
                          f"give another folder") from None


def read_epochs(path: Path) -> list[dict[str, Any]]:
    """The lines of ``metrics.jsonl`` (none when the file is missing); a damaged line (a
    run killed while writing it) is skipped."""
    if not path.is_file():
        return []
    rows = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(row, dict) and isinstance(row.get("epoch"), int):
            rows.append(row)
    return rows


def family(key: str) -> str:
    """The chart a figure goes to: its name without ``train_``/``val_``/``test_`` (``loss``
    holds ``loss`` and ``val_loss``), and ``seconds`` for timings (``..._s``)."""
    if key.endswith("_s") or key == "seconds":
        return "seconds"
    for prefix in PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix):]
    return key


def curves(rows: Iterable[dict[str, Any]]) -> dict[tuple[str, str], dict[str, tuple[list[int],
                                                                                  list[float]]]]:
    """``{(stage, family): {figure: (epochs, values)}}`` from ``metrics.jsonl`` rows."""
    out: dict[tuple[str, str], dict[str, tuple[list[int], list[float]]]] = {}
    for row in rows:
        stage = str(row.get("stage") or "train")
        for key, value in row.items():
            if key in ("stage", "epoch") or not isinstance(value, (int, float)) \
                    or isinstance(value, bool):
                continue
            xs, ys = out.setdefault((stage, family(key)), {}).setdefault(key, ([], []))
            xs.append(int(row["epoch"]))
            ys.append(float(value))
    return out


def run_sections(folder: Path) -> tuple[str, list[Section]]:
    import plotly.graph_objects as go

    record = read_json(folder / RUN_RECORD)
    if not isinstance(record, dict) or "config" not in record:
        raise ConfigError(f"{folder / RUN_RECORD}: not a graphflow run record (no \"config\")")
    name = str(record.get("name", folder.name))
    info = {"folder": str(folder), "status": record.get("status"),
            "started": record.get("started"), "seconds": record.get("seconds"),
            "device": record.get("device"), "config hash": record.get("config_hash")}
    sections = [Section("run", f"Run {name}", table([info]) + "<h3>Final metrics</h3>"
                        + table([record.get("metrics") or {}]))]
    found = curves(read_epochs(folder / "metrics.jsonl"))
    for (stage, fam), series in found.items():
        fig = go.Figure([go.Scatter(x=xs, y=ys, mode="lines+markers", name=key)
                         for key, (xs, ys) in series.items()])
        fig.update_layout(title=f"{stage}: {fam}", xaxis_title="epoch", yaxis_title=fam,
                          height=380)
        fid = "curve-" + slug(f"{stage}-{fam}")
        sections.append(Section(fid, f"Learning curve: {stage}, {fam}", chart(fig, fid)))
    if not found:
        sections.append(Section("curves", "Learning curves",
                                "<p>No epoch figures (metrics.jsonl is missing or empty).</p>"))
    stages = [s for s in record.get("stages") or [] if isinstance(s, dict)]
    if stages:
        labels = [f"{s.get('section')} ({s.get('type')})" for s in stages]
        seconds = [float(s.get("seconds") or 0.0) for s in stages]
        fig = go.Figure(go.Bar(x=seconds, y=labels, orientation="h",
                               text=[f"{v:.3g} s" for v in seconds], textposition="auto"))
        fig.update_layout(title="stage timings", xaxis_title="seconds",
                          yaxis={"autorange": "reversed"},
                          height=max(220, 60 + 40 * len(stages)))
        sections.append(Section("stage-timings", "Stage timings",
                                chart(fig, "stage-timings") + table(
                                    [{k: v for k, v in s.items() if k != "cores"}
                                     for s in stages])))
    return f"graphflow report: run {name}", sections


# --- a sweep ----------------------------------------------------------------------------

def load_study(folder: Path) -> tuple[Any, dict[str, Any]]:
    """The sweep's Optuna study (read from its SQLite file) and its ``summary.json``."""
    try:
        import optuna
    except ImportError:
        raise EnvironmentProblem("graphflow report of a sweep needs Optuna: pip install "
                                 "'graphflow[sweep]'") from None
    summary = read_json(folder / SWEEP_SUMMARY) if (folder / SWEEP_SUMMARY).is_file() else {}
    storage_path = folder / str(summary.get("storage") or DEFAULT_STORAGE)
    if not storage_path.is_file():
        raise ConfigError(f"{storage_path}: the sweep's study is missing; give the folder "
                          f"graphflow sweep wrote (with its {DEFAULT_STORAGE})")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = f"sqlite:///{storage_path.resolve()}"
    try:
        names = optuna.get_all_study_names(storage)
    except Exception as exc:  # not a database, or not Optuna's
        raise ConfigError(f"{storage_path}: not an Optuna study ({type(exc).__name__}); give "
                          f"the folder graphflow sweep wrote") from None
    name = summary.get("study") if summary.get("study") in names else (names or [None])[0]
    if name is None:
        raise ConfigError(f"{storage_path}: holds no study; run graphflow sweep first")
    return optuna.load_study(study_name=name, storage=storage), summary


def sweep_sections(folder: Path) -> tuple[str, list[Section]]:
    import optuna
    import optuna.visualization as vis

    study, summary = load_study(folder)
    metric = str(study.user_attrs.get("metric") or summary.get("metric") or "value")
    states = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)
    trials = study.get_trials(deepcopy=False, states=states)
    complete = [t for t in trials if t.state == optuna.trial.TrialState.COMPLETE]
    head = {"study": study.study_name, "direction": study.direction.name.lower(),
            "metric": metric, "trials": len(trials), "complete": len(complete),
            "pruned": len(trials) - len(complete)}
    if complete:
        best = study.best_trial
        test_key = "test_" + metric[4:] if metric.startswith("val_") else metric
        head.update({"best trial": best.number, f"best {metric}": best.value,
                     f"its {test_key}": best.user_attrs.get("test"),
                     "best params": json.dumps(best.params)})
    sections = [Section("sweep", f"Sweep {study.study_name}", table([head]))]
    plots = [("optimization-history", "Optimisation history", vis.plot_optimization_history,
              {"target_name": metric}),
             ("param-importances", "Parameter importances", vis.plot_param_importances,
              {"target_name": metric}),
             ("parallel-coordinates", "Parallel coordinates", vis.plot_parallel_coordinate,
              {"target_name": metric})]
    if any(t.intermediate_values for t in trials):
        plots.append(("intermediate-values", f"Intermediate values ({metric} per epoch, as "
                      "the pruner saw them)", vis.plot_intermediate_values, {}))
    for fid, title, plot, kwargs in plots:
        try:
            fig = plot(study, **kwargs)
        except (ValueError, RuntimeError) as exc:  # e.g. importances of one trial
            sections.append(Section(fid, title, f"<p>Not drawn: {html.escape(str(exc))}</p>"))
            continue
        fig.update_layout(height=450)
        sections.append(Section(fid, title, chart(fig, fid)))
    rows = []
    for t in trials:
        row = {"trial": t.number, "state": t.state.name.lower(), metric: t.value,
               f"{metric}_std": t.user_attrs.get("std"), "test": t.user_attrs.get("test"),
               "seconds": t.user_attrs.get("seconds")}
        row.update({f"params.{k}": v for k, v in t.params.items()})
        rows.append(row)
    sections.append(Section("trials", "Trials", table(rows) if rows else "<p>No trials "
                                                                          "finished yet.</p>"))
    return f"graphflow report: sweep {study.study_name}", sections


# --- the page ---------------------------------------------------------------------------

def slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]+", "-", text).strip("-").lower() or "x"


def chart(fig: Any, div_id: str) -> str:
    """A figure as a ``<div>`` and its script (plotly.js itself is in the page's head)."""
    return fig.to_html(full_html=False, include_plotlyjs=False, div_id=div_id,
                       config={"responsive": True})


def cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (dict, list)):
        return html.escape(json.dumps(value, default=str))
    return "" if value is None else html.escape(str(value))


def table(rows: list[dict[str, Any]]) -> str:
    """Rows (dicts) as an HTML table; columns in order of first appearance."""
    columns: list[str] = []
    for row in rows:
        columns.extend(k for k in row if k not in columns)
    head = "".join(f"<th>{html.escape(str(c))}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{cell(r.get(c))}</td>" for c in columns) + "</tr>"
                   for r in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


STYLE = """
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; color: #222; }
table { border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f3f3f3; }
nav a { margin-right: 1em; }
.explanations { display: flex; flex-wrap: wrap; gap: 1em; }
figure { margin: 0; } figcaption { font-size: 0.85em; text-align: center; }
"""


def page(title: str, sections: list[Section], plotly_js: str) -> str:
    nav = "".join(f'<a href="#s-{s.id}">{html.escape(s.title)}</a>' for s in sections)
    body = "\n".join(f'<section id="s-{s.id}"><h2>{html.escape(s.title)}</h2>\n{s.body}'
                     f"</section>" for s in sections)
    return (f"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>{html.escape(title)}</title><style>{STYLE}</style>\n"
            + (f"<script type=\"text/javascript\">{plotly_js}</script>\n" if plotly_js else "")
            + "</head>\n"
            f"<body><h1>{html.escape(title)}</h1><nav>{nav}</nav>\n{body}\n</body></html>\n")
