"""The plugin host: entry points, first-party plugins, autoload switch, blocking, blame."""

import pytest

from graphflow import manager
from graphflow.errors import PluginError, UnknownComponentError
from graphflow.manager import AUTOLOAD_ENV, BLOCK_ENV, create_host

FIRST_PARTY = {"loaders", "transforms", "samplers", "models", "tasks", "embeddings", "exporters",
               "trackers", "explainers"}

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


def test_plugin_that_fails_to_import_is_skipped_with_one_line(fake_entry_points, capsys):
    fake_entry_points("acme", THIRD_PARTY_SOURCE.format(suffix="acme"))
    fake_entry_points("broken", "import no_such_module_xyz\n", dist="broken-gnn")
    host = create_host()
    assert "broken" not in host.plugins and host.plugins["acme"]
    assert host.registry.get("loader", "planetoid").plugin == "loaders"
    broken = host.broken["broken"]
    assert (broken.dist, broken.version, broken.first_party) == ("broken-gnn", "1.0", False)
    assert broken.failed == "to import (gf_fake_broken)"
    assert broken.error == "ModuleNotFoundError: No module named 'no_such_module_xyz'"
    err = capsys.readouterr().err
    assert err == ('graphflow: warning: plugin "broken" (from broken-gnn 1.0) failed to import '
                   "(gf_fake_broken): ModuleNotFoundError: No module named 'no_such_module_xyz'; "
                   "going on without it (fix: set GRAPHFLOW_BLOCK_PLUGINS=broken to skip it, or "
                   "pip uninstall broken-gnn)\n")


def test_warn_takes_the_lines_instead_of_stderr(fake_entry_points, capsys):
    fake_entry_points("broken", "raise ImportError('needs torch_scatter')\n")
    lines: list[str] = []
    create_host(warn=lines.append)
    assert capsys.readouterr().err == ""
    assert len(lines) == 1 and "ImportError: needs torch_scatter" in lines[0]


def test_data_parallel_workers_other_than_rank_0_stay_quiet(fake_entry_points, capsys,
                                                            monkeypatch):
    fake_entry_points("broken", "import no_such_module_xyz\n")
    monkeypatch.setenv("RANK", "1")
    assert create_host().broken
    assert capsys.readouterr().err == ""
    monkeypatch.setenv("RANK", "0")
    create_host()
    assert capsys.readouterr().err.count("\n") == 1


def test_a_blocked_broken_plugin_is_not_imported_nor_reported(fake_entry_points, capsys,
                                                              monkeypatch):
    fake_entry_points("broken", "import no_such_module_xyz\n")
    monkeypatch.setenv(BLOCK_ENV, "broken")
    host = create_host()
    assert not host.broken and capsys.readouterr().err == ""


def test_unknown_component_names_the_broken_plugin(fake_entry_points):
    fake_entry_points("broken", "import no_such_module_xyz\n", dist="broken-gnn")
    host = create_host(warn=lambda line: None)
    with pytest.raises(UnknownComponentError) as err:
        host.registry.get("model", "fancy", where="p.toml: model.type")
    assert str(err.value).startswith(
        'p.toml: model.type: unknown model type "fancy"; plugin "broken" (from broken-gnn 1.0) '
        "may provide it but failed to import (gf_fake_broken): ModuleNotFoundError: No module "
        "named 'no_such_module_xyz'; choices: ")


def test_unknown_hook_skips_the_plugin(fake_entry_points):
    fake_entry_points("typo", """
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_loader(register):
            pass
    """)
    host = create_host(warn=lambda line: None)
    assert "typo" not in host.plugins and host.pm.get_plugin("typo") is None
    assert host.broken["typo"].failed == "in hook validation"
    assert "graphflow_register_loader" in host.broken["typo"].error


def test_catalogue_hook_failure_skips_the_whole_plugin(fake_entry_points):
    fake_entry_points("crashy", THIRD_PARTY_SOURCE.format(suffix="crashy") + """

@hookimpl
def graphflow_register_models(register):
    raise RuntimeError("model zoo offline")


@hookimpl
def graphflow_pipeline_start(ctx):
    raise AssertionError("a skipped plugin's hooks never run")
""")
    lines: list[str] = []
    host = create_host(warn=lines.append)
    assert lines == ['plugin "crashy" (from gf-fake-crashy 1.0) failed in hook '
                     "graphflow_register_models: RuntimeError: model zoo offline; going on "
                     "without it (fix: set GRAPHFLOW_BLOCK_PLUGINS=crashy to skip it, or pip "
                     "uninstall gf-fake-crashy)"]
    # its transform, registered by an earlier catalogue hook, went with it
    assert host.registry.find("shout_crashy") == [] and "crashy" not in host.plugins
    host.broadcast("graphflow_pipeline_start", ctx=None)


def test_a_name_clash_skips_the_second_plugin(fake_entry_points):
    fake_entry_points("clash", THIRD_PARTY_SOURCE.replace('"shout_{suffix}"', '"self_loops"'))
    lines: list[str] = []
    host = create_host(warn=lines.append)
    assert host.registry.get("transform", "self_loops").plugin == "transforms"
    assert len(lines) == 1
    assert lines[0].startswith('plugin "clash" (from gf-fake-clash 1.0) failed in hook '
                               'graphflow_register_transforms: plugin "clash" registers '
                               'transform "self_loops", which plugin "transforms" already '
                               "registered")


def test_a_hook_with_wrong_arguments_skips_the_plugin(fake_entry_points):
    fake_entry_points("argy", """
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_models(registar):
            pass
    """)
    host = create_host(warn=lambda line: None)
    assert "argy" not in host.plugins and host.pm.get_plugin("argy") is None
    assert host.broken["argy"].failed == "in registration"
    assert "registar" in host.broken["argy"].error


def test_a_second_plugin_of_the_same_name_is_skipped_not_the_first(fake_entry_points):
    fake_entry_points("acme", THIRD_PARTY_SOURCE.format(suffix="acme"))
    fake_entry_points("models", THIRD_PARTY_SOURCE.format(suffix="impostor"), dist="impostor")
    lines: list[str] = []
    host = create_host(warn=lines.append)
    assert host.plugins["models"].first_party and host.registry.get("model", "gcn")
    assert host.registry.find("shout_impostor") == [] and host.plugins["acme"]
    assert len(lines) == 1 and lines[0].startswith(
        'plugin "models" (from impostor 1.0) failed in registration: ValueError: Plugin name '
        "already registered")


def test_in_process_plugins_still_raise(toy_plugin):
    class Crashy:
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_models(self, register):
            raise RuntimeError("model zoo offline")

    with pytest.raises(PluginError) as err:
        create_host(plugins={"crashy": Crashy()})
    assert str(err.value) == ('plugin "crashy" failed in hook graphflow_register_models: '
                              "RuntimeError: model zoo offline")

    class Typo:
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_loader(self, register):
            pass

    with pytest.raises(PluginError, match='plugin "typo" failed in hook validation'):
        create_host(plugins={"typo": Typo()})


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
