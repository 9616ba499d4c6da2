"""The ``[explain]`` stage: a run explains its trained model after training (end to end), and
what it can check is refused when the pipeline is read, in one line."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest

from graphflow.config import load_config
from graphflow.errors import ConfigError

MOTIFS = """
[pipeline]
name = "motifs"
seed = 0

[load]
type = "synthetic"
kind = "ba_shapes"
motifs = 10
features = 4
train = 0.8
val = 0.1
test = 0.1

[model]
type = "gcn"
layers = 2
hidden = 8

[train]
type = "node_classification"
epochs = 2

[[export]]
type = "csv"
what = "predictions"

[explain]
nodes = "nodes.txt"
top_k = 3
epochs = 5
"""


@pytest.fixture
def pipeline(tmp_path):
    (tmp_path / "nodes.txt").write_text("300\n305\n")
    (tmp_path / "pairs.txt").write_text("300 301\n")
    (tmp_path / "p.toml").write_text(MOTIFS)
    return tmp_path / "p.toml"


def test_a_run_explains_its_model_after_training(pipeline, cli, tmp_path):
    code, out, err = cli("run", pipeline, "--out-dir", tmp_path / "run")
    assert code == 0, err
    folder = tmp_path / "run" / "explain"
    edges = pq.read_table(folder / "edges.parquet").to_pydict()
    assert set(edges["target"]) == {300, 305} and sum(edges["top_k"]) == 6
    assert (folder / "features.parquet").is_file()
    summary = json.loads((folder / "explain.json").read_text())
    assert summary["method"] == "gnnexplainer" and summary["targets"] == 2
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    sections = [s["section"] for s in record["stages"]]
    assert sections[-1] == "explain" and sections.index("train") < sections.index("explain")
    assert record["stages"][-1]["type"] == "gnnexplainer" and record["stages"][-1]["seconds"] > 0
    written = {o["path"]: o["what"] for o in record["outputs"]}
    assert written[str(folder / "edges.parquet")] == "explanation"
    assert written[str(folder / "explain.json")] == "explanation summary"
    assert record["reports"]["explain"]["level"] == "node"
    assert record["config"]["explain"]["epochs"] == 5  # the method's options, resolved
    assert record["config"]["explain"]["lr"] == 0.01


@pytest.mark.parametrize("overrides, message", [
    (['explain.method="gnnexplaner"'],
     'explain.method: unknown explainer type "gnnexplaner" (did you mean "gnnexplainer"?)'),
    (["explain.epoch=3"], 'explain.epoch: unknown key (did you mean "epochs"?)'),
    (['explain.nodes="absent.txt"'], "[explain] nodes = "),
    (['train.type="link_prediction"'],
     "[explain] nodes = FILE: the model of [train] link_prediction is a link model; name the "
     "node pairs to explain with pairs = FILE"),
    (['explain.graphs="nodes.txt"'], "[explain] names the targets with one of nodes = FILE"),
    (['train.type="link_prediction"', 'explain.method="pgexplainer"', "pairs"],
     '[explain] method = "pgexplainer" cannot explain a link model; methods that can: '
     "gnnexplainer, ig, saliency"),
    (['explain.stage="train.3"'], '[explain] stage = "train.3": no such training stage'),
    (['model.input_encoder="atom"', 'explain.method="ig"'],
     '[explain] method = "ig": the model embeds its input features as categories'),
])
def test_bad_explain_tables_are_refused_when_read(pipeline, host, overrides, message):
    if "pairs" in overrides:  # pairs instead of nodes
        text = pipeline.read_text().replace('nodes = "nodes.txt"', 'pairs = "pairs.txt"')
        pipeline.write_text(text)
        overrides = [o for o in overrides if o != "pairs"]
    with pytest.raises(ConfigError) as info:
        load_config(pipeline, host.registry, overrides=overrides)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_ids_outside_the_graph_stop_the_stage_in_one_line(pipeline, cli, tmp_path):
    (tmp_path / "nodes.txt").write_text("300\n99999\n")
    code, out, err = cli("run", pipeline, "--out-dir", tmp_path / "run", "--quiet")
    assert code == 1 and "[explain] gnnexplainer:" in err and "99999" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
