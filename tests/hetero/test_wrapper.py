"""A homogeneous model from a third-party plugin trains per relation under type = "hetero"."""

from dataclasses import dataclass

import pytest
import torch

from graphflow.components import Model
from graphflow.errors import ConfigError
from graphflow.manager import create_host
from graphflow.options import option
from graphflow.plugin import hookimpl
from graphflow.sparse import spmm
from graphflow.testing import TypedTestLoader


class MeanConv(torch.nn.Module):
    """A plugin's own layer, written against the homogeneous contract only:
    ``forward(adj, x) -> (num_dst, F_out)``, destinations first in ``x``."""

    def __init__(self, in_dim, out_dim, scale):
        super().__init__()
        self.lin = torch.nn.Linear(2 * in_dim, out_dim)
        self.scale = scale
        self.num_layers = 1

    def forward(self, adj, x):
        agg = spmm(adj, x, reduce="mean")  # (num_dst, F)
        return self.lin(torch.cat([x[: adj.num_dst], agg * self.scale], 1))


class MeanModel(Model):
    """Mean aggregation beside the node's own features."""

    name = "plugin_mean"
    summary = "a third-party homogeneous layer"

    @dataclass
    class Options:
        scale: float = option(1.0, "factor on the neighbour mean")

    def build(self, in_dim, out_dim):
        return MeanConv(in_dim, out_dim, self.options.scale)


class ThirdParty:
    @hookimpl
    def graphflow_register_models(self, register):
        register(MeanModel)

    @hookimpl
    def graphflow_register_loaders(self, register):
        register(TypedTestLoader)


@pytest.fixture
def host():
    return create_host(plugins={"thirdparty": ThirdParty()})


PIPELINE = """
[pipeline]
cores = 1
[load]
type = "typed_test"
[model]
type = "hetero"
layer = "{layer}"
hidden = 16
{extra}
[train]
type = "node_classification"
target = "paper"
epochs = 40
lr = 0.05
"""


@pytest.mark.parametrize("aggregate", ["sum", "stack"])
def test_third_party_layer_trains_under_the_wrapper(run_toml, host, aggregate):
    text = PIPELINE.format(layer="plugin_mean",
                           extra=f'aggregate = "{aggregate}"\nlayer_options = {{scale = 2.0}}')
    result = run_toml(text, host=host)
    assert result.ctx.metrics["train_acc"] > 0.9
    assert result.ctx.metrics["test_acc"] > 0.6  # 3 classes: chance is 1/3


def test_graphflow_layer_under_the_wrapper(run_toml, host):
    result = run_toml(PIPELINE.format(layer="sage", extra='aggregate = "mean"'), host=host)
    assert result.ctx.metrics["train_acc"] > 0.9


def test_a_typed_layer_cannot_be_wrapped(run_toml, host):
    with pytest.raises(ConfigError, match='layer = "rgcn" is itself a typed model'):
        run_toml(PIPELINE.format(layer="rgcn", extra=""), host=host)


def test_unknown_layer_names_the_choices(run_toml, host):
    with pytest.raises(ConfigError, match="plugin_mean"):
        run_toml(PIPELINE.format(layer="plugin_men", extra=""), host=host)
