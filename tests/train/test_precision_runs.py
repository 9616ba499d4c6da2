"""Every task trains on the one Step: bf16 autocast on the CPU reaches node (full batch,
sampled, typed sampled), link and graph training, ``auto`` says what it chose, and a
precision that cannot run is refused when the pipeline is read."""

from __future__ import annotations

import json

import pytest
import torch

from graphflow.testing import NODE_SAMPLER, graph_pipeline, link_pipeline, node_pipeline
from graphflow.train import step as step_module

CPU = 'device = "cpu"'
NO_CHECKPOINT = "checkpoint = false"


def node(sample="", model="gcn", epochs=20, train=""):
    return node_pipeline(sample=sample, model=model, epochs=epochs, header=CPU,
                         train=f"{NO_CHECKPOINT}\n{train}")


def link(train=""):
    return link_pipeline(header=CPU, train=f"{NO_CHECKPOINT}\n{train}")


def graphs(train=""):
    return graph_pipeline(train_extra=f"split = [0.5, 0.25, 0.25]\n{NO_CHECKPOINT}\n{train}")


TYPED = """
[pipeline]
cores = 1
device = "cpu"
[load]
type = "typed_test"
[sample]
type = "typed_neighbor"
fanouts = [5, {cites = 3, rev-in = 1}]
batch_size = 16
[model]
type = "rgcn"
hidden = 16
[train]
type = "node_classification"
target = "paper"
epochs = 8
lr = 0.05
checkpoint = false
precision = "bf16-mixed"
"""


@pytest.fixture
def autocasts(monkeypatch):
    """The precisions of every autocast the Step and the tasks entered (the real autocast
    runs: this only records)."""
    seen: list[str] = []
    real = step_module.autocast

    def spy(precision, device):
        seen.append(precision)
        return real(precision, device)

    monkeypatch.setattr(step_module, "autocast", spy)
    import graphflow.train.task as task_module
    monkeypatch.setattr(task_module, "autocast", spy)
    return seen


def test_node_full_batch_in_bf16(run_toml, autocasts):
    result = run_toml(node(sample="", model="gcn", epochs=20,
                                  train='precision = "bf16-mixed"'))
    assert result.ctx.metrics["test_acc"] > 0.85
    assert autocasts and set(autocasts) == {"bf16-mixed"}  # every step and evaluation
    assert result.ctx.artifacts.logits.dtype == torch.float32


def test_node_sampled_in_bf16_with_clipping(run_toml, autocasts):
    result = run_toml(node(sample=NODE_SAMPLER, model="sage", epochs=4,
                                  train='precision = "bf16-mixed"\nclip_grad_norm = 1.0'))
    assert result.ctx.metrics["test_acc"] > 0.7  # 3 classes
    assert autocasts and set(autocasts) == {"bf16-mixed"}


def test_typed_sampled_training_runs_under_autocast(run_toml, typed_host, autocasts):
    result = run_toml(TYPED, host=typed_host)
    assert result.ctx.metrics["train_acc"] > 0.8
    assert autocasts.count("bf16-mixed") >= 8  # every batch of every epoch, and predictions


def test_link_prediction_in_bf16(run_toml, autocasts):
    result = run_toml(link(train='precision = "bf16-mixed"'))
    assert result.ctx.metrics["test_auc"] > 0.8
    assert set(autocasts) == {"bf16-mixed"}
    assert result.ctx.artifacts.embeddings.dtype == torch.float32


def test_graph_classification_in_bf16(run_toml, autocasts):
    result = run_toml(graphs(train='precision = "bf16-mixed"'))
    assert result.ctx.metrics["test_acc"] >= 0.75
    assert set(autocasts) == {"bf16-mixed"}
    assert result.ctx.artifacts.logits.dtype == torch.float32


@pytest.mark.parametrize("native", [False, True])
def test_auto_says_what_it_chose(cli, tmp_path, monkeypatch, native):
    monkeypatch.setattr(step_module, "cpu_has_native_bf16", lambda: native)
    path = tmp_path / "p.toml"
    path.write_text(node(sample="", model="gcn", epochs=2, train='precision = "auto"'))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 0, err
    lines = [x for x in err.splitlines() if 'precision = "auto"' in x]
    # calibration is off in the tests: bf16 is chosen only where it was measured faster
    if native:
        assert lines == ['[train] precision = "auto": fp32 (the CPU has AVX512-BF16 or AMX, '
                         'but bf16 was not measured faster here (off))']
    else:
        assert lines == ['[train] precision = "auto": fp32 (the CPU has neither AVX512-BF16 '
                         'nor AMX)']
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["reports"]["precision"]["train"]["used"] == "fp32"


def test_auto_takes_bf16_where_the_calibration_measured_it_faster(cli, tmp_path,
                                                                    monkeypatch):
    from graphflow.runtime import calibrate

    monkeypatch.setattr(step_module, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setattr(calibrate, "bf16_choice", lambda budget, how=None, native=None: {
        "bf16": True, "ms": {"fp32": 10.0, "bf16": 6.0}, "budget": budget,
        "source": "calibrated"})
    path = tmp_path / "p.toml"
    path.write_text(node(sample="", model="gcn", epochs=2, train='precision = "auto"'))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 0, err
    lines = [x for x in err.splitlines() if 'precision = "auto"' in x]
    assert lines == ['[train] precision = "auto": bf16-mixed (the CPU has AVX512-BF16 or AMX; '
                     'calibration: 6.0 ms bf16 vs 10.0 ms fp32 a step)']


def test_auto_follows_a_calibration_that_found_bf16_slower(cli, tmp_path, monkeypatch):
    from graphflow.runtime import calibrate

    monkeypatch.setattr(step_module, "cpu_has_native_bf16", lambda: True)
    monkeypatch.setattr(calibrate, "bf16_choice", lambda budget, how=None, native=None: {
        "bf16": False, "ms": {"fp32": 10.0, "bf16": 12.5}, "budget": budget,
        "source": "measured"})
    path = tmp_path / "p.toml"
    path.write_text(node(sample="", model="gcn", epochs=2, train='precision = "auto"'))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 0, err
    lines = [x for x in err.splitlines() if 'precision = "auto"' in x]
    assert lines == ['[train] precision = "auto": fp32 (the CPU has AVX512-BF16 or AMX, but '
                     'bf16 was no faster (calibration: 12.5 ms bf16 vs 10.0 ms fp32 a step))']


def test_fp16_on_a_cpu_machine_is_refused_when_the_pipeline_is_read(cli, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    path = tmp_path / "p.toml"
    for text in (node(sample="", model="gcn", epochs=2,
                             train='precision = "fp16-mixed"'),
                 link(train='precision = "fp16-mixed"'),
                 graphs(train='precision = "fp16-mixed"')):
        path.write_text(text)
        code, out, err = cli("validate", path)
        assert code != 0 and "Traceback" not in err
        lines = [x for x in err.splitlines() if "fp16-mixed" in x]
        assert len(lines) == 1 and 'use "bf16-mixed"' in lines[0], err


def test_amp_and_precision_together_are_refused(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(node(sample="", model="gcn", epochs=2,
                                train='amp = true\nprecision = "bf16-mixed"'))
    code, _, err = cli("validate", path)
    assert code != 0 and "former spelling" in err and "Traceback" not in err
