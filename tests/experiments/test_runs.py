"""``graphflow runs``: the table of runs, --compare, --json, and bad input."""

import json

PIPELINE = """
[pipeline]
name = "{name}"
[load]
type = "synthetic"
nodes = 90
classes = 3
features = 6
[model]
type = "gcn"
hidden = {hidden}
[train]
type = "node_classification"
epochs = 2
"""


def two_runs(run_toml, tmp_path):
    a = run_toml(PIPELINE.format(name="a", hidden=4), out_dir=tmp_path / "runs" / "a")
    b = run_toml(PIPELINE.format(name="b", hidden=8), out_dir=tmp_path / "runs" / "b")
    return a, b


def test_runs_lists_what_differs_and_the_metrics(run_toml, tmp_path, cli):
    a, b = two_runs(run_toml, tmp_path)
    (tmp_path / "runs" / "a" / "copy").mkdir()  # a tracker's copy inside a run is not a run
    (tmp_path / "runs" / "a" / "copy" / "run.json").write_text("{}")
    code, out, err = cli("runs", tmp_path / "runs", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert [r["run"] for r in data["runs"]] == ["a", "b"]
    assert data["differing"] == ["model.hidden", "pipeline.name"]
    assert [r["config"]["model.hidden"] for r in data["runs"]] == [4, 8]
    assert data["runs"][1]["metrics"]["test_acc"] == b.record["metrics"]["test_acc"]
    assert data["runs"][0]["status"] == "ok"
    code, out, err = cli("runs", tmp_path / "runs")
    assert code == 0, err
    header, rule, row_a, row_b = out.splitlines()
    assert header.split() == ["run", "name", "status", "started", "model.hidden",
                              "pipeline.name", *a.record["metrics"]]
    assert row_a.split()[:3] == ["a", "a", "ok"] and row_b.split()[5] == "8"
    assert f"{a.record['metrics']['test_acc']:.4g}" in row_a

    code, out, err = cli("runs", tmp_path / "runs", "--compare", "a", "b", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["config"] == {"model.hidden": [4, 8], "pipeline.name": ["a", "b"]}
    assert data["metrics"]["test_acc"] == [a.record["metrics"]["test_acc"],
                                           b.record["metrics"]["test_acc"]]
    code, out, err = cli("runs", "--compare", tmp_path / "runs" / "a", tmp_path / "runs" / "b")
    assert code == 0, err
    assert ["model.hidden", "4", "8"] in [line.split() for line in out.splitlines()]
    delta = b.record["metrics"]["test_acc"] - a.record["metrics"]["test_acc"]
    assert f"{delta:+.4g}" in out


def test_bad_input_is_one_line(tmp_path, cli):
    code, out, err = cli("runs", tmp_path / "nowhere")
    assert code == 1 and "nowhere: no such folder" in err and len(err.splitlines()) == 1
    (tmp_path / "empty").mkdir()
    code, out, err = cli("runs", tmp_path / "empty")
    assert code == 1 and "no run.json found" in err and len(err.splitlines()) == 1
    (tmp_path / "bad" / "x").mkdir(parents=True)
    (tmp_path / "bad" / "x" / "run.json").write_text('{"name": ')
    code, out, err = cli("runs", tmp_path / "bad")
    assert code == 1 and len(err.splitlines()) == 1
    assert "x/run.json: unreadable run record (JSONDecodeError" in err
    (tmp_path / "bad" / "x" / "run.json").write_text('[1, 2]')
    code, out, err = cli("runs", tmp_path / "bad")
    assert code == 1 and "not a graphflow run record" in err
    code, out, err = cli("runs", "--compare", tmp_path / "empty", tmp_path / "bad" / "x")
    assert code == 1 and "empty: no run.json" in err and len(err.splitlines()) == 1
