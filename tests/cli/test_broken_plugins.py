"""A third-party plugin that fails to load: every command goes on, with one warning line,
unless the pipeline needs a component nobody registered; then the error names the plugin."""

import json

import pytest

BROKEN = "import no_such_module_xyz\n"
WARNING = ('graphflow: warning: plugin "acme" (from acme-gnn 1.0) failed to import (gf_fake_acme): '
           "ModuleNotFoundError: No module named 'no_such_module_xyz'; going on without it (fix: "
           "set GRAPHFLOW_BLOCK_PLUGINS=acme to skip it, or pip uninstall acme-gnn)\n")

PIPELINE = """
[load]
type = "synthetic"

[train]
type = "node_classification"
epochs = 1

[model]
type = "{model}"
"""


@pytest.fixture
def broken(fake_entry_points):
    fake_entry_points("acme", BROKEN, dist="acme-gnn")


def test_describe_of_a_built_in_works_with_one_warning(cli, broken):
    code, out, err = cli("describe", "gcn")
    assert code == 0, err
    assert out.startswith('model "gcn" (plugin "models")')
    assert err == WARNING


def test_a_pipeline_of_built_ins_validates(cli, broken, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(model="gcn"))
    code, out, err = cli("validate", path)
    assert code == 0, err
    assert out.startswith("ok: pipeline")
    assert err == WARNING


def test_a_pipeline_naming_an_unknown_component_names_the_broken_plugin(cli, broken, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(model="acme_gnn"))
    for command in ("validate", "run"):
        code, out, err = cli(command, path, "--out-dir", tmp_path / "out") \
            if command == "run" else cli(command, path)
        assert code == 1 and out == ""
        warning, error = err.splitlines()
        assert warning + "\n" == WARNING
        assert error.startswith(f'graphflow: error: {path}: model.type: unknown model type '
                                '"acme_gnn"; plugin "acme" (from acme-gnn 1.0) may provide it but '
                                "failed to import (gf_fake_acme): ModuleNotFoundError: No module "
                                "named 'no_such_module_xyz'; choices: ")
    assert not (tmp_path / "out").exists()


def test_describe_of_an_unknown_name_names_the_broken_plugin(cli, broken):
    code, _, err = cli("describe", "acme_gnn")
    assert code == 1
    assert ('no component "acme_gnn"; plugin "acme" (from acme-gnn 1.0) may provide it but '
            "failed to import") in err


def test_plugins_lists_the_broken_plugin(cli, broken):
    code, out, err = cli("plugins")
    assert code == 0 and err == ""  # the listing says it; no warning line besides
    assert ("acme  (acme-gnn 1.0)  BROKEN: failed to import (gf_fake_acme): ModuleNotFoundError: "
            "No module named 'no_such_module_xyz'\n"
            "    fix: set GRAPHFLOW_BLOCK_PLUGINS=acme to skip it, or pip uninstall acme-gnn\n"
            ) in out
    code, out, _ = cli("plugins", "--json")
    table = json.loads(out)
    assert "acme" not in {p["name"] for p in table["plugins"]}
    assert table["broken"] == [{
        "name": "acme", "dist": "acme-gnn", "version": "1.0", "first_party": False,
        "failed": "to import (gf_fake_acme)",
        "error": "ModuleNotFoundError: No module named 'no_such_module_xyz'",
        "fix": "set GRAPHFLOW_BLOCK_PLUGINS=acme to skip it, or pip uninstall acme-gnn"}]


def test_doctor_shows_the_broken_plugin_and_fails(cli, broken):
    code, out, err = cli("doctor")
    assert code == 1 and err == ""
    assert ('   plugins: BROKEN "acme" (acme-gnn 1.0) failed to import (gf_fake_acme): '
            "ModuleNotFoundError: No module named 'no_such_module_xyz' (fix: set "
            "GRAPHFLOW_BLOCK_PLUGINS=acme to skip it, or pip uninstall acme-gnn)") in out
    assert "spmm: pass on cpu" in out
    code, out, _ = cli("doctor", "--json")
    plugins = json.loads(out)["plugins"]
    assert code == 1 and plugins["ok"] is False and "loaders" in plugins["loaded"]
    assert [b["name"] for b in plugins["broken"]] == ["acme"]


def test_blocking_the_broken_plugin_silences_it(cli, broken, monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_BLOCK_PLUGINS", "acme")
    code, _, err = cli("describe", "gcn")
    assert code == 0 and err == ""
    code, out, _ = cli("doctor")
    assert code == 0 and "BROKEN" not in out


def test_a_plugin_whose_catalogue_hook_raises_is_treated_the_same(cli, fake_entry_points):
    fake_entry_points("crashy", """
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_models(register):
            raise RuntimeError("model zoo offline")
    """)
    code, out, err = cli("describe", "gcn")
    assert code == 0
    assert err == ('graphflow: warning: plugin "crashy" (from gf-fake-crashy 1.0) failed in hook '
                   "graphflow_register_models: RuntimeError: model zoo offline; going on without "
                   "it (fix: set GRAPHFLOW_BLOCK_PLUGINS=crashy to skip it, or pip uninstall "
                   "gf-fake-crashy)\n")
    code, out, _ = cli("plugins")
    assert "crashy  (gf-fake-crashy 1.0)  BROKEN: failed in hook graphflow_register_models" in out
