"""Errors name the component that failed: a third-party model, sampler or helper module that a
first-party task calls is named in the one-line message, with its plugin, task and stage."""

import sys
import textwrap

import pytest

from graphflow.errors import DataError, PluginError
from graphflow.manager import create_host

PLUGIN = '''
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.components import Model, Sampler
from graphflow.options import option
from graphflow.plugin import hookimpl
from graphflow.sparse import spmm
from gf_blame.helpers import propagate


class Broken(nn.Module):
    def __init__(self, in_dim, out_dim, how):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)
        self.how = how

    def forward(self, adj, x):
        if self.how == "forward":
            return F.dropout(adj, 0.5, self.training)  # TypeError inside torch
        if self.how == "spmm":
            return spmm(adj, self.lin(x)[:3])  # DataError from graphflow's spmm
        return propagate(adj, self.lin(x))  # a helper module of the same package


class BrokenModel(Model):
    """Fails in build, in forward, or in graphflow code it calls."""

    name = "broken"
    summary = "a model that fails on purpose"

    @dataclass
    class Options:
        how: str = option("forward", "build | forward | spmm | helper")

    def build(self, in_dim, out_dim):
        if self.options.how == "build":
            raise ValueError("no such layer")
        return Broken(in_dim, out_dim, self.options.how)


class BrokenSampler(Sampler):
    """A sampler whose sample() fails."""

    name = "broken_sampler"
    summary = "fails in sample()"

    @dataclass
    class Options:
        batch_size: int = option(4, "seeds per batch")

    def sample(self, graph, seeds):
        raise RuntimeError("out of fanouts")


@hookimpl
def graphflow_register_models(register):
    register(BrokenModel)


@hookimpl
def graphflow_register_samplers(register):
    register(BrokenSampler)
'''

HELPERS = '''
def propagate(adj, h):
    raise KeyError("weights")
'''

PIPELINE = """
[load]
type = "synthetic"
nodes = 40
classes = 2
features = 4
[model]
type = "broken"
how = "{how}"
[train]
type = "node_classification"
epochs = 2
"""


@pytest.fixture
def mymodels(tmp_path, monkeypatch):
    """An installed third-party distribution "my-models": its package (plugin module and a
    helper module) and its .dist-info with the entry point, on sys.path as site-packages
    would hold them, so that importlib.metadata finds the entry point as for any install."""
    site = tmp_path / "site"
    package = site / "gf_blame"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "plugin.py").write_text(textwrap.dedent(PLUGIN))
    (package / "helpers.py").write_text(textwrap.dedent(HELPERS))
    info = site / "my_models-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: my-models\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[graphflow]\nmymodels = gf_blame.plugin\n")
    monkeypatch.syspath_prepend(str(site))
    for name in ("gf_blame", "gf_blame.plugin", "gf_blame.helpers"):
        sys.modules.pop(name, None)
    return create_host()


@pytest.mark.parametrize("how, error", [("forward", "TypeError: dropout"),
                                        ("build", "ValueError: no such layer")])
def test_a_failing_model_is_named_with_its_plugin_task_and_stage(run_toml, mymodels, how,
                                                                 error):
    with pytest.raises(PluginError) as err:
        run_toml(PIPELINE.format(how=how), host=mymodels)
    message = str(err.value)
    assert message.startswith('plugin "mymodels" (from my-models), model "broken", failed in '
                              f"stage train (node_classification): {error}"), message
    assert "\n" not in message and err.value.plugin == "mymodels"


def test_a_helper_module_of_the_plugin_package_names_it(run_toml, mymodels):
    """The innermost frame is in gf_blame.helpers, which defines no component: the package
    is the plugin's, and the model is the one component of that plugin in use."""
    with pytest.raises(PluginError, match=r'^plugin "mymodels" \(from my-models\), model '
                                          r'"broken", failed in stage train '
                                          r"\(node_classification\): KeyError: 'weights'"):
        run_toml(PIPELINE.format(how="helper"), host=mymodels)


def test_a_graphflow_error_inside_the_model_names_it(run_toml, mymodels):
    with pytest.raises(DataError, match=r'^\[train\] node_classification: model "broken" '
                                        r'\(plugin "mymodels" \(from my-models\)\): features '
                                        r"have 3 rows but the adjacency has 40 source nodes"):
        run_toml(PIPELINE.format(how="spmm"), host=mymodels)


def test_a_failing_sampler_is_named(run_toml, mymodels):
    text = PIPELINE.format(how="forward").replace('how = "forward"', "") \
        .replace("[model]\ntype = \"broken\"", '[model]\ntype = "sage"') \
        + '[sample]\ntype = "broken_sampler"\n'
    with pytest.raises(PluginError, match=r'^plugin "mymodels" \(from my-models\), sampler '
                                          r'"broken_sampler", failed in stage train '
                                          r"\(node_classification\): RuntimeError: out of "
                                          r"fanouts"):
        run_toml(text, host=mymodels)


def test_the_cli_prints_one_line(mymodels, tmp_path, cli):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(how="forward"))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out", "--quiet")
    assert code == 1
    first, hint = err.splitlines()
    assert first.startswith('graphflow: error: plugin "mymodels" (from my-models), model '
                            '"broken", failed in stage train (node_classification): TypeError: ')
    assert hint == "graphflow: run again with --debug for the traceback"
