"""graph_classification / graph_regression end to end on small hand-written collections."""

import json
import warnings
from dataclasses import dataclass
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import torch
from torch import nn

from graphflow.components import Model
from graphflow.manager import create_host
from graphflow.options import option
from graphflow.plugin import hookimpl
from graphflow.sparse import spmm
from graphflow.testing import RINGS_PATHS
from graphflow.testing import graph_pipeline as pipeline

RINGS = RINGS_PATHS.as_posix()


def error_lines(err: str) -> int:
    """The lines of the error report (stderr also holds the loader's summary line)."""
    lines = err.strip().splitlines()
    return len(lines) - next(i for i, x in enumerate(lines) if x.startswith("graphflow: error"))


def test_rings_and_paths_are_told_apart(run_toml, tmp_path):
    result = run_toml(pipeline(train_extra='split = [0.5, 0.25, 0.25]') + """
[[export]]
type = "csv"
what = "predictions"
[[export]]
type = "parquet"
what = "embeddings"
""")
    record = json.loads((result.out_dir / "run.json").read_text())
    assert record["metrics"]["test_acc"] == 1.0 and record["metrics"]["val_acc"] == 1.0
    table = pacsv.read_csv(result.out_dir / "predictions.csv").to_pydict()
    assert sorted(table["id"]) == list(range(1, 25))  # the graph ids, one row per graph
    assert set(table["class"]) == {1, 2}  # the original label values
    import pyarrow.parquet as pq
    emb = pq.read_table(result.out_dir / "embeddings.parquet")
    assert emb.num_rows == 24
    # readout of every layer: input (degree one-hot, 3) + 2 layers of 16
    assert len(emb.column("embedding")[0]) == 3 + 16 + 16


def test_batches_cut_by_a_background_worker_train_the_same_model(run_toml):
    """``[train.cores] workers`` cut the graph batches ahead (the core policy's ``sampled``
    split); the batches, and so the seeded run, are those cut inline."""
    runs = {}
    for workers in (0, 1):
        result = run_toml(pipeline(epochs=4, train_extra='split = [0.5, 0.25, 0.25]')
                          + f"workers = {workers}\n")
        record = json.loads((result.out_dir / "run.json").read_text())
        cores = next(s["cores"] for s in record["stages"] if s["section"] == "train")
        assert (cores["workload"], cores["workers"], cores["threads"]) == ("sampled", workers, 1)
        runs[workers] = record["metrics"]
    assert runs[0] == runs[1]


def test_folds_report_both_protocols(run_toml):
    result = run_toml(pipeline(epochs=5, train_extra="folds = 4\nval_fraction = 0.2"))
    record = json.loads((result.out_dir / "run.json").read_text())
    m = record["metrics"]
    assert 0 <= m["cv_gin_acc"] <= 1 and 0 <= m["cv_strict_acc"] <= 1
    assert 1 <= m["cv_gin_epoch"] <= 5
    report = record["reports"]["train"]
    assert len(report["folds"]) == 4 and sum(f["test"] for f in report["folds"]) == 24
    assert "optimistic" in report["gin"]["protocol"]
    lines = [json.loads(x) for x in (result.out_dir / "metrics.jsonl").read_text().splitlines()]
    assert sorted({int(x["fold"]) for x in lines}) == [0, 1, 2, 3]
    assert all("test_acc" in x for x in lines)  # the GIN protocol's curve, every epoch


def test_fold_file_with_overlap_fails_in_one_line(cli, tmp_path):
    folds = tmp_path / "folds.json"
    folds.write_text(json.dumps([{"train": list(range(0, 13)), "test": list(range(12, 24))}]))
    path = tmp_path / "p.toml"
    path.write_text(pipeline(epochs=1, train_extra=f'fold_file = "{folds.as_posix()}"'))
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert "fold 0: graph 12 is in both train and test" in err
    assert error_lines(err) == 1 and "Traceback" not in err


class Mean(nn.Module):
    """A third-party model: mean aggregation + linear, no per-layer outputs."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(2 * in_dim, out_dim)

    def forward(self, adj, x):
        agg = spmm(adj, x, reduce="mean")
        return torch.relu(self.lin(torch.cat([x[: adj.num_dst], agg], 1)))


class MeanModel(Model):
    """Mean-neighbour model from a third-party package."""

    name = "thirdparty_mean"
    summary = "test model"

    @dataclass
    class Options:
        hidden: int = option(16, "unused width")

    def build(self, in_dim, out_dim):
        return Mean(in_dim, out_dim)


class Plugin:
    @hookimpl
    def graphflow_register_models(self, register):
        register(MeanModel)


def test_a_third_party_model_trains_unchanged(run_toml):
    host = create_host(plugins={"thirdparty": Plugin()})
    result = run_toml(pipeline(model="thirdparty_mean", model_extra="",
                               train_extra='split = [0.5, 0.25, 0.25]\nreadout = "mean"'),
                      host=host)
    record = json.loads((result.out_dir / "run.json").read_text())
    assert record["metrics"]["test_acc"] >= 0.8


@pytest.mark.parametrize("task", ["node_classification", "link_prediction"])
def test_node_tasks_refuse_a_collection(cli, tmp_path, task):
    path = tmp_path / "p.toml"
    path.write_text(f"""
[load]
type = "tu"
path = "{RINGS}"
name = "RP"
[model]
type = "gcn"
[train]
type = "{task}"
epochs = 1
""")
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert f"{task} is a node-level task" in err and "collection of 24 graphs" in err
    assert error_lines(err) == 1


def test_a_graph_task_refuses_a_single_graph(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text("""
[load]
type = "synthetic"
[model]
type = "gin"
[train]
type = "graph_classification"
""")
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert "graph_classification needs a collection of graphs" in err
    assert error_lines(err) == 1


@pytest.mark.parametrize("task", ["node_classification", "link_prediction"])
@pytest.mark.parametrize("command", ["validate", "run"])
def test_a_model_reading_edge_features_needs_a_task_that_carries_them(cli, tmp_path, task,
                                                                        command):
    path = tmp_path / "p.toml"
    path.write_text(f"""
[load]
type = "synthetic"
[model]
type = "gine"
[train]
type = "{task}"
""")
    code, out, err = cli(command, path, *(("--out-dir", tmp_path / "out") if command == "run"
                                          else ()))
    assert code == 1
    assert (f"[model] gine reads edge features, which {task} does not carry; use it with "
            f"graph_classification, graph_regression, or use a model without edge features "
            f"(gin)") in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_gine_on_a_collection_without_edge_features_fails_in_one_line(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(model="gine", epochs=1))  # rings and paths: no edge files
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert "gine reads edge features, but the graph has none" in err
    assert "DS_edge_attributes.txt / DS_edge_labels.txt), or use gin" in err
    assert error_lines(err) == 1 and "Traceback" not in err


def test_a_transform_that_changes_the_node_set_is_refused(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(epochs=1) + '\n[[transform]]\ntype = "largest_component"\n')
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert "changes the node set, which a collection of graphs" in err


def test_graph_regression_on_graph_attributes(run_toml, tmp_path):
    folder = tmp_path / "REG"
    folder.mkdir()
    for f in Path(RINGS).iterdir():
        (folder / f.name.replace("RP_", "REG_")).write_bytes(f.read_bytes())
    indicator = (folder / "REG_graph_indicator.txt").read_text().split()
    sizes = torch.bincount(torch.tensor([int(x) for x in indicator]))[1:]  # nodes per graph
    (folder / "REG_graph_attributes.txt").write_text(
        "".join(f"{float(n)}\n" for n in sizes.tolist()))
    text = pipeline(epochs=60, train_extra='split = [0.5, 0.25, 0.25]\nlr = 0.01\nreadout = "sum"'
                    ).replace('"graph_classification"', '"graph_regression"')
    text = text.replace(f'path = "{RINGS}"\nname = "RP"',
                        f'path = "{folder.as_posix()}"\nname = "REG"\ntargets = "attributes"')
    result = run_toml(text + '[[export]]\ntype = "parquet"\nwhat = "predictions"\n')
    m = json.loads((result.out_dir / "run.json").read_text())["metrics"]
    assert m["test_mae"] < 1.5 and m["test_rmse"] >= m["test_mae"]
    # the estimates, one float per graph (not class ids)
    table = pq.read_table(result.out_dir / "predictions.parquet")
    assert table.column_names == ["id", "prediction"] and table.num_rows == 24
    estimates = torch.tensor(table.column("prediction").to_pylist())
    assert estimates.dtype == torch.float32 and len(set(estimates.tolist())) > 1
    mae = (estimates - sizes.float()).abs().mean()  # the targets: nodes per graph
    assert mae < 1.5


def test_resume_with_folds_reloads_finished_folds(run_toml, tmp_path):
    text = pipeline(epochs=3, train_extra="folds = 3\nval_fraction = 0.2") + """
[[export]]
type = "csv"
what = "predictions"
"""
    first = run_toml(text)
    before = json.loads((first.out_dir / "run.json").read_text())["metrics"]
    again = run_toml(text, resume=True)
    after = json.loads((again.out_dir / "run.json").read_text())["metrics"]
    assert after["cv_gin_acc"] == before["cv_gin_acc"]
    assert after["cv_strict_acc"] == before["cv_strict_acc"]
    assert pacsv.read_csv(again.out_dir / "predictions.csv").num_rows == 24


def test_standardized_regression_does_not_depend_on_the_targets_units(run_toml, cli, tmp_path):
    """standardize = true: the head fits the targets in standard units, so targets y and
    1000 + 100 y train the same model, and its estimates (exported, and from the saved
    bundle through graphflow predict) are in each run's own units."""
    indicator = (Path(RINGS) / "RP_graph_indicator.txt").read_text().split()
    sizes = torch.bincount(torch.tensor([int(x) for x in indicator]))[1:].double()
    runs = {}
    for name, targets in (("SMALL", sizes), ("BIG", 1000 + 100 * sizes)):
        folder = tmp_path / name
        folder.mkdir()
        for f in Path(RINGS).iterdir():
            (folder / f.name.replace("RP_", f"{name}_")).write_bytes(f.read_bytes())
        (folder / f"{name}_graph_attributes.txt").write_text(
            "".join(f"{v}\n" for v in targets.tolist()))
        text = pipeline(epochs=20, train_extra='split = [0.5, 0.25, 0.25]\nstandardize = true'
                        ).replace('"graph_classification"', '"graph_regression"')
        text = text.replace(f'path = "{RINGS}"\nname = "RP"',
                            f'path = "{folder.as_posix()}"\nname = "{name}"\n'
                            f'targets = "attributes"')
        result = run_toml(text + '[[export]]\ntype = "parquet"\nwhat = "predictions"\n',
                          name=f"{name}.toml", out_dir=tmp_path / f"out-{name}")
        runs[name] = (result.out_dir, tmp_path / f"{name}.toml")
    small, big = (torch.tensor(pq.read_table(runs[n][0] / "predictions.parquet")
                               .column("prediction").to_pylist(), dtype=torch.float64)
                  for n in ("SMALL", "BIG"))
    torch.testing.assert_close(big, 1000 + 100 * small, rtol=1e-5, atol=1e-2)
    m = {n: json.loads((runs[n][0] / "run.json").read_text())["metrics"] for n in runs}
    assert m["BIG"]["test_mae"] == pytest.approx(100 * m["SMALL"]["test_mae"], rel=1e-4)
    # the bundle holds the head with the map folded in: predict gives the run's estimates
    code, _, err = cli("predict", runs["BIG"][0], "--data", runs["BIG"][1],
                       "--out", tmp_path / "p", "--quiet")
    assert code == 0, err
    again = torch.tensor(pq.read_table(tmp_path / "p" / "predictions.parquet")
                         .column("prediction").to_pylist(), dtype=torch.float64)
    torch.testing.assert_close(again, big, rtol=1e-6, atol=1e-3)


def test_balanced_class_weights_come_from_the_training_graphs(run_toml, tmp_path):
    """class_weights = "balanced": on the even rings/paths split every weight is 1 (the same
    run as without); with a rare class (graphs of 9 or more nodes) the loss is weighted."""
    folder = tmp_path / "RARE"
    folder.mkdir()
    for f in Path(RINGS).iterdir():
        (folder / f.name.replace("RP_", "RARE_")).write_bytes(f.read_bytes())
    indicator = (folder / "RARE_graph_indicator.txt").read_text().split()
    sizes = torch.bincount(torch.tensor([int(x) for x in indicator]))[1:]
    (folder / "RARE_graph_labels.txt").write_text(
        "".join(f"{int(n >= 9)}\n" for n in sizes.tolist()))
    assert 0 < int((sizes >= 9).sum()) < len(sizes) // 3
    losses = {}
    for data in ("RP", "RARE"):
        for weights in ("none", "balanced"):
            text = pipeline(epochs=2, train_extra=f'class_weights = "{weights}"')
            if data == "RARE":
                text = text.replace(f'path = "{RINGS}"\nname = "RP"',
                                    f'path = "{folder.as_posix()}"\nname = "RARE"')
            out = tmp_path / f"{data}-{weights}"
            run_toml(text, out_dir=out)
            losses[data, weights] = [json.loads(line)["loss"] for line in
                                     (out / "metrics.jsonl").read_text().splitlines()]
    assert losses["RP", "balanced"] == pytest.approx(losses["RP", "none"], rel=1e-5)
    assert losses["RARE", "balanced"][0] != pytest.approx(losses["RARE", "none"][0], rel=1e-2)


def test_monitor_val_f1_macro_for_classes(run_toml):
    result = run_toml(pipeline(epochs=6, train_extra='monitor = "val_f1_macro"'))
    records = [json.loads(line) for line in
               (result.out_dir / "metrics.jsonl").read_text().splitlines()]
    scores = [r["val_f1_macro"] for r in records]
    assert result.ctx.metrics["best_epoch"] == scores.index(max(scores)) + 1


def test_set2set_read_out_trains_predicts_and_exports(run_toml, cli, tmp_path):
    # the dropout on the read-out vectors: on these 12 training graphs (2 classes), 30 epochs
    # of it on the per-layer scores (the default) left 2 of the 6 test graphs wrong
    text = pipeline(epochs=30, train_extra='split = [0.5, 0.25, 0.25]\nreadout = "set2set"\n'
                                           'readout_dropout = "features"')
    result = run_toml(text + '[[export]]\ntype = "parquet"\nwhat = "embeddings"\n'
                      '[[export]]\ntype = "parquet"\nwhat = "predictions"\n',
                      name="s2s.toml", out_dir=tmp_path / "run")
    assert result.ctx.metrics["test_acc"] == 1.0
    emb = pq.read_table(result.out_dir / "embeddings.parquet")
    # every layer's read-out, twice its width: input (degree one-hot, 3) + 2 layers of 16
    assert len(emb.column("embedding")[0]) == 2 * (3 + 16 + 16)
    code, _, err = cli("predict", result.out_dir, "--data", tmp_path / "s2s.toml",
                       "--out", tmp_path / "p", "--quiet")
    assert code == 0, err
    ours = pq.read_table(tmp_path / "p" / "predictions.parquet")
    assert ours.equals(pq.read_table(result.out_dir / "predictions.parquet"))
    # its TorchScript export (the LSTM and the per-graph softmax) gives the run's logits
    script = tmp_path / "script.toml"
    script.write_text(text + '[[export]]\ntype = "torchscript"\n[[export]]\ntype = "pt"\n'
                      'what = "logits"\n')
    code, _, err = cli("run", script, "--out-dir", tmp_path / "script", "--quiet")
    assert code == 0, err
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch 2.13 marks jit.load so
        loaded = torch.jit.load(str(tmp_path / "script" / "model.torchscript.pt"))
    data = result.ctx.data  # the collection as the task read it: features, edges, graphs
    src, dst = data.graph.edges()
    graph = torch.repeat_interleave(torch.arange(data.graphs.num_graphs),
                                    data.graphs.graph_ptr.diff())
    x = data.graph.ndata["feat"].float()  # the one-hot degrees
    logits = torch.load(tmp_path / "script" / "logits.pt")["logits"]  # (G, C), graph order
    with torch.no_grad():
        got = loaded(x, src, dst, torch.ones(src.shape[0]), graph,
                     torch.tensor(data.graphs.num_graphs))
    torch.testing.assert_close(got, logits, atol=1e-4, rtol=1e-4)


def test_a_monitor_the_targets_do_not_report_stops_before_training(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(epochs=5, train_extra='monitor = "val_mae"'))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1 and "Traceback" not in err
    assert '[train] monitor = "val_mae" is not a figure of these targets; choose one of ' \
           "val_loss, val_acc, val_f1_macro, val_roc_auc" in err
    assert not (tmp_path / "out" / "metrics.jsonl").exists()  # no epoch ran
