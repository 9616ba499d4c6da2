"""The shipped examples run end to end (the Planetoid ones shortened; their quality is
checked in test_planetoid_quality.py)."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def test_sbm_gcn_runs_in_seconds_and_learns(cli, tmp_path):
    predictions = tmp_path / "predictions.parquet"  # the exporter's default: out_dir
    code, out, err = cli("run", EXAMPLES / "sbm_gcn.toml", "--out-dir", tmp_path)
    assert code == 0, err
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "ok"
    assert record["metrics"]["test_acc"] > 0.9
    assert (tmp_path / "checkpoint.pt").exists()
    assert pq.read_metadata(predictions).num_rows == 2000


@pytest.mark.parametrize("example, epochs", [("cora_gcn.toml", 5), ("citeseer_gat.toml", 3)])
def test_planetoid_examples_run(cli, tmp_path, planetoid_root, example, epochs):
    code, out, err = cli("run", EXAMPLES / example, "--out-dir", tmp_path,
                         "--set", f"load.root={planetoid_root}",
                         "--set", f"train.epochs={epochs}")
    assert code == 0, err
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["status"] == "ok" and 0 < record["metrics"]["test_acc"] <= 1
    lines = (tmp_path / "metrics.jsonl").read_text().splitlines()
    assert len(lines) == epochs


def test_planetoid_examples_point_at_the_shared_files():
    # The checkout's examples resolve root to ../../shared/data/planetoid beside the repo.
    for example in ("cora_gcn.toml", "citeseer_gat.toml"):
        text = (EXAMPLES / example).read_text()
        assert 'root = "../../shared/data/planetoid"' in text
