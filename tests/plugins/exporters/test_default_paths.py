"""Without `path`, exporters write into the run's out_dir as <what>.<ext>."""

PIPELINE = """
[pipeline]
name = "defaults"

[load]
type = "synthetic"
nodes = 60
classes = 2
features = 4

[model]
type = "gcn"

[train]
type = "node_classification"
epochs = 2
checkpoint = false

[[export]]
type = "parquet"
what = "predictions"

[[export]]
type = "npy"
what = "logits"

[[export]]
type = "csv"
what = "graph"

[[export]]
type = "pt"
what = "predictions"

[[export]]
type = "dgl"
"""


def test_outputs_land_in_out_dir(run_toml, tmp_path):
    result = run_toml(PIPELINE)
    out = tmp_path / "out"
    written = {o["path"] for o in result.record["outputs"]}
    expected = {out / "predictions.parquet", out / "logits.npy", out / "logits.ids.npy",
                out / "graph" / "edges.csv", out / "graph" / "nodes.csv",
                out / "predictions.pt", out / "graph.bin", out / "run.json", out / "metrics.jsonl",
                out / "model"}  # the trained model's bundle (a folder: docs/inference.md)
    assert written == {str(p) for p in expected}
    assert all(p.is_file() for p in expected if p.name != "model")
    assert (out / "model" / "bundle.json").is_file()


def test_an_explicit_relative_path_resolves_against_the_pipeline_file(run_toml, tmp_path):
    text = PIPELINE.split("[[export]]")[0] + '[[export]]\ntype = "npy"\nwhat = "logits"\npath = "x/l.npy"\n'
    result = run_toml(text)
    assert (tmp_path / "x" / "l.npy").is_file()
    assert str(tmp_path / "x" / "l.npy") in {o["path"] for o in result.record["outputs"]}
