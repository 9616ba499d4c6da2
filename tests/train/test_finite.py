"""Non-finite values stop every training task with one line: status failed, exit 1, nothing
exported (graphflow.train.finite, the shared epoch loop, the NaN feature check)."""

from __future__ import annotations

import json
import math
from dataclasses import dataclass

import pytest
import torch

from graphflow.components import Transform
from graphflow.errors import DataError, NumericalError
from graphflow.options import option
from graphflow.plugin import hookimpl
from graphflow.train import finite

BASE = """
[pipeline]
name = "finite"
seed = 0
device = "cpu"
[load]
type = "synthetic"
nodes = 300
classes = 3
features = 8
{transforms}
{sample}
[model]
type = "gcn"
hidden = 16
[train]
type = "{task}"
epochs = 6
lr = {lr}
{extra}
[[export]]
type = "parquet"
what = "{what}"
"""
SAMPLER = '[sample]\ntype = "neighbor"\nfanouts = [4, 4]\nbatch_size = 64'
SPLIT = '[[transform]]\ntype = "link_split"\nval = 0.1\ntest = 0.1'


def pipeline(task="node_classification", lr=0.01, sample="", transforms="", extra="",
             what="predictions"):
    if task == "link_prediction":
        transforms, what = transforms + "\n" + SPLIT, "embeddings"
    return BASE.format(task=task, lr=lr, sample=sample, transforms=transforms, extra=extra,
                       what=what)


def test_the_checks_name_the_value_the_epoch_and_the_fix():
    finite.check_epoch({"loss": 0.5, "train_acc": 1.0}, torch.nn.Linear(2, 2), epoch=3, fix="f")
    with pytest.raises(NumericalError, match=r"^the loss is NaN at epoch 3: training diverged; "
                                             r"lower lr; nothing was exported$"):
        finite.check_epoch({"loss": math.nan}, None, epoch=3, fix="lower lr")
    with pytest.raises(NumericalError, match="the val loss is \\+inf at epoch 2"):
        finite.check_epoch({"val_loss": math.inf, "val_acc": 0.1}, None, epoch=2, fix="x")
    layer = torch.nn.Linear(2, 2)
    with torch.no_grad():
        layer.weight[0, 1] = -math.inf
    with pytest.raises(NumericalError, match="the model's parameters hold NaN or infinite "
                                             "values at epoch 7"):
        finite.check_epoch({"loss": 0.1}, layer, epoch=7, fix="x")
    finite.check_output(torch.ones(3, 2), "logits", fix="x")
    bad = torch.ones(4, 2)
    bad[1, 0], bad[3, 1] = math.nan, math.inf
    with pytest.raises(NumericalError, match=r"the logits hold NaN or infinite values \(2 of 4 "
                                             r"rows\): training diverged; x"):
        finite.check_output(bad, "logits", fix="x")
    with pytest.raises(NumericalError, match=r"the skip-gram loss is NaN at epoch 1 \(walk "
                                             r"batch 2 of 5\)"):
        finite.check_loss(math.nan, "skip-gram loss", epoch=1, where="walk batch 2 of 5",
                          fix="x")


def _failed(cli, tmp_path, text):
    path = tmp_path / "p.toml"
    path.write_text(text)
    out = tmp_path / "out"
    code, _, err = cli("run", path, "--out-dir", out, "--quiet")
    record = json.loads((out / "run.json").read_text())
    return code, err, record, out


@pytest.mark.parametrize("task, sample", [("node_classification", ""),
                                          ("node_classification", SAMPLER),
                                          ("link_prediction", ""),
                                          ("link_prediction", SAMPLER)],
                         ids=["node-full", "node-sampled", "link-full", "link-sampled"])
def test_a_diverging_task_fails_in_one_line_and_exports_nothing(cli, tmp_path, task, sample):
    # Adam steps of about lr per weight: 1e38 overflows float32 within an epoch or two.
    code, err, record, out = _failed(cli, tmp_path, pipeline(task, lr=1e38, sample=sample))
    assert code == 1
    lines = [x for x in err.splitlines() if x.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith(f"graphflow: error: [train] {task}: the ")
    assert "at epoch " in lines[0] and "training diverged; lower lr (now 1e+38)" in lines[0]
    assert record["status"] == "failed" and "NumericalError" in record["error"]
    assert not list(out.glob("*.parquet"))
    assert [o["what"] for o in record["outputs"]] == ["record"]  # run.json only
    if (out / "checkpoint.pt").exists():  # the best model so far: never a NaN one
        state = torch.load(out / "checkpoint.pt", weights_only=True)["model"]
        assert all(torch.isfinite(v).all() for v in state.values() if v.is_floating_point())


def test_a_diverging_sparsify_fine_tune_fails_the_same_way(cli, tmp_path):
    text = pipeline().replace("[train]", "[[train]]") + """
[[train]]
type = "sparsify"
min_features = 4
finetune_epochs = 3
lr = 1e38
"""
    text = text.replace("hidden = 16", "hidden = 32")
    code, err, record, out = _failed(cli, tmp_path, text)
    assert code == 1, err
    assert "graphflow: error: [train.1] sparsify: the " in err and "at epoch " in err, err
    assert "training diverged" in err and record["status"] == "failed"
    assert not list(out.glob("*.parquet"))


class PoisonFeatures(Transform):
    """Sets one node feature to NaN (as a faulty third-party transform might)."""

    name = "poison"
    summary = "one NaN feature"

    @dataclass
    class Options:
        node: int = option(5, "node whose first feature becomes NaN")

    def apply(self, data, ctx):
        data.graph.ndata["feat"][self.options.node, 0] = float("nan")
        return data


class PoisonPlugin:
    @hookimpl
    def graphflow_register_transforms(self, register):
        register(PoisonFeatures)


@pytest.mark.parametrize("task", ["node_classification", "link_prediction"])
def test_nan_input_features_stop_training_up_front_naming_the_source(run_toml, task):
    from graphflow.manager import create_host

    host = create_host(plugins={"poison": PoisonPlugin()})
    text = pipeline(task, transforms='[[transform]]\ntype = "poison"\nnode = 7')
    with pytest.raises(DataError) as info:
        run_toml(text, host=host)
    message = str(info.value)
    assert message.startswith(f"[train] {task}: node features: ndata[\"feat\"] of the graph")
    assert "contain NaN or infinite values (first at internal node 7, 1 node(s) in all)" \
        in message


def test_loop_fails_before_a_nan_model_is_checkpointed(run_toml, tmp_path):
    """The parameter check runs before evaluation: a step that leaves the parameters NaN
    with a finite loss still never reaches checkpoint.pt or train_state.pt."""
    with pytest.raises(NumericalError):
        run_toml(pipeline(lr=1e38, extra="eval_every = 1"))
    out = tmp_path / "out"
    for name in ("checkpoint.pt", "train_state.pt"):
        if (out / name).exists():
            saved = torch.load(out / name, weights_only=True)["model"]
            assert all(torch.isfinite(v).all() for v in saved.values()
                       if v.is_floating_point()), name
