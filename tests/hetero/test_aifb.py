"""examples/aifb_rgcn.toml trains R-GCN on AIFB (one seed; the 5-seed figure is in
docs/heterogeneous.md)."""

from pathlib import Path

import pyarrow.parquet as pq

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "aifb_rgcn.toml"


def test_aifb_rgcn_example(run_toml, shared_data):
    root = shared_data("aifb")
    text = EXAMPLE.read_text().replace("../../shared/data/aifb", str(root))
    result = run_toml(text, overrides=["pipeline.cores=1"])
    metrics = result.ctx.metrics
    assert metrics["test_acc"] >= 0.9  # the paper: 0.9583
    table = pq.read_table(result.out_dir / "predictions.parquet")
    assert table.num_rows == 237  # every Personen node, by its IRI
    assert table.column("id")[0].as_py().startswith("http://www.aifb.uni-karlsruhe.de/Personen/")
