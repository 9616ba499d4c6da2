"""examples/edgelist_gcn.toml end to end through the CLI: the predictions keep the paper ids."""

from pathlib import Path

import pyarrow.parquet as pq

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "edgelist_gcn.toml"


def test_example_runs_and_predictions_carry_the_string_ids(cli, tmp_path):
    out_dir = tmp_path / "run"
    pred, logits = out_dir / "predictions.parquet", out_dir / "logits.parquet"
    code, out, err = cli("run", EXAMPLE, "--out-dir", out_dir, "--quiet",
                         "--set", "train.epochs=10")
    assert code == 0, err
    assert str(pred) in out
    nodes = pq.read_table(EXAMPLE.parent / "data" / "papers_nodes.parquet")
    table = pq.read_table(pred)
    assert table.column("id").to_pylist() == nodes.column("id").to_pylist()
    assert set(table.column("class").to_pylist()) <= set(nodes.column("label").to_pylist())
    assert pq.read_table(logits).column("id").to_pylist()[0] == "paper-0000"
