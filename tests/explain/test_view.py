"""The HTML view of an explanation (``graphflow report`` of an explain folder): one SVG per
target, edge widths ranked as the importances, no network, and one line for a broken folder."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from graphflow.errors import ConfigError
from graphflow.experiments.report import write_report


def _explanation(folder: Path, fmt: str = "parquet") -> None:
    """Two node targets (a, b) with hand-set importances; one edge of b outside its top-k."""
    folder.mkdir(parents=True, exist_ok=True)
    table = pa.table({
        "target": ["a", "a", "a", "a", "b", "b", "b"],
        "src": ["a", "x", "y", "x", "b", "z", "w"],
        "dst": ["x", "a", "a", "y", "z", "w", "b"],
        "edge": [0, 1, 2, 3, 4, 5, 6],
        "importance": [0.9, 0.3, 0.6, 0.1, 0.2, 0.8, 0.05],
        "top_k": [True, True, True, True, True, True, False]})
    if fmt == "parquet":
        pq.write_table(table, folder / "edges.parquet")
    else:
        pcsv.write_csv(table, folder / "edges.csv")
    (folder / "explain.json").write_text(json.dumps({
        "method": "gnnexplainer", "level": "node", "targets": 2, "top_k": 3,
        "fidelity_plus": 0.5, "fidelity_minus": 0.0, "characterization": 0.667,
        "files": []}))


def _drawings(text: str) -> dict[str, list[tuple[float, float]]]:
    """Each SVG's (importance, stroke width) per line."""
    out = {}
    for target, svg in re.findall(r'<svg [^>]*data-target="([^"]+)"[^>]*>(.*?)</svg>', text):
        out[target] = [(float(imp), float(w)) for w, imp in re.findall(
            r'stroke-width="([0-9.]+)"[^>]*data-importance="([-0-9.e]+)"', svg)]
    return out


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_one_svg_per_target_with_widths_ranked_as_importances(tmp_path, fmt):
    _explanation(tmp_path / "explain", fmt)
    path, charts = write_report(tmp_path / "explain")
    text = path.read_text(encoding="utf-8")
    assert path == tmp_path / "explain" / "report.html" and charts == 0
    assert "<script" not in text and "http://" not in text.replace(
        'xmlns="http://www.w3.org/2000/svg"', "")  # self-contained, no plotly, no CDN
    drawn = _drawings(text)
    assert set(drawn) == {"a", "b"}
    # a: a-x and x-a are one line (the larger, 0.9); y-a 0.6; x-y 0.1
    assert sorted(i for i, _ in drawn["a"]) == [0.1, 0.6, 0.9]
    assert [i for i, _ in drawn["b"]] == [0.8, 0.2]  # w-b is not in b's top-k
    for lines in drawn.values():
        by_importance = sorted(lines)
        widths = [w for _, w in by_importance]
        assert widths == sorted(widths) and widths[0] < widths[-1]
    assert "gnnexplainer" in text and "characterization" in text


def test_a_run_folder_shows_its_explain_subfolder(tmp_path):
    pytest.importorskip("plotly")
    run = tmp_path / "run"
    run.mkdir()
    (run / "run.json").write_text(json.dumps({"name": "r", "config": {}, "status": "done"}))
    _explanation(run / "explain")
    path, _ = write_report(run)
    assert set(_drawings(path.read_text(encoding="utf-8"))) == {"a", "b"}


def test_an_explanation_without_its_edges_file_is_one_line(tmp_path):
    _explanation(tmp_path)
    (tmp_path / "edges.parquet").unlink()
    with pytest.raises(ConfigError, match="no edges.parquet or edges.csv"):
        write_report(tmp_path)
