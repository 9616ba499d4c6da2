"""[[track]]: the trackers' glue, and the mlflow and tensorboard trackers end to end, read back
with MLflow's client and TensorBoard's event reader."""

import json
import subprocess
import sys

import pytest

from graphflow.components import Tracker
from graphflow.distributed.world import World
from graphflow.experiments.tracking import metric_key, params
from graphflow.manager import create_host

PIPELINE = """
[pipeline]
name = "tracked"
[load]
type = "synthetic"
nodes = 120
classes = 3
features = 8
[model]
type = "gcn"
hidden = 8
[train]
type = "node_classification"
epochs = 4
[[export]]
type = "parquet"
what = "predictions"
"""


def epochs(out_dir):
    return [json.loads(line) for line in (out_dir / "metrics.jsonl").read_text().splitlines()]


def test_params_flatten_to_the_keys_set_takes():
    flat = params({"pipeline": {"name": "x", "out_dir": None}, "transform": [],
                   "train": [{"type": "nc", "lr": 0.1, "hidden": [8, 8]}],
                   "export": [{"type": "csv"}]})
    assert flat == {"pipeline.name": "x", "pipeline.out_dir": None, "train.0.type": "nc",
                    "train.0.lr": 0.1, "train.0.hidden": [8, 8], "export.0.type": "csv"}
    assert metric_key("train", "loss") == "loss"
    assert metric_key("train.1", "loss") == "train.1/loss"


def test_mlflow_and_tensorboard_hold_the_run(run_toml, tmp_path):
    from mlflow import MlflowClient
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = run_toml(PIPELINE + '[[track]]\ntype = "mlflow"\n[[track]]\ntype = "tensorboard"\n')
    out = result.out_dir
    record = json.loads((out / "run.json").read_text())
    lines = epochs(out)
    assert len(lines) == 4

    where = record["reports"]["track.0"]
    assert where["tracking_uri"] == f"sqlite:///{out.resolve() / 'mlflow.db'}"
    client = MlflowClient(tracking_uri=where["tracking_uri"])
    run = client.get_run(where["run_id"])
    assert run.info.status == "FINISHED"
    assert client.get_experiment(run.info.experiment_id).name == "tracked"
    assert run.data.params["train.0.epochs"] == "4"
    assert run.data.params["model.type"] == "gcn"
    assert run.data.params["load.nodes"] == "120"
    assert run.data.tags["graphflow.version"] == record["versions"]["graphflow"]
    assert run.data.tags["torch.version"] == record["versions"]["torch"]
    assert run.data.tags["dgl.version"] == record["versions"]["dgl"]
    for name in ("loss", "val_acc"):
        history = sorted(client.get_metric_history(run.info.run_id, name), key=lambda m: m.step)
        assert [(m.step, m.value) for m in history] == [(e["epoch"], e[name]) for e in lines]
    assert run.data.metrics["final/test_acc"] == record["metrics"]["test_acc"]
    files = {f.path for f in client.list_artifacts(run.info.run_id)}
    assert {"run.json", "metrics.jsonl", "model", "outputs"} <= files
    assert [f.path for f in client.list_artifacts(run.info.run_id, "model")] == \
        ["model/checkpoint.pt"]
    assert [f.path for f in client.list_artifacts(run.info.run_id, "outputs")] == \
        ["outputs/model", "outputs/predictions.parquet"]  # the model bundle, the export
    run_json = client.download_artifacts(run.info.run_id, "run.json", str(out / "dl"))
    assert json.loads(open(run_json).read())["config_hash"] == record["config_hash"]

    events = EventAccumulator(str(record["reports"]["track.1"]["path"]))
    events.Reload()
    for name in ("loss", "val_acc", "train_s"):
        series = [(s.step, s.value) for s in events.Scalars(name)]
        assert series == [(e["epoch"], pytest.approx(e[name], rel=1e-6)) for e in lines]
    hparams = EventAccumulator(str(out / "tensorboard"), size_guidance={"tensors": 0})
    hparams.Reload()
    plugin = hparams.PluginTagToContent("hparams")
    assert "_hparams_/session_start_info" in plugin
    from tensorboard.plugins.hparams import plugin_data_pb2

    start = plugin_data_pb2.HParamsPluginData.FromString(
        plugin["_hparams_/session_start_info"]).session_start_info
    assert start.hparams["train.0.epochs"].number_value == 4
    assert start.hparams["model.type"].string_value == "gcn"
    assert [o["what"] for o in record["outputs"]].count("tensorboard tracker") == 1


def test_mlflow_artifacts_go_beside_a_sqlite_store_never_into_the_working_directory(
        run_toml, tmp_path, monkeypatch):
    """A tracking_uri naming a SQLite database elsewhere: the experiment's artifacts land in
    mlartifacts/ beside the database (MLflow's default would be ./mlruns of the cwd)."""
    from mlflow import MlflowClient

    cwd = tmp_path / "cwd"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    store = tmp_path / "store" / "runs.db"
    store.parent.mkdir()
    result = run_toml(PIPELINE + f'[[track]]\ntype = "mlflow"\n'
                                 f'tracking_uri = "sqlite:///{store}"\n')
    where = json.loads((result.out_dir / "run.json").read_text())["reports"]["track.0"]
    client = MlflowClient(tracking_uri=where["tracking_uri"])
    run = client.get_run(where["run_id"])
    assert run.info.artifact_uri.startswith((store.parent / "mlartifacts").resolve().as_uri())
    assert (store.parent / "mlartifacts").is_dir()
    assert list(cwd.iterdir()) == []  # no mlruns/ (nor anything else) in the working folder


def test_an_unreachable_server_warns_once_and_the_run_goes_on(run_toml, capfd, monkeypatch):
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_MAX_RETRIES", "0")
    monkeypatch.setenv("MLFLOW_HTTP_REQUEST_TIMEOUT", "2")
    result = run_toml(PIPELINE + '[[track]]\ntype = "mlflow"\n'
                      'tracking_uri = "http://127.0.0.1:9"\n')
    assert result.record["status"] == "ok"
    assert result.record["metrics"]["test_acc"] >= 0
    err = capfd.readouterr().err
    warnings = [line for line in err.splitlines() if "warning" in line.lower()]
    assert len(warnings) == 1, err
    assert warnings[0].startswith("graphflow: warning: [track.0] mlflow tracker failed in start:")
    assert "the run goes on without it" in warnings[0]
    record = json.loads((result.out_dir / "run.json").read_text())
    assert record["reports"]["track.0"]["error"].startswith("start: ")
    assert len(epochs(result.out_dir)) == 4


def test_a_missing_package_warns_once(run_toml, capfd, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # import fails
    result = run_toml(PIPELINE + '[[track]]\ntype = "tensorboard"\n')
    assert result.record["status"] == "ok"
    warnings = [ln for ln in capfd.readouterr().err.splitlines() if "warning" in ln]
    assert len(warnings) == 1 and "graphflow[track]" in warnings[0]


class Recorder(Tracker):
    """Records the calls it gets."""

    name = "recorder"
    summary = "records calls"
    calls: list = []

    def start(self, ctx):
        self.calls.append(("start", ctx.config.settings.name))
        return {"where": "memory"}

    def log_epoch(self, key_values, step):
        self.calls.append(("epoch", step, sorted(key_values)))

    def flush(self):
        self.calls.append(("flush",))

    def finish(self, ctx, record):
        self.calls.append(("finish", record["status"]))
        raise OSError("disk full")


class RecorderPlugin:
    from graphflow.plugin import hookimpl

    @hookimpl
    def graphflow_register_trackers(self, register):
        register(Recorder)


def test_a_third_party_tracker_follows_the_lifecycle_and_failing_loses_nothing(
        run_toml, capfd):
    Recorder.calls = []
    host = create_host(plugins={"rec": RecorderPlugin()})
    result = run_toml(PIPELINE + '[[track]]\ntype = "recorder"\n', host=host)
    kinds = [c[0] for c in Recorder.calls]
    assert kinds[0] == "start" and kinds[-1] == "finish"
    assert [c[1] for c in Recorder.calls if c[0] == "epoch"] == [1, 2, 3, 4]
    assert "loss" in next(c for c in Recorder.calls if c[0] == "epoch")[2]
    assert ("flush",) in Recorder.calls
    assert Recorder.calls[-1] == ("finish", "ok")
    written = json.loads((result.out_dir / "run.json").read_text())
    assert written["reports"]["track.0"] == {"type": "recorder", "where": "memory"}
    assert (result.out_dir / "run.json").exists()
    err = capfd.readouterr().err
    assert err.count("warning") == 1 and "finish: OSError: disk full" in err
    assert host.pm.get_plugin("graphflow-tracking") is None  # gone after the run


def test_only_rank_0_tracks(run_toml):
    Recorder.calls = []
    host = create_host(plugins={"rec": RecorderPlugin()})
    run_toml(PIPELINE + '[[track]]\ntype = "recorder"\n', host=host, world=World(rank=1, size=2))
    assert Recorder.calls == []


def test_a_failed_run_finishes_its_trackers_with_its_status(run_toml):
    Recorder.calls = []
    host = create_host(plugins={"rec": RecorderPlugin()})
    with pytest.raises(Exception):
        run_toml(PIPELINE + '[[track]]\ntype = "recorder"\n', host=host,
                 overrides=["train.epochs=2", 'export.0.path="/proc/nope/x.parquet"'])
    assert Recorder.calls[-1] == ("finish", "failed")


def test_no_tracker_sweep_or_report_library_is_imported_until_used():
    code = ("import sys; from graphflow.manager import create_host; create_host(); "
            "from graphflow.cli.main import build_parser; build_parser(); "
            "print(sorted(m for m in ('mlflow', 'tensorboard', 'optuna', 'plotly') "
            "if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip() == "[]"
