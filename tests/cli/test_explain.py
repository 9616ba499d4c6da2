"""``graphflow explain``: a node bundle explained end to end, and its one-line refusals."""

from __future__ import annotations

import json

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

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
layers = 3
hidden = 8

[train]
type = "node_classification"
epochs = 3
"""


@pytest.fixture(scope="module")
def motif_run(tmp_path_factory):
    from graphflow.cli.main import main

    tmp = tmp_path_factory.mktemp("explain")
    (tmp / "motifs.toml").write_text(MOTIFS)
    assert main(["run", str(tmp / "motifs.toml"), "--out-dir", str(tmp / "run"),
                 "--quiet"]) == 0
    (tmp / "nodes.txt").write_text("300\n305\n")
    return tmp


def test_gnnexplainer_from_a_bundle(motif_run, cli, tmp_path):
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", motif_run / "nodes.txt", "--epochs", "20",
                         "--out", tmp_path / "ex", "--top-k", "3", "--option", "batch=1")
    assert code == 0, err
    edges = pq.read_table(tmp_path / "ex" / "edges.parquet").to_pydict()
    assert set(edges["target"]) == {300, 305}
    assert all(0.0 <= v <= 1.0 for v in edges["importance"])
    # each target's top-k: its 3 most important edges, and node 300's in-edges are listed
    assert sum(edges["top_k"]) == 6
    assert any(d == 300 for t, d in zip(edges["target"], edges["dst"]) if t == 300)
    feats = pq.read_table(tmp_path / "ex" / "features.parquet").to_pydict()
    assert len(feats["importance"]) == 2 * 4
    summary = json.loads((tmp_path / "ex" / "explain.json").read_text())
    assert 0.0 <= summary["fidelity_plus"] <= 1.0 and 0.0 <= summary["fidelity_minus"] <= 1.0
    assert "fidelity+" in out


def test_integrated_gradients_in_csv(motif_run, cli, tmp_path):
    pytest.importorskip("captum")
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", motif_run / "nodes.txt", "--method", "ig", "--steps", "8",
                         "--format", "csv", "--out", tmp_path / "ig")
    assert code == 0, err
    edges = pcsv.read_csv(tmp_path / "ig" / "edges.csv").to_pydict()
    assert set(edges["target"]) == {300, 305} and len(edges["edge"]) > 0


def test_unknown_ids_are_one_line(motif_run, cli, tmp_path):
    (tmp_path / "bad.txt").write_text("300\n99999\n")
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", tmp_path / "bad.txt", "--out", tmp_path / "ex")
    assert code == 1 and "99999" in err and "is not a node of the graph" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_a_data_pipeline_without_load_is_one_line(motif_run, cli, tmp_path):
    (tmp_path / "empty.toml").write_text('[pipeline]\nname = "x"\n')
    code, out, err = cli("explain", motif_run / "run", "--data", tmp_path / "empty.toml",
                         "--nodes", motif_run / "nodes.txt", "--out", tmp_path / "ex")
    assert code == 1 and "missing [load]" in err and "Traceback" not in err


def test_methods_refuse_models_they_cannot_explain(host):
    from graphflow.errors import ConfigError, UnknownComponentError
    from graphflow.explain.run import check_method

    assert check_method(host.registry, "ig", "node").name == "ig"
    with pytest.raises(ConfigError, match="cannot explain a graph model; no method explains "
                                          "graph models yet; node models: gnnexplainer"):
        check_method(host.registry, "gnnexplainer", "graph")
    with pytest.raises(UnknownComponentError, match='unknown explainer type "gnnexplainr"'):
        check_method(host.registry, "gnnexplainr", "node")


def test_method_options_are_checked(motif_run, cli, tmp_path):
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", motif_run / "nodes.txt", "--method", "saliency",
                         "--epochs", "5", "--out", tmp_path / "ex")
    assert code == 1 and "unknown option for 'saliency'" in err and "Traceback" not in err
