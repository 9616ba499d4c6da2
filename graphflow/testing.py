"""Pytest fixtures for graphflow and for plugin authors (``pytest_plugins = ["graphflow.testing"]``).

* ``host``: a fresh plugin host (entry points loaded, nothing global).
* ``tiny_graph``: a hand-built 6-node graph with features, labels, masks and a node with no
  in-edges, as a :class:`~graphflow.graph.GraphData`.
* ``planetoid_root``: the folder of raw Planetoid files; skips the test when it is absent.
* ``mutag_root``: the folder of MUTAG.mat / MUTAG.npz; skips the test when it is absent.
* ``run_toml``: write a pipeline into ``tmp_path`` and run it, returning the ``RunResult``.
* ``cli``: run the ``graphflow`` command in-process, returning ``(exit_code, stdout, stderr)``.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
import torch

PLANETOID_ENV = "GRAPHFLOW_PLANETOID_DIR"
REPO_ROOT = Path(__file__).resolve().parent.parent


def planetoid_dir() -> Path:
    """Where the raw Planetoid files are: ``$GRAPHFLOW_PLANETOID_DIR`` or ``../shared/data/planetoid``."""
    env = os.environ.get(PLANETOID_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data" / "planetoid"


@pytest.fixture
def planetoid_root() -> Path:
    root = planetoid_dir()
    if not (root / "ind.cora.x").exists():
        pytest.skip(f"raw Planetoid files not found in {root} (set {PLANETOID_ENV})")
    return root


MUTAG_ENV = "GRAPHFLOW_MUTAG_DIR"


def mutag_dir() -> Path:
    """Where MUTAG.mat / MUTAG.npz are: ``$GRAPHFLOW_MUTAG_DIR`` or ``../shared/data/mutag``."""
    env = os.environ.get(MUTAG_ENV)
    return Path(env) if env else REPO_ROOT.parent / "shared" / "data" / "mutag"


@pytest.fixture
def mutag_root() -> Path:
    root = mutag_dir()
    if not (root / "MUTAG.mat").exists():
        pytest.skip(f"MUTAG files not found in {root} (set {MUTAG_ENV})")
    return root


@pytest.fixture
def host():
    from graphflow.manager import create_host

    return create_host()


def make_tiny_graph():
    """6 nodes, 9 directed edges; node 5 has no in-edges; 2 classes; 4 features."""
    from graphflow.compat.dgl import dgl
    from graphflow.graph import GraphData, NodeIds

    src = torch.tensor([0, 1, 1, 2, 2, 3, 4, 5, 5])
    dst = torch.tensor([1, 0, 2, 1, 3, 4, 3, 0, 4])
    g = dgl.graph((src, dst), num_nodes=6)
    gen = torch.Generator().manual_seed(0)
    g.ndata["feat"] = torch.randn(6, 4, generator=gen)
    g.ndata["label"] = torch.tensor([0, 0, 1, 1, 0, 1])
    g.ndata["train_mask"] = torch.tensor([True, True, True, False, False, False])
    g.ndata["val_mask"] = torch.tensor([False, False, False, True, False, False])
    g.ndata["test_mask"] = torch.tensor([False, False, False, False, True, True])
    return GraphData(graph=g, ids=NodeIds.identity(6), name="tiny")


@pytest.fixture
def tiny_graph():
    return make_tiny_graph()


@pytest.fixture
def run_toml(tmp_path: Path) -> Callable[..., object]:
    """``run_toml(text, overrides=[], name="pipeline.toml")`` -> ``RunResult`` (out_dir in tmp_path)."""
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    def run(text: str, overrides: list[str] = (), name: str = "pipeline.toml", **kwargs):
        path = tmp_path / name
        path.write_text(text)
        host = kwargs.pop("host", None) or create_host()
        config = load_config(path, host.registry, overrides=list(overrides),
                             out_dir=kwargs.pop("out_dir", tmp_path / "out"))
        return run_pipeline(config, host, quiet=True, **kwargs)

    return run


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``graphflow ARGS...`` in-process: ``code, out, err = cli("validate", path)``."""
    from graphflow.cli.main import main

    def run(*args: str | os.PathLike[str]) -> tuple[int, str, str]:
        capsys.readouterr()
        try:
            code = main([str(a) for a in args])
        except SystemExit as exc:  # argparse usage errors
            code = int(exc.code or 0)
        out, err = capsys.readouterr()
        return code, out, err

    return run
