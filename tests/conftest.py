"""Shared fixtures: graphflow's own pytest plugin, plus a toy plugin for host tests."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import textwrap
from importlib import metadata
from pathlib import Path

import pytest

# No import-order games: importing graphflow sets nothing global (tests/test_init.py checks
# it), so the tests run under the environment's OpenMP and torch thread settings (torch's own
# defaults unless OMP_NUM_THREADS / OMP_WAIT_POLICY are set).

sys.path.insert(0, str(Path(__file__).parent))  # make tests/toy_plugin.py importable

import toy_plugin as toy  # noqa: E402

pytest_plugins = ["graphflow.testing"]


def pytest_configure(config: pytest.Config) -> None:
    """Measured machine choices (graphflow.runtime.calibrate): off by default in tests (the fixed
    rules, fast and the same on every run; tests/runtime/test_calibrate.py turns it on), and never
    the user's cache folder (a temporary one, inherited by the CLI's subprocesses)."""
    os.environ.setdefault("GRAPHFLOW_CALIBRATE", "off")
    if not os.environ.get("GRAPHFLOW_CACHE_DIR"):
        folder = tempfile.mkdtemp(prefix="graphflow-cache-")
        os.environ["GRAPHFLOW_CACHE_DIR"] = folder
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))


@pytest.fixture
def toy_plugin() -> toy.ToyPlugin:
    return toy.ToyPlugin()


@pytest.fixture
def toy_host(toy_plugin):
    """A fresh host with the toy plugin registered in-process as "toy"."""
    from graphflow.manager import create_host

    return create_host(plugins={"toy": toy_plugin})


@pytest.fixture
def toy_entry_point(monkeypatch):
    """Expose the toy plugin as a third-party entry point named "toy" (for CLI tests)."""
    from graphflow import manager

    real = metadata.entry_points
    toy = metadata.EntryPoint(name="toy", value="toy_plugin:plugin", group="graphflow")

    def entry_points(**kwargs):
        eps = real(**kwargs)
        return [*eps, toy] if kwargs.get("group") == "graphflow" else eps

    monkeypatch.setattr(manager.metadata, "entry_points", entry_points)


@pytest.fixture
def fake_entry_points(tmp_path, monkeypatch):
    """``add(name, source, dist=None)``: install a fake third-party plugin in-process.

    Writes module ``gf_fake_NAME`` and, beside it, the ``.dist-info`` folder of distribution
    ``dist`` (default ``gf-fake-NAME``, version 1.0) whose ``entry_points.txt`` names it in the
    group ``graphflow``, then puts the folder on ``sys.path``: ``importlib.metadata`` finds
    the entry point (and its distribution) as it finds an installed package's.
    """
    monkeypatch.syspath_prepend(str(tmp_path))

    def add(name: str, source: str, dist: str | None = None) -> None:
        module = f"gf_fake_{name}"
        dist = dist or f"gf-fake-{name}"
        (tmp_path / f"{module}.py").write_text(textwrap.dedent(source))
        sys.modules.pop(module, None)
        info = tmp_path / f"{dist.replace('-', '_')}-1.0.dist-info"
        info.mkdir()
        (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: 1.0\n")
        (info / "entry_points.txt").write_text(f"[graphflow]\n{name} = {module}\n")

    return add


@pytest.fixture
def toy_pipeline() -> str:
    return toy.TOY_PIPELINE
