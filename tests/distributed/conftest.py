"""Multi-process tests: every process on loopback, bounded in time, its group killed after."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

from graphflow.distributed.procs import descendants
from graphflow.testing import REPO_ROOT

SBM_SAGE = """
[pipeline]
name = "ddp"
seed = 0
device = "cpu"

[load]
type = "synthetic"
kind = "sbm"
nodes = 600
classes = 4
features = 16
p_in = 0.05
p_out = 0.005
signal = 1.0

[sample]
type = "neighbor"
fanouts = [5, 5]
batch_size = 32
prefetch = 0

[model]
type = "sage"
hidden = 16

[train]
type = "node_classification"
epochs = 20

[[export]]
type = "parquet"
what = "predictions"
"""


@pytest.fixture
def sbm_sage() -> str:
    """A sampled SAGE pipeline on a 600-node generated SBM that trains to ~99% in 20 epochs."""
    return SBM_SAGE


@pytest.fixture
def example(tmp_path):
    """The edgelist example (150 papers, string node ids) copied with its data into tmp_path."""
    shutil.copytree(REPO_ROOT / "examples" / "data", tmp_path / "data")
    path = tmp_path / "edgelist_gcn.toml"
    path.write_text((REPO_ROOT / "examples" / "edgelist_gcn.toml").read_text())
    return path


def loopback_env(**extra: str) -> dict[str, str]:
    """The test's environment for child processes: loopback only, one thread each."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1", **extra)
    return env


def kill_tree(pid: int) -> None:
    """SIGKILL ``pid``, its process group and every descendant."""
    for target in [pid, *descendants(pid)]:
        try:
            os.kill(target, signal.SIGKILL)
        except OSError:  # already gone
            pass
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass


@pytest.fixture(scope="session")
def loopback() -> dict[str, str]:
    """:func:`loopback_env` for module-scoped fixtures and tests that start processes."""
    return loopback_env()


@pytest.fixture
def spawn() -> Iterator[Callable[..., subprocess.CompletedProcess[str]]]:
    """``spawn(args, timeout=...)`` runs ``python ARGS`` in its own session and kills it with
    every descendant if it outlives ``timeout`` (or the test fails while it runs)."""
    started: list[subprocess.Popen[str]] = []

    def run(args: Sequence[str | os.PathLike[str]], *, timeout: float = 180,
            cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        proc = subprocess.Popen([sys.executable, *map(str, args)], cwd=cwd, env=loopback_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True)
        started.append(proc)
        try:
            out, err = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            kill_tree(proc.pid)
            out, err = proc.communicate()
            pytest.fail(f"{args} ran past {timeout}s\n{err[-3000:]}")
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    yield run
    for proc in started:
        if proc.poll() is None:
            kill_tree(proc.pid)
            proc.wait()


@pytest.fixture
def background() -> Iterator[Callable[..., subprocess.Popen[str]]]:
    """``background(args)`` starts ``python ARGS`` (output in ``.stdout``) in its own session;
    whatever still runs of it at the end of the test is killed with its descendants."""
    started: list[subprocess.Popen[str]] = []

    def start(args: Sequence[str | os.PathLike[str]]) -> subprocess.Popen[str]:
        proc = subprocess.Popen([sys.executable, *map(str, args)], env=loopback_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        started.append(proc)
        return proc

    yield start
    for proc in started:
        if proc.poll() is None:
            kill_tree(proc.pid)
        proc.communicate()
