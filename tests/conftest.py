"""Shared fixtures: graphflow's own pytest plugin, plus a toy plugin for host tests."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

import graphflow  # noqa: F401  (first: it sets OpenMP defaults before torch loads)

sys.path.insert(0, str(Path(__file__).parent))  # make tests/toy_plugin.py importable

import toy_plugin as toy  # noqa: E402

pytest_plugins = ["graphflow.testing"]


def pytest_configure(config: pytest.Config) -> None:
    """Measured machine choices (graphflow.calibrate): off by default in tests (the fixed
    rules, fast and the same on every run; tests/test_calibrate.py turns it on), and never
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
def toy_pipeline() -> str:
    return toy.TOY_PIPELINE
