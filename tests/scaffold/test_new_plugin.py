"""`graphflow new-plugin`: the package it writes installs, registers, passes its own tests and
runs; and its model, which applies plain tensor ops to x, trains on Cora with default options.

The package is installed with pip (no dependencies, no build isolation: offline) into a
throwaway target folder, put on PYTHONPATH for subprocesses only, so the test environment
is not modified. Subprocesses run with one OpenMP thread: the graphs are tiny, and on a shared
2-core machine spinning OpenMP threads would dominate their time.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from graphflow.errors import ConfigError
from graphflow.scaffold import new_plugin

KINDS = "loader,model,exporter,hooks"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """(package folder, environment for subprocesses that see the installed package)."""
    root = tmp_path_factory.mktemp("scaffold")
    code = subprocess.run([sys.executable, "-m", "graphflow.cli.main", "new-plugin", "demo",
                           "--kinds", KINDS, "--dir", str(root)],
                          capture_output=True, text=True, timeout=120)
    assert code.returncode == 0, code.stderr
    assert f"wrote plugin package {root / 'demo'}" in code.stdout
    site = root / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-build-isolation", "--target", str(site), str(root / "demo")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    env = {**os.environ, "PYTHONPATH": str(site), "GRAPHFLOW_PROGRESS": "0",
           "OMP_NUM_THREADS": "1"}
    return root / "demo", env


def graphflow(env, *args, cwd=None):
    return subprocess.run([sys.executable, "-m", "graphflow.cli.main", *map(str, args)],
                          capture_output=True, text=True, timeout=300, cwd=cwd, env=env)


def test_the_package_has_what_was_asked(demo):
    package, _ = demo
    files = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    assert {"pyproject.toml", "README.md", "conftest.py", "pipeline.toml",
            "src/demo/plugin.py", "src/demo/loader.py", "src/demo/model.py",
            "src/demo/exporter.py", "src/demo/hooks.py", "tests/test_loader.py",
            "tests/test_model.py", "tests/test_exporter.py", "tests/test_hooks.py"} <= files
    assert not {"src/demo/task.py", "src/demo/transform.py"} & files
    assert '[project.entry-points.graphflow]\ndemo = "demo.plugin"' in \
        (package / "pyproject.toml").read_text()


def test_graphflow_plugins_lists_its_components(demo):
    _, env = demo
    proc = graphflow(env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    plugin = next(p for p in json.loads(proc.stdout)["plugins"] if p["name"] == "demo")
    assert plugin["dist"] == "graphflow-demo" and plugin["first_party"] is False
    assert plugin["components"] == {"loader": ["demo_adjlist"], "model": ["demo_appnp"],
                                    "exporter": ["demo_text"]}


def test_its_generated_tests_pass(demo):
    package, env = demo
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          capture_output=True, text=True, timeout=300, cwd=package, env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert " passed" in proc.stdout and "failed" not in proc.stdout


def test_its_example_pipeline_runs(demo, tmp_path):
    package, env = demo
    proc = graphflow(env, "run", "pipeline.toml", "--out-dir", tmp_path, cwd=package)
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "run.json").read_text())
    used = {(s["type"], s["plugin"]) for s in record["stages"]}
    assert {("demo_adjlist", "demo"), ("demo_appnp", "demo"), ("demo_text", "demo")} <= used
    lines = (tmp_path / "logits.txt").read_text().splitlines()
    assert lines[0] == "34 2" and lines[1].split()[0] == "m00"  # original ids written back
    assert (tmp_path / "demo_stages.tsv").exists()  # the lifecycle hook ran
    assert "[demo] train.0 (node_classification) took" in proc.stderr


def test_its_plain_tensor_model_trains_on_cora_with_defaults(demo, tmp_path, planetoid_root):
    """Cora's features are sparse enough for SparseFeatures; the model does not declare
    accepts_sparse, so it gets a dense tensor and its F.dropout / nn.Linear just work."""
    _, env = demo
    pipeline = tmp_path / "cora.toml"
    pipeline.write_text(f'[load]\ntype = "planetoid"\nname = "cora"\nroot = "{planetoid_root}"\n'
                        '[model]\ntype = "demo_appnp"\n[train]\ntype = "node_classification"\n')
    proc = graphflow(env, "run", pipeline, "--out-dir", tmp_path / "out", "--quiet")
    assert proc.returncode == 0, proc.stderr
    record = json.loads((tmp_path / "out" / "run.json").read_text())
    assert record["metrics"]["test_acc"] > 0.78, record["metrics"]


def test_refuses_to_overwrite_and_bad_names(tmp_path, cli):
    (tmp_path / "taken").mkdir()
    code, _, err = cli("new-plugin", "taken", "--dir", tmp_path)
    assert code == 1
    assert err.splitlines()[0] == (f"graphflow: error: {tmp_path / 'taken'} already exists; "
                                   f"remove it or choose another --dir / NAME")
    assert list((tmp_path / "taken").iterdir()) == []
    code, _, err = cli("new-plugin", "My-Models", "--dir", tmp_path)
    assert code == 1
    assert err.splitlines()[0] == ("graphflow: error: 'My-Models' is not a valid package name: "
                                   "use lowercase letters, digits and single underscores, "
                                   "starting with a letter (e.g. 'my_models')")
    with pytest.raises(ConfigError, match=r"^'json' is a Python keyword or would shadow"):
        new_plugin("json", folder=tmp_path)
    with pytest.raises(ConfigError, match=r"^--kinds: unknown kind 'modle' \(did you mean "
                                          r"\"model\"\?\); kinds: loader, transform"):
        new_plugin("fresh", ["modle"], tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_every_kind_together_is_consistent(tmp_path):
    """All six kinds: the plugin module and the pipeline name every component."""
    path = new_plugin("every", ["hooks", "task", "transform", "loader", "model", "exporter"],
                      tmp_path)
    plugin = (path / "src/every/plugin.py").read_text()
    for cls in ("AdjlistLoader", "DegreeFeature", "APPNPModel", "Smooth", "TextExporter"):
        assert f"register({cls})" in plugin
    pipeline = (path / "pipeline.toml").read_text()
    for name in ("every_adjlist", "every_degree", "every_appnp", "every_smooth", "every_text"):
        assert f'type = "{name}"' in pipeline
    compile(plugin, "plugin.py", "exec")
