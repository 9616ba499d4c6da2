"""The plugin host: entry points, first-party plugins, autoload switch, blocking, blame."""

import sys
import textwrap
from importlib import metadata

import pytest

from graphflow import manager
from graphflow.errors import PluginError
from graphflow.manager import AUTOLOAD_ENV, BLOCK_ENV, create_host

FIRST_PARTY = {"loaders", "transforms", "samplers", "models", "tasks", "embeddings", "exporters"}

THIRD_PARTY_SOURCE = '''
from dataclasses import dataclass
from graphflow.components import Transform
from graphflow.plugin import hookimpl


class Shout(Transform):
    """Does nothing, loudly."""

    name = "shout_{suffix}"
    summary = "a third-party transform"

    def apply(self, data, ctx):
        return data


@hookimpl
def graphflow_register_transforms(register):
    register(Shout)
'''


@pytest.fixture
def fake_entry_points(tmp_path, monkeypatch):
    """Add entry points of a fake third-party distribution, in-process."""
    monkeypatch.syspath_prepend(str(tmp_path))
    real = metadata.entry_points
    extra = []

    def add(name: str, source: str) -> None:
        module = f"gf_fake_{name}"
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        sys.modules.pop(module, None)
        extra.append(metadata.EntryPoint(name=name, value=module, group="graphflow"))

    def entry_points(**kwargs):
        eps = real(**kwargs)
        if kwargs.get("group") == "graphflow":
            return list(eps) + extra
        return eps

    monkeypatch.setattr(manager.metadata, "entry_points", entry_points)
    return add


def test_first_party_plugins_come_from_the_graphflow_distribution():
    host = create_host()
    first = {name for name, info in host.plugins.items() if info.first_party}
    assert first == FIRST_PARTY
    for name in first:
        info = host.plugins[name]
        assert info.dist == "graphflow" and info.version
        assert info.source.endswith("__init__.py") and "plugins" in info.source


def test_each_call_builds_a_fresh_manager():
    a, b = create_host(), create_host()
    assert a.pm is not b.pm and a.registry is not b.registry


def test_third_party_entry_points_are_loaded(fake_entry_points):
    fake_entry_points("acme", THIRD_PARTY_SOURCE.format(suffix="acme"))
    host = create_host()
    assert host.plugins["acme"].first_party is False
    assert host.registry.get("transform", "shout_acme").plugin == "acme"


def test_autoload_switch_keeps_first_party(fake_entry_points, monkeypatch):
    fake_entry_points("acme", THIRD_PARTY_SOURCE.format(suffix="acme"))
    monkeypatch.setenv(AUTOLOAD_ENV, "1")
    host = create_host()
    assert "acme" not in host.plugins
    assert FIRST_PARTY <= set(host.plugins)
    assert create_host(autoload=True).plugins["acme"]


def test_block_list_by_name(fake_entry_points, monkeypatch):
    fake_entry_points("acme", THIRD_PARTY_SOURCE.format(suffix="acme"))
    fake_entry_points("zeta", THIRD_PARTY_SOURCE.format(suffix="zeta"))
    monkeypatch.setenv(BLOCK_ENV, "acme, embeddings")
    host = create_host()
    assert "acme" not in host.plugins and "embeddings" not in host.plugins
    assert "zeta" in host.plugins
    assert "zeta" not in create_host(block=["zeta"]).plugins


def test_plugin_that_fails_to_import_is_named(fake_entry_points):
    fake_entry_points("broken", "import no_such_module_xyz\n")
    with pytest.raises(PluginError) as err:
        create_host()
    assert 'plugin "broken" failed to import (gf_fake_broken)' in str(err.value)
    assert "No module named 'no_such_module_xyz'" in str(err.value)


def test_unknown_hook_is_named(fake_entry_points):
    fake_entry_points("typo", """
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_loader(register):
            pass
    """)
    with pytest.raises(PluginError) as err:
        create_host()
    assert 'plugin "typo" failed in hook validation' in str(err.value)
    assert "graphflow_register_loader" in str(err.value)


def test_catalogue_hook_failure_is_named(fake_entry_points):
    fake_entry_points("crashy", """
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_models(register):
            raise RuntimeError("model zoo offline")
    """)
    with pytest.raises(PluginError) as err:
        create_host()
    assert str(err.value) == ('plugin "crashy" failed in hook graphflow_register_models: '
                              "RuntimeError: model zoo offline")


def test_missing_installation_is_explained(monkeypatch):
    monkeypatch.setattr(manager.metadata, "entry_points", lambda **kw: [])
    with pytest.raises(Exception, match="pip install -e ."):
        create_host()


def test_broadcast_blames_the_raising_plugin(toy_host):
    class Bad:
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_pipeline_start(self, ctx):
            raise ValueError("bad start")

    toy_host.pm.register(Bad(), name="bad")
    with pytest.raises(PluginError) as err:
        toy_host.broadcast("graphflow_pipeline_start", ctx=None)
    assert str(err.value) == 'plugin "bad" failed in hook graphflow_pipeline_start: ValueError: bad start'
    assert err.value.plugin == "bad"
