"""`pip install -e examples/plugin_package` adds its plugin to graphflow, as a user would do it.

The package is installed editable into a throwaway virtual environment that sees this
environment's packages through a .pth file, so the test environment itself is not modified.
"""

import json
import os
import site
import subprocess
import sys
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "examples" / "plugin_package"


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory) -> Path:
    env_dir = tmp_path_factory.mktemp("plugin_env")
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    # See graphflow and its dependencies (this environment's site-packages) from the new one.
    # addsitedir (not a bare path) so that the .pth files there, graphflow's editable
    # install among them, are processed too.
    lines = [f"import site; site.addsitedir({d!r})" for d in site.getsitepackages()]
    (Path(purelib) / "parent_env.pth").write_text("\n".join(lines) + "\n")
    proc = subprocess.run(
        [python, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", "-e", str(PACKAGE)],
        capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    return python


def graphflow(python: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([python, "-m", "graphflow.cli.main", *args], capture_output=True,
                          text=True, timeout=300, cwd=cwd,
                          env={**os.environ, "GRAPHFLOW_PROGRESS": "0"})


def test_installed_plugin_is_listed(plugin_env):
    proc = graphflow(plugin_env, "plugins", "--json")
    assert proc.returncode == 0, proc.stderr
    plugin = next(p for p in json.loads(proc.stdout)["plugins"] if p["name"] == "degree")
    assert plugin["dist"] == "graphflow-degree-features" and plugin["version"] == "0.1.0"
    assert plugin["first_party"] is False
    assert plugin["components"] == {"transform": ["log_degree"]}
    assert plugin["source"].endswith("graphflow_degree/plugin.py")


def test_installed_plugin_runs_in_a_pipeline(plugin_env, tmp_path):
    out = tmp_path / "out"
    proc = graphflow(plugin_env, "run", str(PACKAGE / "pipeline.toml"), "--out-dir", str(out),
                     "--set", 'export.0.path="' + str(tmp_path / "pred.parquet") + '"')
    assert proc.returncode == 0, proc.stderr
    record = json.loads((out / "run.json").read_text())
    stage = next(s for s in record["stages"] if s["section"] == "transform.0")
    assert (stage["type"], stage["plugin"]) == ("log_degree", "degree")
    timings = (out / "stage_timings.csv").read_text().splitlines()
    assert timings[0] == "section,type,plugin,seconds"
    assert [line.split(",")[0] for line in timings[1:]] == [s["section"] for s in record["stages"]]
    assert f"degree plugin: wrote {out / 'stage_timings.csv'}" in proc.stderr


def test_blocking_the_plugin_by_name(plugin_env):
    env = {**os.environ, "GRAPHFLOW_BLOCK_PLUGINS": "degree"}
    proc = subprocess.run([plugin_env, "-m", "graphflow.cli.main", "plugins", "--json"],
                          capture_output=True, text=True, timeout=300, env=env)
    assert "degree" not in {p["name"] for p in json.loads(proc.stdout)["plugins"]}
    env = {**os.environ, "GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run([plugin_env, "-m", "graphflow.cli.main", "plugins", "--json"],
                          capture_output=True, text=True, timeout=300, env=env)
    names = {p["name"] for p in json.loads(proc.stdout)["plugins"]}
    assert "degree" not in names and "loaders" in names
