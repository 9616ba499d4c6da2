"""The supervised task base: shared options and their one wording, inherited option schemas,
defaults by mode and task-preferred model defaults (resolved when the pipeline is read), and
a task written on the base from its docstring's recipe trained end to end."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest
import torch

from graphflow.components import Model
from graphflow.context import RunContext, Stage
from graphflow.errors import ConfigError
from graphflow.options import describe_options, option, parse_options
from graphflow.train.objective import Objective
from graphflow.train.task import (MINIBATCH_INFERENCE_BATCH, SupervisedOptions, SupervisedTask,
                                  check_at_least, evaluation, lower_is_better, options_record,
                                  split_figures)


def parse(schema, **values):
    return parse_options(schema, values, section="train", component="t", source="p.toml",
                         base_dir=Path("."))


@pytest.mark.parametrize("values, message", [
    ({"epochs": -1}, "epochs must be >= 0, got -1"),
    ({"lr": 0.0}, "lr must be > 0, got 0.0"),
    ({"weight_decay": -1.0}, "weight_decay must be >= 0, got -1.0"),
    ({"eval_every": 0}, "eval_every must be >= 1, got 0"),
    ({"patience": -2}, r"patience must be >= 0 \(0 = no early stopping\), got -2"),
    ({"inference_batch_size": -5}, "inference_batch_size must be >= 0, got -5"),
    ({"sparse_threshold": 1.5}, r"sparse_threshold must lie in \[0, 1\], got 1.5"),
])
def test_shared_options_one_wording_for_every_task(values, message):
    from graphflow_plugins.tasks.link_prediction import LinkPredictionOptions
    from graphflow_plugins.tasks.node_classification import NodeClassificationOptions

    for schema in (SupervisedOptions, NodeClassificationOptions, LinkPredictionOptions):
        with pytest.raises(ConfigError, match=rf"p.toml: \[train\] t: {message}$"):
            parse(schema, **values)


@dataclass
class DemoOptions(SupervisedOptions):
    epochs: int = option(7, "Epochs of the demo.")
    monitor: Literal["val_loss", "val_r2"] = option("val_loss", "Picks the best model.")
    width: int = option(3, "A task's own option.")

    def __post_init__(self) -> None:
        super().__post_init__()
        check_at_least(self, 1, "width")


def test_inherited_options_keep_their_place_and_take_the_new_defaults():
    infos = describe_options(DemoOptions)
    names = [i.name for i in infos]
    assert names[:3] == ["epochs", "lr", "weight_decay"] and names[-1] == "width"
    by_name = {i.name: i for i in infos}
    assert by_name["epochs"].default == 7 and by_name["epochs"].doc == "Epochs of the demo."
    assert by_name["monitor"].type == '"val_loss" | "val_r2"'
    with pytest.raises(ConfigError, match=r'monitor: expected "val_loss" \| "val_r2", got '
                                          r'"val_acc"'):
        parse(DemoOptions, monitor="val_acc")
    with pytest.raises(ConfigError, match="width must be >= 1, got 0"):
        parse(DemoOptions, width=0)
    assert parse(DemoOptions, lr=0.1).lr == 0.1


class LinearModel(Model):
    name = "demo_linear"
    summary = "x W (no message passing)"

    def build(self, in_dim: int, out_dim: int) -> torch.nn.Module:
        return Linear(in_dim, out_dim)


class Linear(torch.nn.Linear):
    def forward(self, adj, x):  # noqa: ARG002 - the model contract passes the adjacency
        return super().forward(x)


class DemoRegression(SupervisedTask):
    """Fits node features' row sums: the base's recipe, written as a new task would."""

    name = "demo_regression"
    summary = "demo"
    Options = DemoOptions

    def build_model(self, ctx):
        return self.require_model(ctx).build(self.node_features(ctx).shape[1], 1)

    def fit(self, ctx, model, *, epochs=None, lr=None):
        x = self.node_features(ctx)
        y = x.sum(1, keepdim=True)
        model = model.to(ctx.device)
        optimizer = self.optimizer(model, lr=lr)
        generator = self.generator(ctx)
        meta = self.meta(ctx, in_dim=int(x.shape[1]))
        loop = self.epoch_loop(ctx, model, optimizer, meta, generator=generator, epochs=epochs)

        def train_epoch(epoch):
            model.train()
            loss = torch.nn.functional.mse_loss(model(None, x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return {"loss": loss.item()}

        def evaluate():
            with torch.no_grad():
                mse = torch.nn.functional.mse_loss(model(None, x), y).item()
            return {"val_loss": mse}, mse

        best = loop.run(train_epoch, evaluate)
        return self.log_results(ctx, {"test_mse": evaluate()[1]}, best.epoch)


def demo_context(tmp_path, host, resume=False):
    from graphflow.config import load_config

    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetic"\nnodes = 30\nfeatures = 4\n'
                    '[model]\ntype = "gcn"\n[train]\ntype = "node_classification"\n')
    config = load_config(path, host.registry, out_dir=tmp_path / "out")
    ctx = RunContext(config=config, host=host, device=torch.device("cpu"), seed=0,
                     rng=torch.Generator().manual_seed(0), out_dir=tmp_path / "out",
                     quiet=True, resume=resume)
    ctx.data = config.load.build().load(ctx)
    ctx.model = LinearModel()
    ctx.stage = Stage(section="train.1", kind="task", type="demo_regression", plugin="test")
    return ctx


def test_a_task_on_the_base_trains_checkpoints_and_resumes(tmp_path, host):
    ctx = demo_context(tmp_path, host)
    assert ctx.section == "train.1"
    task = DemoRegression(DemoOptions(epochs=30, lr=0.1, weight_decay=0.0))
    task.run(ctx)
    m = ctx.metrics
    assert m["test_mse"] < 1.0 and 1 <= m["best_epoch"] <= 30
    assert (tmp_path / "out" / "checkpoint-train.1.pt").exists()  # the shared loop's files
    state = torch.load(tmp_path / "out" / "train_state-train.1.pt", weights_only=True)
    assert state["meta"] == {"task": "demo_regression", "model": "demo_linear",
                             "model_options": {}, "features": "feat", "in_dim": 4,
                             "monitor": "val_loss"}
    # A monitor ending in _loss is minimised, any other maximised.
    assert task.epoch_loop(ctx, torch.nn.Linear(1, 1), None, {},
                           generator=task.generator(ctx)).options.minimize
    r2 = DemoRegression(DemoOptions(monitor="val_r2"))
    assert not r2.epoch_loop(ctx, torch.nn.Linear(1, 1), None, {},
                             generator=task.generator(ctx), epochs=3).options.minimize


def test_inference_batch_and_layerwise_check(tmp_path, host):
    ctx = demo_context(tmp_path, host)
    task = DemoRegression(DemoOptions())
    assert task.inference_batch_size(ctx) == 0
    ctx.sampler = object()
    assert task.inference_batch_size(ctx) == MINIBATCH_INFERENCE_BATCH
    with pytest.raises(ConfigError, match="model 'demo_linear' has no layer-wise inference, so "
                                          "it can neither train on sampled blocks nor run "
                                          "inference in batches"):
        task.check_layerwise(ctx, Linear(1, 1))
    ctx.sampler = None
    task.check_layerwise(ctx, Linear(1, 1))  # full batch, whole graph: fine
    ctx.model = None
    with pytest.raises(ConfigError, match=r"\[train.1\] demo_regression needs a \[model\] "
                                          r"section \(the encoder\)"):
        task.require_model(ctx, "the encoder")


def test_options_record_is_plain_data():
    @dataclass
    class O:
        path: Path = Path("/x")
        hidden: list = None

    assert options_record(O(hidden=[1])) == {"path": "/x", "hidden": [1]}
    assert options_record(None) == {}


def test_one_monitor_rule_and_one_naming_of_split_figures():
    # the direction: losses and errors are minimised, every other figure maximised
    assert [lower_is_better(f) for f in ("val_loss", "val_mae", "val_rmse", "val_mr",
                                         "val_mr/cites", "val_acc", "val_f1_macro",
                                         "val_roc_auc", "val_mrr", "val_hits@10")] == \
        [True] * 5 + [False] * 5
    # the naming: <split>_loss first, then the objective's report
    objective = Objective("classes", 2)
    scores, y = torch.tensor([[2.0, 0.0], [0.0, 1.0], [1.0, 0.0]]), torch.tensor([0, 1, 1])
    figures = evaluation("val", objective, scores, y)
    assert list(figures) == ["val_loss", "val_acc", "val_f1_macro", "val_roc_auc"]
    assert figures["val_acc"] == pytest.approx(2 / 3)
    assert list(evaluation("test", objective, scores, y, loss=False)) == \
        ["test_acc", "test_f1_macro", "test_roc_auc"]
    assert split_figures("val", {"auc": 0.5}, loss=1.0) == {"val_loss": 1.0, "val_auc": 0.5}
    # the monitor: one of the reported figures ("auto": the targets' default), or refused
    task = DemoRegression(DemoOptions(monitor="val_r2"))
    assert task.resolve_monitor("train", ["val_loss", "val_r2"]) == "val_r2"
    assert task.monitored({"val_loss": 0.3, "val_r2": 0.9}) == 0.9
    with pytest.raises(ConfigError, match=r'^\[train\] monitor = "val_r2" is not a figure of '
                                          r"these targets; choose one of val_loss, val_mae$"):
        task.resolve_monitor("train", ["val_loss", "val_mae"])
    aliased = DemoRegression(DemoOptions(monitor="val_loss"))
    assert aliased.resolve_monitor("train", ["val_mse"], aliases={"val_loss": "val_mse"}) \
        == "val_mse" and aliased.monitor_name == "val_mse"
