"""``[sweep] jobs = N``: worker processes on one study, each with its share of the cores; a
dead worker, SIGTERM and resume; no process left behind."""

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import optuna
import pytest

from graphflow.experiments.parallel import Slot, split
from graphflow.experiments.sweep import sqlite_storage

SWEEP = """
[pipeline]
name = "par"
cores = 2
[load]
type = "synthetic"
nodes = 90
classes = 3
features = 6
[model]
type = "gcn"
hidden = 4
[train]
type = "node_classification"
epochs = {epochs}
checkpoint = false
[sweep]
metric = "val_acc"
trials = {trials}
sampler = "tpe"
jobs = 2
[sweep.params]
"model.hidden" = [4, 8]
"train.lr" = {{ low = 0.001, high = 0.1, log = true }}
"""


def test_split_gives_each_job_its_share_of_the_cores():
    assert split(2, 2, [0, 1]) == [Slot(0, 1, (0,)), Slot(1, 1, (1,))]
    assert split(2, 5, range(8)) == [Slot(0, 3, (0, 1, 2)), Slot(1, 2, (3, 4))]
    assert split(1, 4, [2, 3, 5, 7]) == [Slot(0, 4, (2, 3, 5, 7))]
    # more jobs than cores: one thread each, sharing CPUs round the pool
    assert split(3, 2, [0, 1]) == [Slot(0, 1, (0,)), Slot(1, 1, (1,)), Slot(2, 1, (0,))]
    with pytest.raises(ValueError):
        split(0, 2, [0, 1])


def test_workers_never_claim_the_same_queued_trial(tmp_path):
    """Optuna claims a queued trial by reading WAITING, then writing RUNNING; SQLite ignores
    its SELECT ... FOR UPDATE, so the sweep's storage must serialise the two (else two
    workers run one trial and the second cannot tell it)."""
    optuna.logging.set_verbosity(optuna.logging.ERROR)
    path = tmp_path / "s.db"
    study = optuna.create_study(study_name="s", storage=sqlite_storage(path))
    for i in range(40):
        study.enqueue_trial({"x": i / 40})
    claimed: list[int] = []

    def worker() -> None:  # a storage (its own connections) each, as a worker process has
        mine = optuna.load_study(study_name="s", storage=sqlite_storage(path))
        for _ in range(10):
            claimed.append(mine.ask({"x": optuna.distributions.FloatDistribution(0, 1)}).number)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert sorted(claimed) == list(range(40))  # each queued trial exactly once


def workers_of(root: Path, parent: int | None = None) -> list[int]:
    """Living processes whose command line is a worker of the sweep in ``root``; with
    ``parent``, only that process's children. (A worker's own short-lived children, such as
    the ``uname -p`` that ``platform.platform()`` forks, carry its command line until they
    exec: the workers proper are the sweep's children.)"""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            argv = cmdline.read_bytes().split(b"\0")
            stat = (cmdline.parent / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rpartition(")")[2].split()[1])  # after "pid (comm) state"
        if b"--worker" in argv and str(root).encode() in argv \
                and (parent is None or ppid == parent):
            found.append(int(cmdline.parent.name))
    return found


def trial_runs(root: Path) -> dict[Path, int]:
    out = {}
    for record in root.glob("trial-*/seed-*/run.json"):
        if json.loads(record.read_text())["status"] == "ok":
            out[record] = record.stat().st_mtime_ns
    return out


class Sweep:
    """``graphflow sweep`` in a subprocess of its own session, killed with its workers if the
    test leaves it running."""

    def __init__(self, tmp_path: Path, trials: int, epochs: int = 3):
        self.path, self.root = tmp_path / "par.toml", tmp_path / "sweep"
        self.path.write_text(SWEEP.format(trials=trials, epochs=epochs))
        self.cmd = [sys.executable, "-m", "graphflow", "sweep", str(self.path), "--out-dir",
                    str(self.root)]
        self.proc: subprocess.Popen | None = None

    def start(self) -> subprocess.Popen:
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        return self.proc

    def wait_until(self, condition, timeout: float = 240) -> None:
        deadline = time.monotonic() + timeout
        while not condition():
            assert self.proc.poll() is None, self.proc.communicate()
            assert time.monotonic() < deadline, "the sweep took too long"
            time.sleep(0.1)

    def finish(self, timeout: float = 240) -> tuple[int, str, str]:
        out, err = self.proc.communicate(timeout=timeout)
        return self.proc.returncode, out, err

    def kill(self) -> None:
        for pid in workers_of(self.root) + ([self.proc.pid] if self.proc else []):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if self.proc is not None and self.proc.poll() is None:
            self.proc.wait()

    def workers(self) -> list[int]:
        """The sweep's worker processes (its children)."""
        return workers_of(self.root, parent=self.proc.pid)

    def study(self) -> optuna.Study:
        return optuna.load_study(study_name="par", storage=f"sqlite:///{self.root / 'sweep.db'}")

    def finished(self) -> dict[Path, int]:
        """The run records of the study's complete trials (a worker killed between its run's
        end and telling the study leaves a run that is not a finished trial)."""
        runs = trial_runs(self.root)
        done = {t.number for t in self.study().get_trials(
            states=(optuna.trial.TrialState.COMPLETE,))}
        return {p: m for p, m in runs.items() if int(p.parent.parent.name[6:]) in done}


@pytest.fixture
def sweep(tmp_path):
    made = []

    def make(trials: int, epochs: int = 3) -> Sweep:
        made.append(Sweep(tmp_path, trials, epochs))
        return made[-1]

    yield make
    for s in made:
        s.kill()


def test_two_workers_outlive_a_dead_one_stop_on_sigterm_and_resume(sweep, cli):
    # enough work that the workers cannot finish every trial before SIGTERM reaches them,
    # even on a fast CPU (at 300 epochs a trial took 0.4 s on one, and all 30 were done by
    # then) or when the survivor is slow (a loaded machine)
    s = sweep(trials=30, epochs=1000)
    s.start()
    s.wait_until(lambda: len(s.workers()) == 2 and (s.root / "sweep.db").exists()
                 and len(s.finished()) >= 1)
    victim = s.workers()[0]
    os.kill(victim, signal.SIGKILL)  # as the OOM killer would
    # a new worker takes its place; SIGTERM then reaches it and the survivor. Both checks on
    # one listing: on two, the victim could still be listed (not yet torn down) in the
    # first and gone in the second, with no replacement started yet.
    s.wait_until(lambda: (lambda now: len(now) == 2 and victim not in now)(s.workers()))
    s.proc.send_signal(signal.SIGTERM)
    code, out, err = s.finish(timeout=120)
    assert code == 143, out + err
    assert workers_of(s.root) == []  # none left behind
    assert "graphflow: 2 workers on 2 cores: worker 0: 1 thread on CPU" in out
    dead = [line for line in out.splitlines() if "sweep worker" in line]
    assert len(dead) == 1 and f"(pid {victim}) killed by SIGKILL" in dead[0], out + err
    assert "a new worker takes its place" in dead[0]
    before = s.finished()
    assert 1 <= len(before) < 30, out + err

    # the resume's parent in this process (its workers are processes, as before): the
    # signals were the first sweep's part
    code, out, err = cli("sweep", s.path, "--out-dir", s.root)
    assert code == 0, err
    assert f"resuming par: {len(before)} of 30 trials done" in out
    after = s.finished()
    assert {p: after[p] for p in before} == before  # no finished trial ran again
    assert len(after) == 30 and workers_of(s.root) == []
    study = s.study()
    done = study.get_trials(states=(optuna.trial.TrialState.COMPLETE,))
    assert len(done) == 30 and len({t.user_attrs["pid"] for t in done}) >= 3
    for record in after:  # every trial ran on its worker's share: one thread
        run = json.loads(record.read_text())
        plan = next(st["cores"] for st in run["stages"] if "cores" in st)
        assert plan["cores"] == 1 and plan["threads"] == 1
    summary = json.loads((s.root / "summary.json").read_text())
    assert summary["trials"] == 30 and summary["best_value"] == study.best_value
