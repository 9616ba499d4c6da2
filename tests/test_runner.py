"""Running a pipeline: stage order, lifecycle hooks, the run record, failures."""

import json

import pytest

from graphflow.config import load_config
from graphflow.errors import DataError, PluginError
from graphflow.plugin import hookimpl
from graphflow.runner import run_pipeline
from graphflow.sparse import gemm


class Recorder:
    """Records every lifecycle hook call."""

    def __init__(self):
        self.calls = []

    @hookimpl
    def graphflow_pipeline_start(self, ctx):
        self.calls.append(("pipeline_start", ctx.config.settings.name))

    @hookimpl
    def graphflow_stage_start(self, ctx, stage):
        self.calls.append(("stage_start", stage.section))

    @hookimpl
    def graphflow_stage_end(self, ctx, stage, seconds):
        assert seconds >= 0
        self.calls.append(("stage_end", stage.section))

    @hookimpl
    def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
        self.calls.append(("epoch_end", stage.section, epoch, metrics["loss"]))

    @hookimpl
    def graphflow_pipeline_end(self, ctx, record):
        self.calls.append(("pipeline_end", record["status"]))

    @hookimpl
    def graphflow_pipeline_error(self, ctx, stage, error):
        self.calls.append(("pipeline_error", stage.section if stage else None, str(error)))


def run(tmp_path, host, text, overrides=()):
    path = tmp_path / "p.toml"
    path.write_text(text)
    config = load_config(path, host.registry, overrides=list(overrides), out_dir=tmp_path / "out")
    return run_pipeline(config, host, quiet=True)


class GemmSpy:
    """Notes the dense-product backend in force while the pipeline's stages run."""

    def __init__(self):
        self.seen = []

    @hookimpl
    def graphflow_stage_start(self, ctx, stage):
        self.seen.append(gemm.current())


def test_the_gemm_choice_holds_for_the_run_and_is_undone_after(tmp_path, toy_host,
                                                               toy_pipeline):
    spy = GemmSpy()
    toy_host.pm.register(spy, name="gemm-spy")
    before = gemm.current()
    result = run(tmp_path, toy_host, toy_pipeline, overrides=["pipeline.gemm=torch"])
    assert result.record["gemm"] == {"requested": "torch", "backend": "torch",
                                     "source": "override"}
    assert set(spy.seen) == {"torch"}
    assert gemm.current() == before


def test_stages_run_in_order_and_hooks_see_them(tmp_path, toy_host, toy_pipeline):
    recorder = Recorder()
    toy_host.pm.register(recorder, name="recorder")
    result = run(tmp_path, toy_host, toy_pipeline)
    assert recorder.calls == [
        ("pipeline_start", "toy"),
        ("stage_start", "load"), ("stage_end", "load"),
        ("stage_start", "train"),
        ("epoch_end", "train", 1, 1.0), ("epoch_end", "train", 2, 0.5),
        ("epoch_end", "train", 3, 1 / 3),
        ("stage_end", "train"),
        ("stage_start", "export.0"), ("stage_end", "export.0"),
        ("pipeline_end", "ok"),
    ]
    assert result.ctx.artifacts.embeddings.shape == (6, 2)


def test_run_record(tmp_path, toy_host, toy_pipeline):
    result = run(tmp_path, toy_host, toy_pipeline)
    out = tmp_path / "out"
    record = json.loads((out / "run.json").read_text())
    assert record == result.record
    assert record["status"] == "ok" and record["name"] == "toy" and record["seed"] == 7
    assert record["device"] == "cpu"
    assert record["config"]["train"] == [{"type": "count", "epochs": 3, "lr": 0.1}]
    assert record["config_hash"] == result.ctx.config.digest()
    assert {"python", "graphflow", "torch", "dgl", "pyarrow"} <= set(record["versions"])
    assert [(s["section"], s["type"], s["plugin"]) for s in record["stages"]] == [
        ("load", "tiny", "toy"), ("train", "count", "toy"), ("export.0", "text", "toy")]
    assert all(s["seconds"] >= 0 for s in record["stages"])
    assert record["metrics"]["nodes"] == 6.0
    assert record["config"]["pipeline"]["allocator"] == "retain"
    assert record["allocator"]["allocator"] in ("retain", "system")  # system off glibc
    assert record["config"]["pipeline"]["gemm"] == "auto"
    assert record["gemm"]["requested"] == "auto"
    assert record["gemm"]["backend"] == gemm.resolve("auto")
    assert record["gemm"]["source"] == record["calibration"]["gemm"]["source"] == "off"
    assert set(record["gemm"].get("buckets", gemm.BUCKETS)) == set(gemm.BUCKETS)
    assert record["outputs"] == [
        {"path": str(tmp_path.resolve() / "emb.txt"), "what": "embeddings", "section": "export.0"},
        {"path": str(out / "metrics.jsonl"), "what": "epoch log", "section": ""},
        {"path": str(out / "run.json"), "what": "record", "section": "pipeline"},
    ]
    lines = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert lines == [{"stage": "train", "epoch": e, "loss": 1 / e} for e in (1, 2, 3)]
    assert (tmp_path / "emb.txt").read_text().splitlines()[0] == "2 1"  # node 0: in 2, out 1


def test_seed_makes_runs_repeatable(tmp_path, toy_host, toy_pipeline):
    a = run(tmp_path, toy_host, toy_pipeline).record["metrics"]["draw"]
    b = run(tmp_path, toy_host, toy_pipeline).record["metrics"]["draw"]
    c = run(tmp_path, toy_host, toy_pipeline, ["pipeline.seed=8"]).record["metrics"]["draw"]
    assert a == b != c


def test_metrics_log_restarts_unless_resuming(tmp_path, toy_host, toy_pipeline):
    run(tmp_path, toy_host, toy_pipeline)
    run(tmp_path, toy_host, toy_pipeline)
    assert len((tmp_path / "out" / "metrics.jsonl").read_text().splitlines()) == 3


def test_data_error_is_prefixed_with_the_section_and_recorded(tmp_path, toy_host, toy_pipeline):
    recorder = Recorder()
    toy_host.pm.register(recorder, name="recorder")
    with pytest.raises(DataError) as err:
        run(tmp_path, toy_host, toy_pipeline, ['load.fail="data"'])
    assert str(err.value) == "[load] tiny: edges.tsv:3: expected 2 columns, got 1"
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["status"] == "failed"
    assert record["error"] == "DataError: [load] tiny: edges.tsv:3: expected 2 columns, got 1"
    assert recorder.calls[-1][:2] == ("pipeline_error", "load")
    assert not (tmp_path / "emb.txt").exists()


def test_unexpected_exception_names_plugin_and_stage(tmp_path, toy_host, toy_pipeline):
    with pytest.raises(PluginError) as err:
        run(tmp_path, toy_host, toy_pipeline, ['load.fail="bug"'])
    assert str(err.value) == ('plugin "toy" failed in stage load (tiny): '
                              "ZeroDivisionError: division by zero")
    assert isinstance(err.value.__cause__, ZeroDivisionError)


def test_hook_failure_names_plugin_and_keeps_record(tmp_path, toy_host, toy_pipeline):
    class Crashy:
        @hookimpl
        def graphflow_stage_end(self, ctx, stage, seconds):
            if stage.section == "train":
                raise RuntimeError("tracker offline")

    toy_host.pm.register(Crashy(), name="crashy")
    with pytest.raises(PluginError, match='plugin "crashy" failed in hook graphflow_stage_end: '
                                          "RuntimeError: tracker offline"):
        run(tmp_path, toy_host, toy_pipeline)
    assert json.loads((tmp_path / "out" / "run.json").read_text())["status"] == "failed"


def test_error_in_error_hook_does_not_hide_the_original(tmp_path, toy_host, toy_pipeline):
    class Crashy:
        @hookimpl
        def graphflow_pipeline_error(self, ctx, stage, error):
            raise RuntimeError("alerting offline")

    toy_host.pm.register(Crashy(), name="crashy")
    with pytest.raises(DataError, match="expected 2 columns"):
        run(tmp_path, toy_host, toy_pipeline, ['load.fail="data"'])


def test_interrupt_is_recorded(tmp_path, toy_host, toy_pipeline):
    class Interrupt:
        @hookimpl
        def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
            raise KeyboardInterrupt

    toy_host.pm.register(Interrupt(), name="interrupt")
    with pytest.raises(KeyboardInterrupt):
        run(tmp_path, toy_host, toy_pipeline)
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["status"] == "interrupted"
    assert [s["section"] for s in record["stages"]] == ["load"]


def test_missing_artifact_names_what_exists(tmp_path, toy_host):
    text = '[load]\ntype="tiny"\n[[export]]\ntype="text"\nwhat="logits"\npath="x.txt"\n'
    with pytest.raises(Exception) as err:
        run(tmp_path, toy_host, text)
    assert str(err.value) == ("export.0: no 'logits' artifact to use; the stages before it "
                              "produced: none")


def test_chained_train_stages_share_the_context(tmp_path, toy_host):
    text = ('[load]\ntype="tiny"\n[[train]]\ntype="count"\nepochs=1\n'
            '[[train]]\ntype="count"\nepochs=2\n')
    result = run(tmp_path, toy_host, text)
    assert [s["section"] for s in result.record["stages"]] == ["load", "train.0", "train.1"]
    lines = (tmp_path / "out" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(line)["stage"] for line in lines] == ["train.0", "train.1", "train.1"]
