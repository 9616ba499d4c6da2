"""``graphflow report``: one self-contained HTML file whose charts hold the run's or the
sweep's numbers; bad input is one line."""

import json
import re

import pytest

pytest.importorskip("plotly")

PIPELINE = """
[pipeline]
name = "rep"
[load]
type = "synthetic"
nodes = 90
classes = 3
features = 6
[model]
type = "gcn"
hidden = 4
[train]
type = "node_classification"
epochs = 3
checkpoint = false
"""
SWEEP = """
[sweep]
metric = "val_acc"
trials = 3
sampler = "random"
pruner = "median"
[sweep.params]
"model.hidden" = [4, 8]
"train.lr" = { low = 0.001, high = 0.1, log = true }
"""


def figures(html: str) -> dict[str, list[dict]]:
    """Each chart's traces, from the ``Plotly.newPlot("ID", [TRACES], ...)`` calls."""
    found = {}
    for match in re.finditer(r'Plotly\.newPlot\(\s*"([^"]+)",\s*(\[.*?\]),\s*\{', html, re.S):
        found[match.group(1)] = json.loads(match.group(2))
    return found


def self_contained(html: str) -> None:
    assert "<script src=" not in html and "cdn.plot.ly" not in html.replace(
        "https://cdn.plot.ly", "")  # plotly.js's own text may name its CDN, never load it
    assert "<script src=" not in html
    assert len(html) > 1_000_000 and "Plotly.newPlot" in html  # plotly.js itself, inline


def test_a_run_report_has_its_learning_curves_and_stage_timings(run_toml, tmp_path, cli):
    result = run_toml(PIPELINE)
    out_dir = tmp_path / "out"
    code, out, err = cli("report", out_dir)
    assert code == 0, err
    path = out_dir / "report.html"
    assert f"wrote: {path}" in out
    html = path.read_text(encoding="utf-8")
    self_contained(html)
    charts = figures(html)
    rows = [json.loads(line) for line in (out_dir / "metrics.jsonl").read_text().splitlines()]
    stage = rows[0]["stage"].replace(".", "-")
    assert {f"curve-{stage}-loss", f"curve-{stage}-acc", "stage-timings"} <= set(charts)
    val = next(t for t in charts[f"curve-{stage}-acc"] if t["name"] == "val_acc")
    assert val["x"] == [r["epoch"] for r in rows]
    assert val["y"] == [r["val_acc"] for r in rows]  # the numbers of metrics.jsonl
    bars = charts["stage-timings"][0]
    assert bars["x"] == [s["seconds"] for s in result.record["stages"]]
    assert ">Stage timings</h2>" in html and ">Learning curve: " in html


def test_a_sweep_report_has_history_importances_parallel_coordinates_and_trials(
        tmp_path, cli):
    path = tmp_path / "sweep.toml"
    path.write_text(PIPELINE + SWEEP)
    root = tmp_path / "s"
    code, out, err = cli("sweep", path, "--out-dir", root)
    assert code == 0, err
    target = tmp_path / "elsewhere" / "sweep.html"
    code, out, err = cli("report", root, "--out", target)
    assert code == 0, err
    assert f"wrote: {target}" in out and not (root / "report.html").exists()
    html = target.read_text(encoding="utf-8")
    self_contained(html)
    charts = figures(html)
    assert {"optimization-history", "param-importances", "parallel-coordinates",
            "intermediate-values"} <= set(charts)
    summary = json.loads((root / "summary.json").read_text())
    history = charts["optimization-history"][0]  # the objective values, trial by trial
    import pyarrow.parquet as pq

    table = pq.read_table(root / "trials.parquet").to_pylist()
    assert sorted(history["y"]) == sorted(r["val_acc"] for r in table
                                          if r["state"] == "complete")
    importances = charts["param-importances"][0]
    assert set(importances["y"]) == {"model.hidden", "train.lr"}
    assert ">Trials</h2>" in html and f"<td>{summary['best_trial']}</td>" in html


def test_a_folder_that_is_neither_a_run_nor_a_sweep_is_one_line(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    code, out, err = cli("report", tmp_path / "empty")
    assert code == 1 and len(err.splitlines()) == 1, err
    assert "neither a run (no run.json) nor a sweep" in err
    code, out, err = cli("report", tmp_path / "missing")
    assert code == 1 and "no such folder" in err and len(err.splitlines()) == 1
