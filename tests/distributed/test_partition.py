"""``graphflow partition`` and the ``partitioned`` loader: DGL partitions with original ids."""

import json
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.config import load_config
from graphflow.runner import run_pipeline

def _edges_by_id(data):
    ids = data.ids.to_arrow().to_pylist()
    src, dst = data.graph.edges()
    return sorted(zip([ids[i] for i in src.tolist()], [ids[i] for i in dst.tolist()]))


@pytest.mark.parametrize("method", ["metis", "random"])
def test_partition_round_trips_with_original_ids(cli, host, example, tmp_path, method):
    out = tmp_path / "parts"
    code, stdout, err = cli("partition", example, "--parts", "2", "--method", method,
                            "--out", out, "--quiet")
    assert code == 0, err
    assert f'into 2 parts by {method}' in stdout and str(out / "graph.json") in stdout
    meta = json.loads((out / "graphflow.json").read_text())
    assert (meta["parts"], meta["num_nodes"], meta["num_classes"]) == (2, 150, 3)
    assert meta["node_data"]["feat"] > 0 and meta["split"]["train"] == 90
    assert meta["classes"] == ["databases", "learning", "theory"]
    assert sum(meta["part_nodes"]) == 150
    dgl_config = json.loads((out / "graph.json").read_text())
    assert dgl_config["num_parts"] == 2 and dgl_config["graph_name"] == "edgelist_gcn"
    graph_only = tmp_path / "graph_only.toml"  # the example's [load] and [[transform]]s
    graph_only.write_text(example.read_text().split("[model]")[0])
    original = run_pipeline(load_config(graph_only, host.registry, out_dir=tmp_path / "a"),
                            host, quiet=True).ctx.graph()

    back = tmp_path / "back.toml"
    back.write_text(f'[load]\ntype = "partitioned"\npath = "{out / "graph.json"}"\n')
    loaded = run_pipeline(load_config(back, host.registry, out_dir=tmp_path / "b"), host,
                          quiet=True).ctx.graph()
    assert loaded.ids.to_arrow().type == original.ids.to_arrow().type  # strings stay strings
    assert _edges_by_id(loaded) == _edges_by_id(original)
    by_id = {k: i for i, k in enumerate(original.ids.to_arrow().to_pylist())}
    perm = torch.tensor([by_id[k] for k in loaded.ids.to_arrow().to_pylist()])
    for key in ("feat", "label", "train_mask", "val_mask", "test_mask"):
        assert torch.equal(loaded.graph.ndata[key], original.graph.ndata[key][perm]), key
    if method == "metis":  # METIS balances the training nodes across parts (balance_ntypes)
        trains = [int(loaded.graph.ndata["train_mask"][s:e].sum())
                  for s, e in dgl_config["node_map"]["_N"]]
        assert abs(trains[0] - trains[1]) <= 2


def test_training_on_a_partitioned_graph_exports_original_ids(cli, example, parts, tmp_path):
    text = example.read_text()
    load = text[text.index("[load]"):text.index("[model]")]
    pipeline = tmp_path / "trained.toml"
    pipeline.write_text(text.replace(load, '[load]\ntype = "partitioned"\n'
                                           'path = "parts/graph.json"\n\n')
                        .replace("epochs = 100", "epochs = 5"))
    code, stdout, err = cli("run", pipeline, "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    table = pq.read_table(tmp_path / "run" / "predictions.parquet")
    assert table.num_rows == 150
    assert sorted(table.column("id").to_pylist()) == [f"paper-{i:04d}" for i in range(150)]


def test_parts_zero(cli, example, tmp_path):
    code, out, err = cli("partition", example, "--parts", "0", "--out", tmp_path / "p")
    assert code == 1
    assert err.strip() == ("graphflow: error: --parts 0: give the number of partitions (one "
                           "per machine), at least 1")
    assert not (tmp_path / "p").exists()


def _load_error(cli, tmp_path, load: str) -> str:
    """stderr of running a pipeline whose [load] is ``load`` (a run that must fail)."""
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(f'[load]\ntype = "partitioned"\n{load}')
    code, stdout, err = cli("run", pipeline, "--out-dir", tmp_path / "o")
    assert code == 1
    return err.strip()


@pytest.fixture
def parts(cli, example, tmp_path):
    """The edgelist example partitioned in two into tmp_path/parts."""
    assert cli("partition", example, "--parts", "2", "--out", tmp_path / "parts",
               "--quiet")[0] == 0
    return tmp_path / "parts"


def test_missing_partition_config(cli, tmp_path):
    assert _load_error(cli, tmp_path, 'path = "nowhere/graph.json"\n') == (
        f"graphflow: error: [load] partitioned: partition config not found: "
        f"{tmp_path / 'nowhere' / 'graph.json'}; make it with: graphflow partition "
        f"PIPELINE.toml --parts N --out {tmp_path / 'nowhere'}")


def test_partition_without_the_features_the_pipeline_needs(cli, parts, tmp_path):
    err = _load_error(cli, tmp_path, 'path = "parts/graph.json"\nnode_data = ["feat", "year"]\n')
    assert err == (
        f"graphflow: error: [load] partitioned: {parts / 'graph.json'}: the pipeline needs node "
        f"data year but the partition has feat, label, test_mask, train_mask, val_mask; "
        f"partition the graph of a pipeline whose loader provides them")


def test_partition_config_not_matching_its_metadata(cli, parts, tmp_path):
    config = json.loads((parts / "graph.json").read_text())
    config["num_parts"] = 3
    (parts / "graph.json").write_text(json.dumps(config))
    assert _load_error(cli, tmp_path, 'path = "parts/graph.json"\n') == (
        f"graphflow: error: [load] partitioned: {parts / 'graph.json'} (graph 'edgelist_gcn', 3 "
        f"parts) does not match {parts / 'graphflow.json'} (graph 'edgelist_gcn', 2 parts); "
        f"partition again")


@pytest.mark.parametrize("name, missing", [("run.json", "graph_name and num_parts"),
                                           ("graphflow.json", "num_parts")])
def test_another_json_of_the_partition_folder_points_at_graph_json(cli, parts, tmp_path, name,
                                                                   missing):
    assert _load_error(cli, tmp_path, f'path = "parts/{name}"\n') == (
        f"graphflow: error: [load] partitioned: {parts / name} is not a partition config (a JSON "
        f"file without DGL's {missing}); point path at {parts / 'graph.json'}, the partition "
        f"config graphflow partition wrote beside it")


def test_a_json_elsewhere_says_where_graph_json_comes_from(cli, tmp_path):
    (tmp_path / "settings.json").write_text('[1, 2]')
    assert _load_error(cli, tmp_path, 'path = "settings.json"\n') == (
        f"graphflow: error: [load] partitioned: {tmp_path / 'settings.json'} is not a partition "
        f"config (a JSON file without DGL's graph_name and num_parts); point path at the "
        f"graph.json in the folder that graphflow partition wrote (graphflow partition "
        f"PIPELINE.toml --parts N --out DIR writes DIR/graph.json)")


def test_a_file_that_is_not_json(cli, parts, tmp_path):
    err = _load_error(cli, tmp_path, 'path = "parts/node_ids.parquet"\n')
    assert err == (f"graphflow: error: [load] partitioned: {parts / 'node_ids.parquet'} is not a "
                   f"partition config (not JSON); point path at {parts / 'graph.json'}, the "
                   f"partition config graphflow partition wrote beside it")
