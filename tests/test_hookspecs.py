"""Every hook is typed, documented in its spec and in docs/plugins.md, and called in a real run."""

import inspect
import re
from pathlib import Path

import pytest
import torch

from graphflow import hookspecs
from graphflow.components import Model, Sampler, Transform
from graphflow.config import load_config
from graphflow.errors import DataError
from graphflow.manager import create_host
from graphflow.plugin import hookimpl
from graphflow.runner import run_pipeline

ROOT = Path(__file__).resolve().parents[1]
SPECS = sorted(name for name in dir(hookspecs) if name.startswith("graphflow_"))


def test_there_are_hooks_for_every_kind_and_the_lifecycle():
    assert {f"graphflow_register_{k}" for k in
            ("loaders", "transforms", "samplers", "models", "tasks", "exporters",
             "trackers", "explainers")} <= set(SPECS)
    assert {"graphflow_pipeline_start", "graphflow_pipeline_end", "graphflow_stage_start",
            "graphflow_stage_end", "graphflow_pipeline_error"} <= set(SPECS)


@pytest.mark.parametrize("name", SPECS)
def test_spec_is_typed_and_its_docstring_lists_each_parameter(name):
    func = getattr(hookspecs, name)
    sig = inspect.signature(func)
    assert sig.return_annotation != inspect.Signature.empty
    doc = inspect.getdoc(func) or ""
    assert doc.splitlines()[0].strip()
    for param in sig.parameters.values():
        assert param.annotation != inspect.Parameter.empty, f"{name}({param.name}) is untyped"
        assert f":param {param.name}:" in doc, f"{name} does not document {param.name}"


@pytest.mark.parametrize("name", SPECS)
def test_spec_is_documented_in_plugins_md(name):
    docs = (ROOT / "docs" / "plugins.md").read_text()
    assert re.search(rf"^### {name}$", docs, re.M), f"docs/plugins.md has no section for {name}"
    params = ", ".join(inspect.signature(getattr(hookspecs, name)).parameters)
    section = docs.split(f"### {name}\n", 1)[1].split("\n### ", 1)[0]
    for param in inspect.signature(getattr(hookspecs, name)).parameters:
        assert f"{param}:" in section, f"docs signature of {name} lacks {param} ({params})"


class _Identity(Transform):
    """Returns the graph unchanged."""

    name = "identity_for_hook_test"
    summary = "no-op"

    def apply(self, data, ctx):
        return data


class _AllNodes(Sampler):
    """Samples nothing: returns the seeds."""

    name = "seeds_for_hook_test"
    summary = "no-op"

    def sample(self, graph, seeds):
        return seeds


class _Linear(Model):
    """A linear model."""

    name = "linear_for_hook_test"
    summary = "no-op"

    def build(self, in_dim, out_dim):
        return torch.nn.Linear(in_dim, out_dim)


class AllHooks:
    """Implements every hook and records each call."""

    def __init__(self):
        self.called = set()

    def _saw(self, name):
        self.called.add(name)

    @hookimpl
    def graphflow_register_loaders(self, register):
        self._saw("graphflow_register_loaders")

    @hookimpl
    def graphflow_register_transforms(self, register):
        self._saw("graphflow_register_transforms")
        register(_Identity)

    @hookimpl
    def graphflow_register_samplers(self, register):
        self._saw("graphflow_register_samplers")
        register(_AllNodes)

    @hookimpl
    def graphflow_register_models(self, register):
        self._saw("graphflow_register_models")
        register(_Linear)

    @hookimpl
    def graphflow_register_tasks(self, register):
        self._saw("graphflow_register_tasks")

    @hookimpl
    def graphflow_register_exporters(self, register):
        self._saw("graphflow_register_exporters")

    @hookimpl
    def graphflow_register_trackers(self, register):
        self._saw("graphflow_register_trackers")

    @hookimpl
    def graphflow_register_explainers(self, register):
        self._saw("graphflow_register_explainers")

    @hookimpl
    def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
        self._saw("graphflow_epoch_end")

    @hookimpl
    def graphflow_pipeline_start(self, ctx):
        self._saw("graphflow_pipeline_start")

    @hookimpl
    def graphflow_stage_start(self, ctx, stage):
        self._saw("graphflow_stage_start")

    @hookimpl
    def graphflow_stage_end(self, ctx, stage, seconds):
        self._saw("graphflow_stage_end")

    @hookimpl
    def graphflow_pipeline_end(self, ctx, record):
        self._saw("graphflow_pipeline_end")

    @hookimpl
    def graphflow_pipeline_error(self, ctx, stage, error):
        self._saw("graphflow_pipeline_error")


def test_every_hook_is_called_by_a_real_run(tmp_path, toy_plugin, toy_pipeline):
    plugin = AllHooks()
    host = create_host(plugins={"toy": toy_plugin, "all": plugin})
    path = tmp_path / "p.toml"
    path.write_text(toy_pipeline + """
[[transform]]
type = "identity_for_hook_test"
[sample]
type = "seeds_for_hook_test"
[model]
type = "linear_for_hook_test"
""")
    run_pipeline(load_config(path, host.registry, out_dir=tmp_path / "a"), host, quiet=True)
    with pytest.raises(DataError):
        config = load_config(path, host.registry, out_dir=tmp_path / "b",
                             overrides=['load.fail="data"'])
        run_pipeline(config, host, quiet=True)
    assert plugin.called == set(SPECS)
