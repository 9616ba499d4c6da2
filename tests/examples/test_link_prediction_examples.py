"""The link prediction examples run as documented (Cora shortened; its quality is checked in
tests/plugins/tasks/test_link_quality.py)."""

import json
from pathlib import Path

import pyarrow.parquet as pq

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_edgelist_link_prediction_writes_links_with_string_ids(cli, tmp_path):
    code, out, err = cli("run", EXAMPLES / "edgelist_link_prediction.toml", "--out-dir", tmp_path,
                         "--set", "train.epochs=3")
    assert code == 0, err
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "ok" and 0 < record["metrics"]["test_mrr"] <= 1
    links = pq.read_table(tmp_path / "links.parquet").to_pydict()
    assert links["src"][0].startswith("paper-") and set(links["split"]) == {"val", "test"}
    assert pq.read_table(tmp_path / "embeddings.parquet").num_rows > 0


def test_cora_link_prediction_runs(cli, tmp_path, planetoid_root):
    code, out, err = cli("run", EXAMPLES / "cora_link_prediction.toml", "--out-dir", tmp_path,
                         "--set", f"load.root={planetoid_root}", "--set", "train.epochs=5")
    assert code == 0, err
    record = json.loads((tmp_path / "run.json").read_text())
    assert 0.5 < record["metrics"]["test_auc"] <= 1
    assert len((tmp_path / "metrics.jsonl").read_text().splitlines()) == 5
