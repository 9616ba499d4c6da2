"""``graphflow predict``: node, link and graph bundles, bad input, inductive Cora."""

from __future__ import annotations

from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq
import pytest

from graphflow.testing import bundle_node_pipeline, papers_link_pipeline, planetoid_dir

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"

NODES = bundle_node_pipeline("nodes", model="gcn", extra='\n[[export]]\ntype = "parquet"\n'
                                                      'what = "predictions"\n')
LINKS = papers_link_pipeline(epochs=3, train='score_pairs = "pairs.csv"')

PAIRS = "src,dst\npaper-0000,paper-0028\npaper-0001,paper-0043\npaper-0005,paper-0010\n"


@pytest.fixture(scope="module")
def node_run(tmp_path_factory):
    from graphflow.cli.main import main

    tmp = tmp_path_factory.mktemp("predict")
    (tmp / "nodes.toml").write_text(NODES)
    assert main(["run", str(tmp / "nodes.toml"), "--out-dir", str(tmp / "run"), "--quiet"]) == 0
    return tmp


def test_node_predictions_match_the_run(node_run, cli, tmp_path):
    code, out, err = cli("predict", node_run / "run", "--data", node_run / "nodes.toml",
                         "--out", tmp_path / "p", "--quiet")
    assert code == 0, err
    assert "predictions.parquet" in out
    ours = pq.read_table(tmp_path / "p" / "predictions.parquet")
    theirs = pq.read_table(node_run / "run" / "predictions.parquet")
    assert ours.column_names == theirs.column_names
    assert ours.column("id").equals(theirs.column("id"))
    assert ours.column("prediction").equals(theirs.column("prediction"))


def test_chosen_nodes_in_csv(node_run, cli, tmp_path):
    (tmp_path / "ids.csv").write_text("id\n7\n3\n250\n")
    code, out, err = cli("predict", node_run / "run", "--data", node_run / "nodes.toml",
                         "--out", tmp_path / "p", "--format", "csv", "--nodes",
                         tmp_path / "ids.csv", "--quiet")
    assert code == 0, err
    table = pcsv.read_csv(tmp_path / "p" / "predictions.csv",
                          parse_options=pcsv.ParseOptions(invalid_row_handler=None),
                          read_options=pcsv.ReadOptions(skip_rows=0))
    full = pq.read_table(node_run / "run" / "predictions.parquet").to_pydict()
    assert table.column("id").to_pylist() == [7, 3, 250]
    assert table.column("prediction").to_pylist() == [full["prediction"][i] for i in (7, 3, 250)]


def test_link_bundle_scores_pairs_as_the_run_did(cli, tmp_path):
    (tmp_path / "links.toml").write_text(LINKS)
    (tmp_path / "pairs.csv").write_text(PAIRS)
    code, out, err = cli("run", tmp_path / "links.toml", "--out-dir", tmp_path / "run",
                         "--quiet")
    assert code == 0, err
    code, out, err = cli("predict", tmp_path / "run", "--data", tmp_path / "links.toml",
                         "--pairs", tmp_path / "pairs.csv", "--quiet")
    assert code == 0, err
    run = pq.read_table(tmp_path / "run" / "links.parquet").to_pandas()
    run = run[run.split == "candidates"].reset_index(drop=True)
    ours = pq.read_table(tmp_path / "run" / "predict" / "links.parquet").to_pandas()
    assert list(ours.src) == list(run.src) and list(ours.dst) == list(run.dst)
    assert list(ours.score) == list(run.score)  # the same scores, bit for bit
    # pairs naming a node the graph does not have: one line, exit 1
    (tmp_path / "bad.csv").write_text("src,dst\npaper-0000,paper-9999\n")
    code, out, err = cli("predict", tmp_path / "run", "--data", tmp_path / "links.toml",
                         "--pairs", tmp_path / "bad.csv", "--quiet")
    assert code == 1
    assert "dst node id 'paper-9999' is not a node of the graph" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    # --nodes and --graphs are not for a link model: one line each, pointing at --pairs
    for flag in ("--nodes", "--graphs"):
        code, out, err = cli("predict", tmp_path / "run", "--data", tmp_path / "links.toml",
                             flag, tmp_path / "pairs.csv", "--quiet")
        assert code == 1
        assert "the bundle holds a link model" in err and "pairs = FILE (--pairs)" in err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def predicts_what_it_trained_on(cli, tmp_path, example: Path, *args: str) -> None:
    """Train ``example`` into ``tmp_path / "run"``; its bundle predicts the same per-graph
    rows on the same data as the run exported."""
    code, out, err = cli("run", example, "--out-dir", tmp_path / "run", "--quiet", *args)
    assert code == 0, err
    code, out, err = cli("predict", tmp_path / "run", "--data", example, "--format", "csv",
                         "--quiet")
    assert code == 0, err
    ours = (tmp_path / "run" / "predict" / "predictions.csv").read_text()
    assert ours == (tmp_path / "run" / "predictions.csv").read_text()


def test_graph_bundle_predicts_per_graph(cli, tmp_path):
    predicts_what_it_trained_on(cli, tmp_path, EXAMPLES / "tu_rings_paths.toml",
                                "--set", "train.epochs=2")


def test_a_gine_bundle_carries_the_edge_features_and_asks_for_them(cli, tmp_path):
    example = EXAMPLES / "tu_bond_types.toml"
    predicts_what_it_trained_on(cli, tmp_path, example)
    bonds = tmp_path / "bonds"  # the same rings without their bond types
    bonds.mkdir()
    for f in (EXAMPLES / "data" / "bond_types").glob("BT_*.txt"):
        if f.name != "BT_edge_labels.txt":
            (bonds / f.name).write_text(f.read_text())
    plain = tmp_path / "plain.toml"
    plain.write_text(example.read_text().replace('"data/bond_types"', f'"{bonds.as_posix()}"'))
    code, out, err = cli("predict", tmp_path / "run", "--data", plain, "--quiet")
    assert code == 1
    assert "trained with edge features 2 wide, but the new graph's (edata['edge_feat']) are " \
           "absent" in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    # a model that does not read edge features trains without them and asks for none
    code, out, err = cli("run", example, "--out-dir", tmp_path / "gin", "--quiet", "--set",
                         "model.type=gin", "--set", "train.epochs=2")
    assert code == 0, err
    code, out, err = cli("predict", tmp_path / "gin", "--data", plain, "--quiet")
    assert code == 0, err


def test_chosen_graphs(cli, tmp_path):
    """--graphs FILE: the graph model predicts those graphs only, in the file's order, with the
    same rows as for the whole collection; --nodes is for node models."""
    example = EXAMPLES / "tu_bond_types.toml"
    code, out, err = cli("run", example, "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    code, out, err = cli("predict", tmp_path / "run", "--data", example, "--format", "csv",
                         "--quiet")
    assert code == 0, err
    every = (tmp_path / "run" / "predict" / "predictions.csv").read_text().splitlines()
    (tmp_path / "some.txt").write_text("17\n3\n9\n")
    code, out, err = cli("predict", tmp_path / "run", "--data", example, "--format", "csv",
                         "--graphs", tmp_path / "some.txt", "--out", tmp_path / "some")
    assert code == 0, err
    assert "predicted_graphs=3" in out and "predict_acc=1" in out
    some = (tmp_path / "some" / "predictions.csv").read_text().splitlines()
    assert some == [every[0], every[17], every[3], every[9]]  # header, then ids 17, 3, 9

    def fails(*args: object) -> str:
        code, out, err = cli("predict", tmp_path / "run", "--data", example, *args, "--quiet")
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    (tmp_path / "bad.txt").write_text("3\n99\n")
    assert "graph id 99 is not a graph of the collection" in fails("--graphs",
                                                                   tmp_path / "bad.txt")
    assert "graph id file not found" in fails("--graphs", tmp_path / "none.txt")
    assert "the bundle holds a graph model; choose graphs with graphs = FILE (--graphs)" in \
        fails("--nodes", tmp_path / "some.txt")


def test_bad_input_is_one_line(node_run, cli, tmp_path):
    def fails(*args: object) -> str:
        code, out, err = cli("predict", *args, "--quiet")
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
        return err

    run, data = node_run / "run", node_run / "nodes.toml"
    assert "no model bundle (model/bundle.json)" in fails(tmp_path, "--data", data)
    (tmp_path / "ids.csv").write_text("id\n3\n300\n")
    assert "node id 300 is not a node of the graph" in fails(
        run, "--data", data, "--nodes", tmp_path / "ids.csv")
    wider = tmp_path / "wider.toml"
    wider.write_text(NODES.replace("features = 8", "features = 12"))
    # the replayed normalisation notices first, naming its section
    assert "normalize_features: the features have 12 columns, but the model was trained on 8" \
        in fails(run, "--data", wider)
    plain = tmp_path / "plain.toml"
    plain.write_text(NODES.replace('[[transform]]\ntype = "normalize_features"\nmethod = '
                                   '"standard"', ''))
    assert "has 12 feature columns, but the model was trained on 8" in fails(
        run, "--data", plain, "--set", "load.features=12")
    unnormalised = tmp_path / "raw.toml"
    unnormalised.write_text(NODES.replace('type = "normalize_features"\nmethod = "standard"',
                                          'type = "self_loops"'))
    assert "applied normalize_features to the features" in fails(run, "--data", unnormalised)
    import json
    import shutil

    old = tmp_path / "old"
    shutil.copytree(run / "model", old / "model")
    meta = json.loads((old / "model" / "bundle.json").read_text())
    meta["versions"]["graphflow"] = "0.0.9"
    (old / "model" / "bundle.json").write_text(json.dumps(meta))
    assert "incompatible bundle: graphflow 0.0.9 -> " in fails(old, "--data", data)
    (tmp_path / "pairs.csv").write_text("src,dst\n1,2\n")
    assert "pairs are scored by link prediction models" in fails(
        run, "--data", data, "--pairs", tmp_path / "pairs.csv")
    assert "the bundle holds a node model, which predicts nodes; choose nodes with nodes = " \
        "FILE (--nodes)" in fails(run, "--data", data, "--graphs", tmp_path / "ids.csv")


@pytest.mark.skipif(not (planetoid_dir() / "ind.cora.x").exists(),
                    reason="raw Planetoid files not found")
def test_inductive_cora_matches_transductive(cli, tmp_path):
    """GraphSAGE trained with 20% of Cora's nodes (and their edges) removed scores them, on
    the full graph, within 0.03 of the transductive test accuracy."""
    import json

    root = f"load.root={planetoid_dir()}"
    fast = "train.epochs=40"  # the examples train 100 epochs
    code, _, err = cli("run", EXAMPLES / "cora_sage.toml", "--out-dir", tmp_path / "t",
                       "--set", root, "--set", fast, "--quiet")
    assert code == 0, err
    code, _, err = cli("run", EXAMPLES / "cora_sage_inductive.toml", "--out-dir",
                       tmp_path / "i", "--set", root, "--set", fast, "--quiet")
    assert code == 0, err
    held = tmp_path / "i" / "model" / "held_out_nodes.parquet"
    assert pq.read_table(held).num_rows == round(0.2 * 2708)
    from graphflow.bundle import load_bundle

    # the Python API reads the same ids back; the transductive bundle has none
    assert load_bundle(tmp_path / "i").held_out_ids().to_pylist() == \
        pq.read_table(held).column("id").to_pylist()
    assert load_bundle(tmp_path / "t").held_out_ids() is None
    code, _, err = cli("predict", tmp_path / "i", "--data", EXAMPLES / "cora_sage.toml",
                       "--set", root, "--nodes", held, "--quiet")
    assert code == 0, err
    transductive = json.loads((tmp_path / "t" / "run.json").read_text())["metrics"]["test_acc"]
    inductive = json.loads((tmp_path / "i" / "predict" / "run.json").read_text())["metrics"]
    assert inductive["predicted_nodes"] == round(0.2 * 2708)
    assert abs(inductive["predict_acc"] - transductive) <= 0.03, (inductive, transductive)
