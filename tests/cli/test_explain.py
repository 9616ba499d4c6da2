"""``graphflow explain``: node bundles (full-batch and neighbour-sampled) and a graph bundle
explained end to end, and the one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

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


SAMPLED = MOTIFS.replace('type = "gcn"\nlayers = 3', 'type = "sage"\nlayers = 2').replace(
    "epochs = 3", """epochs = 1

[train.sample]
type = "neighbor"
fanouts = [3, 3]
batch_size = 64""")

RINGS = f"""
[pipeline]
name = "rings"
seed = 0

[load]
type = "tu"
path = "{(Path(__file__).resolve().parents[2] / 'examples' / 'data' / 'rings_paths').as_posix()}"
name = "RP"
features = "degree"

[model]
type = "gin"
layers = 2
hidden = 8

[train]
type = "graph_classification"
epochs = 1
batch_size = 8
hidden = 8
"""


def _train(tmp_path_factory, name, text):
    from graphflow.cli.main import main

    tmp = tmp_path_factory.mktemp(name)
    (tmp / "p.toml").write_text(text)
    assert main(["run", str(tmp / "p.toml"), "--out-dir", str(tmp / "run"), "--quiet"]) == 0
    return tmp


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
                         "--out", tmp_path / "ex", "--top-k", "3", "--option", "batch=1",
                         "--threads", "1")
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
    assert check_method(host.registry, "pgexplainer", "graph").name == "pgexplainer"
    assert check_method(host.registry, "gnnexplainer", "link").name == "gnnexplainer"
    with pytest.raises(ConfigError, match="--method pgexplainer cannot explain a link model; "
                                          "methods that can: gnnexplainer, ig, saliency"):
        check_method(host.registry, "pgexplainer", "link")
    with pytest.raises(ConfigError, match="cannot explain a kg model; no method explains "
                                          "kg models yet; node models: gnnexplainer, ig, "
                                          "pgexplainer, saliency"):
        check_method(host.registry, "gnnexplainer", "kg")
    with pytest.raises(UnknownComponentError, match='unknown explainer type "gnnexplainr"'):
        check_method(host.registry, "gnnexplainr", "node")


def test_method_options_are_checked(motif_run, cli, tmp_path):
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", motif_run / "nodes.txt", "--method", "saliency",
                         "--epochs", "5", "--out", tmp_path / "ex")
    assert code == 1 and "unknown option for 'saliency'" in err and "Traceback" not in err


def test_a_neighbour_sampled_model_is_explained_on_its_computation_subgraph(
        tmp_path_factory, cli, tmp_path):
    from graphflow.compat.dgl import dgl
    import torch

    from graphflow.io.motifs import ba_shapes

    run = _train(tmp_path_factory, "sampled", SAMPLED)
    record = json.loads((run / "run" / "run.json").read_text())
    assert "neighbor" in json.dumps(record["config"])  # trained on sampled blocks
    (tmp_path / "nodes.txt").write_text("300\n")
    code, out, err = cli("explain", run / "run", "--data", run / "p.toml", "--nodes",
                         tmp_path / "nodes.txt", "--method", "pgexplainer", "--epochs", "2",
                         "--out", tmp_path / "ex")
    assert code == 0, err
    assert "explained 1 nodes with pgexplainer" in out
    edges = pq.read_table(tmp_path / "ex" / "edges.parquet").to_pydict()
    # a 2-layer model: every in-edge of node 300 and of its in-neighbours, and no other
    g = ba_shapes(motifs=10)
    graph = dgl.graph((g.src, g.dst), num_nodes=g.num_nodes)
    first = graph.in_edges(300, form="eid")
    hop = torch.unique(torch.cat([graph.in_edges(300)[0], torch.tensor([300])]))
    assert set(first.tolist()) <= set(edges["edge"])
    assert sorted(edges["edge"]) == sorted(graph.in_edges(hop, form="eid").tolist())
    assert all(0.0 <= v <= 1.0 for v in edges["importance"])


def test_a_graph_model_is_explained_over_its_whole_graph(tmp_path_factory, cli, tmp_path):
    run = _train(tmp_path_factory, "graphs", RINGS)
    (tmp_path / "graphs.txt").write_text("3\n7\n")
    code, out, err = cli("explain", run / "run", "--data", run / "p.toml", "--graphs",
                         tmp_path / "graphs.txt", "--epochs", "5", "--format", "csv",
                         "--out", tmp_path / "ex")
    assert code == 0, err
    assert "explained 2 graphs with gnnexplainer" in out
    edges = pcsv.read_csv(tmp_path / "ex" / "edges.csv").to_pydict()
    assert set(edges["target"]) == {3, 7}
    # each graph's own edges (node ids: 0-based rows of the TU files), all of them
    folder = Path(RINGS.split('path = "')[1].split('"')[0])
    graph_of = [int(v) for v in (folder / "RP_graph_indicator.txt").read_text().split()]
    pairs = [tuple(int(v) - 1 for v in line.split(","))
             for line in (folder / "RP_A.txt").read_text().splitlines() if line.strip()]
    for g in (3, 7):
        listed = sorted((s, d) for t, s, d in zip(edges["target"], edges["src"], edges["dst"])
                        if t == g)
        assert listed == sorted(p for p in pairs if graph_of[p[1]] == g)
    summary = json.loads((tmp_path / "ex" / "explain.json").read_text())
    assert summary["level"] == "graph" and summary["targets"] == 2


def test_graphs_of_a_node_model_are_one_line(motif_run, cli, tmp_path):
    (tmp_path / "graphs.txt").write_text("1\n")
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--graphs", tmp_path / "graphs.txt", "--out", tmp_path / "ex")
    assert code == 1 and "is a node model; name the nodes to explain with --nodes" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1


def test_explain_runs_predicts_own_loader():
    from graphflow.cli.predict import predict_args

    ns = predict_args(Path("run"), Path("data.toml"), quiet=True, stage="train.0")
    assert ns.run_dir == Path("run") and ns.data == Path("data.toml")
    assert ns.quiet and ns.stage == "train.0" and ns.nodes is None and ns.overrides == []
    with pytest.raises(TypeError, match="predict has no option 'bogus'"):
        predict_args(Path("run"), Path("data.toml"), bogus=1)


@pytest.mark.parametrize("flag", ["--top-k", "--threads"])
def test_a_count_below_one_is_refused_in_one_line(motif_run, cli, flag):
    code, out, err = cli("explain", motif_run / "run", "--data", motif_run / "motifs.toml",
                         "--nodes", motif_run / "nodes.txt", flag, "0")
    assert code == 1 and f"{flag} 0: must be >= 1" in err and len(err.strip().splitlines()) == 1
