"""Termination signals: the guard in-process, and ``graphflow run`` stopped by SIGTERM for real."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil
import pytest

from graphflow.runtime.signals import (Terminated, deferred, finishing, handle_signals, pending,
                               safe_point)

STARTUP_BOUND = 90.0  # seconds for a subprocess to import torch + DGL and reach training


def _spin(seconds: float) -> None:
    """Python-level busy work, so that signal handlers run promptly."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        time.sleep(0.005)


@pytest.mark.parametrize("signum, status, code", [(signal.SIGTERM, "terminated", 143),
                                                  (signal.SIGHUP, "terminated", 129),
                                                  (signal.SIGINT, "interrupted", 130)])
def test_a_first_signal_outside_a_deferred_region_stops_at_once(signum, status, code):
    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    with pytest.raises(Terminated) as info:
        with handle_signals():
            os.kill(os.getpid(), signum)
            _spin(5)
    assert (info.value.signum, info.value.status, info.value.exit_code) == (signum, status, code)
    assert info.value.name == signal.Signals(signum).name
    assert isinstance(info.value, KeyboardInterrupt)  # every Ctrl-C path handles it
    # The previous handlers are back: no process-wide change outlives the block.
    assert {s: signal.getsignal(s) for s in before} == before


def test_deferred_signals_wait_for_a_safe_point_and_a_second_stops_at_once():
    with handle_signals() as guard:
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                _spin(0.2)  # not raised: the region is deferred
                assert pending() == signal.SIGTERM == guard.requested
                safe_point()
        assert pending() == signal.SIGTERM
    with handle_signals():
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                _spin(0.1)
                start = time.monotonic()
                os.kill(os.getpid(), signal.SIGTERM)
                _spin(5)
        assert time.monotonic() - start < 2
        # After the second signal SIGTERM is back with its previous handler (death).
        assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def test_leaving_a_deferred_region_is_a_safe_point_and_grace_bounds_the_wait():
    with handle_signals():
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGHUP)
                _spin(0.1)
    with handle_signals(grace=0.3):
        start = time.monotonic()
        with pytest.raises(Terminated):
            with deferred():
                os.kill(os.getpid(), signal.SIGTERM)
                _spin(10)  # never reaches a safe point: the grace timer stops it
        assert time.monotonic() - start < 5


def test_finishing_notes_signals_without_raising_and_on_signal_forwards():
    seen = []
    with handle_signals(on_signal=seen.append) as guard:
        finishing()
        os.kill(os.getpid(), signal.SIGTERM)
        _spin(0.1)
        safe_point()  # writing the record: not raised
    assert seen == [signal.SIGTERM] and guard.received == [signal.SIGTERM]


def test_without_a_guard_everything_is_a_no_op_and_threads_get_an_inactive_guard():
    assert pending() is None
    safe_point()
    finishing()
    with deferred():
        pass
    result = {}

    def worker():
        with handle_signals() as guard:
            result["active"] = guard.active

    thread = threading.Thread(target=worker)
    thread.start()
    thread.join(10)
    assert result == {"active": False}


# --- graphflow run in a subprocess --------------------------------------------------------

PIPELINE = """
[pipeline]
name = "signals"
seed = 0
device = "cpu"
[load]
type = "synthetic"
nodes = {nodes}
classes = 3
features = 8
{sample}
[model]
type = "gcn"
hidden = 8
[train]
type = "node_classification"
epochs = 100000          # far more than the test waits for: it stops the run itself
eval_every = 3
[[export]]
type = "parquet"
what = "predictions"
"""

SLOW_SAMPLER = """
[sample]
type = "neighbor"
fanouts = [5, 5]
batch_size = 1           # seconds per epoch: a signal lands well inside one
"""


def _start(tmp_path: Path, text: str, *extra: str) -> tuple[subprocess.Popen, Path, Path]:
    pipeline = tmp_path / "pipeline.toml"
    pipeline.write_text(text)
    out, err = tmp_path / "out", tmp_path / f"stderr{len(list(tmp_path.glob('stderr*')))}.txt"
    with open(err, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "graphflow", "run", str(pipeline),
                                 "--out-dir", str(out), *extra],
                                stdout=subprocess.DEVNULL, stderr=fh, cwd=tmp_path)
    return proc, out, err


def _wait_for(condition, proc: subprocess.Popen, what: str, bound: float = STARTUP_BOUND):
    end = time.monotonic() + bound
    while time.monotonic() < end:
        if condition():
            return
        if proc.poll() is not None:
            pytest.fail(f"graphflow exited ({proc.returncode}) before {what}")
        time.sleep(0.05)
    pytest.fail(f"no {what} within {bound}s")


def _epochs(out: Path) -> list[int]:
    path = out / "metrics.jsonl"
    if not path.exists():
        return []
    # a line still being appended has no newline yet: read the complete ones only
    complete = path.read_text().split("\n")[:-1]
    return [json.loads(line)["epoch"] for line in complete if line.strip()]


def _resume(cli, tmp_path: Path, out: Path, epochs: int) -> tuple[int, str, str]:
    """``graphflow run PIPELINE --resume`` of the run ``_start`` began, in this process, to
    ``epochs`` epochs."""
    return cli("run", tmp_path / "pipeline.toml", "--out-dir", out, "--resume", "--set",
               f"train.epochs={epochs}")


@pytest.fixture
def procs():
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:  # a failed test never leaves a process behind
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)


def test_sigterm_during_training_saves_the_state_and_resume_finishes(tmp_path, procs, cli):
    proc, out, err = _start(tmp_path, PIPELINE.format(nodes=300, sample=""))
    procs.append(proc)
    _wait_for(lambda: len(_epochs(out)) >= 2, proc, "an epoch in metrics.jsonl")
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == 143
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "terminated" and record["signal"] == "SIGTERM"
    assert record["error"] == "Terminated: SIGTERM"
    stopped = _epochs(out)[-1]
    log = err.read_text()
    assert f"[train] SIGTERM: stopped after epoch {stopped}; graphflow run --resume" in log
    assert log.rstrip().endswith("graphflow: terminated by SIGTERM")
    # Nothing left looking complete: no export, no temporary file, the record says why.
    assert not (out / "predictions.parquet").exists()
    assert not list(out.glob(".*partial"))
    assert (out / "train_state.pt").exists()

    # --resume continues after the very epoch it stopped at (saved there even though it was
    # not an evaluation epoch) and finishes; fewer epochs so that the test ends quickly. In
    # this process: the signal was the subprocess's part, the resume reads only the folder.
    total = stopped + 4
    code, _, log = _resume(cli, tmp_path, out, total)
    assert code == 0, log
    assert f"[train] resuming after epoch {stopped}" in log
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "ok" and "signal" not in record
    assert _epochs(out) == list(range(1, total + 1))
    assert (out / "predictions.parquet").exists()


def test_a_second_sigterm_ends_the_run_at_once(tmp_path, procs):
    proc, out, err = _start(tmp_path, PIPELINE.format(nodes=600, sample=SLOW_SAMPLER))
    procs.append(proc)
    _wait_for(lambda: len(_epochs(out)) >= 1, proc, "an epoch in metrics.jsonl")
    proc.send_signal(signal.SIGTERM)
    _wait_for(lambda: "stopping at the next safe point" in err.read_text(), proc,
              "the first SIGTERM being noted", bound=30)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(30)
    assert code == 143 and time.monotonic() - start < 10
    log = err.read_text()
    assert "stopped after epoch" not in log  # it did not wait for the epoch to end
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "terminated" and record["signal"] == "SIGTERM"


# --- data-parallel workers (graphflow run --nproc 2: DDP on gloo over loopback) -------------

DDP_PIPELINE = PIPELINE.format(nodes=300, sample="")  # full-batch GCN, DDP over 2 ranks


def _workers(launcher: int) -> dict[int, psutil.Process]:
    """The ``graphflow run`` workers below ``launcher``, by their RANK."""
    found = {}
    for proc in psutil.Process(launcher).children(recursive=True):
        try:
            rank = proc.environ().get("RANK")
        except psutil.Error:
            continue
        if rank is not None:
            found[int(rank)] = proc
    return found


@pytest.fixture
def sessions():
    """Processes started in their own session; the test's end kills each one's whole tree."""
    started: list[subprocess.Popen] = []
    yield started
    for proc in started:
        try:
            tree = [psutil.Process(proc.pid), *psutil.Process(proc.pid).children(recursive=True)]
        except psutil.Error:
            tree = []
        for p in tree:
            try:
                p.kill()
            except psutil.Error:
                pass
        proc.wait(10)


def _start_ddp(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen, Path, Path]:
    pipeline = tmp_path / "ddp.toml"
    pipeline.write_text(DDP_PIPELINE)
    out, err = tmp_path / "out", tmp_path / f"stderr{len(list(tmp_path.glob('stderr*')))}.txt"
    env = {k: v for k, v in os.environ.items()
           if k not in ("RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT")}
    env.update(GLOO_SOCKET_IFNAME="lo", OMP_NUM_THREADS="1")
    with open(err, "wb") as fh:
        proc = subprocess.Popen([sys.executable, "-m", "graphflow", "run", str(pipeline),
                                 "--nproc", "2", "--out-dir", str(out), *extra],
                                stdout=subprocess.DEVNULL, stderr=fh, cwd=tmp_path, env=env,
                                start_new_session=True)
    return proc, out, err


def test_sigterm_to_one_ddp_worker_stops_every_rank_at_the_same_epoch(tmp_path, sessions):
    proc, out, err = _start_ddp(tmp_path)
    sessions.append(proc)
    _wait_for(lambda: len(_epochs(out)) >= 2, proc, "an epoch in metrics.jsonl")
    workers = _workers(proc.pid)
    assert sorted(workers) == [0, 1]
    workers[1].send_signal(signal.SIGTERM)  # as a scheduler stopping one task of the job
    proc.wait(60)
    log = err.read_text()
    # Rank 1's signal reached rank 0 through the per-epoch agreement: rank 0 saved the resume
    # state after the epoch both ranks finished, wrote run.json, and both workers exited 143.
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "terminated" and record["signal"] == "SIGTERM", log
    assert record["world_size"] == 2
    stopped = _epochs(out)[-1]
    assert f"[train] SIGTERM: stopped after epoch {stopped}; graphflow run --resume" in log
    assert proc.returncode == 143, log  # the launcher's status is the run's: terminated
    assert log.count("graphflow: terminated by SIGTERM") == 3, log  # each worker, the launcher
    codes = dict(re.findall(r"rank (\d+) \(exit code (-?\d+)\)", log))
    assert "1" in codes and set(codes.values()) == {"143"}, log  # the launcher's summary
    assert "Traceback" not in log
    assert (out / "train_state.pt").exists()
    psutil.wait_procs(list(workers.values()), timeout=10)
    assert not [p.pid for p in workers.values() if p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE]  # no worker left behind

    total = stopped + 3
    proc, out, err = _start_ddp(tmp_path, "--resume", "--set", f"train.epochs={total}")
    sessions.append(proc)
    assert proc.wait(STARTUP_BOUND) == 0, err.read_text()
    assert f"[train] resuming after epoch {stopped}" in err.read_text()
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "ok" and record["world_size"] == 2
    assert _epochs(out) == list(range(1, total + 1))


def test_sigterm_to_the_nproc_launcher_stops_its_workers_and_exits_143(tmp_path, sessions):
    proc, out, err = _start_ddp(tmp_path)
    sessions.append(proc)
    _wait_for(lambda: len(_epochs(out)) >= 2, proc, "an epoch in metrics.jsonl")
    workers = _workers(proc.pid)
    proc.send_signal(signal.SIGTERM)  # as `kill` of the job's main process
    assert proc.wait(60) == 143, err.read_text()
    log = err.read_text()
    assert "internal error" not in log and "Traceback" not in log, log
    assert log.rstrip().endswith("graphflow: terminated by SIGTERM"), log
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "terminated" and record["signal"] == "SIGTERM", log
    assert (out / "train_state.pt").exists()
    psutil.wait_procs(list(workers.values()), timeout=10)
    assert not [p.pid for p in workers.values() if p.is_running()
                and p.status() != psutil.STATUS_ZOMBIE]


# --- SIGTERM inside each training task, then --resume -----------------------------------

SAMPLED = """
[sample]
type = "neighbor"
fanouts = [5, 5]
batch_size = 64
"""

LINK_PIPELINE = """
[pipeline]
name = "signals-link"
seed = 0
device = "cpu"
[load]
type = "synthetic"
nodes = 400
classes = 3
features = 8
[[transform]]
type = "link_split"
val = 0.1
test = 0.1
{sample}
[model]
type = "gcn"
hidden = 8
[train]
type = "link_prediction"
epochs = 100000
eval_every = 1
[[export]]
type = "parquet"
what = "embeddings"
"""

SKIPGRAM_PIPELINE = """
[pipeline]
name = "signals-skipgram"
seed = 0
device = "cpu"
[load]
type = "synthetic"
kind = "powerlaw"
nodes = 3000
edges = 30000
features = 0
[sample]
type = "node2vec"
p = 0.25
q = 4.0
walk_length = 20
walks_per_node = 2
batch_size = 1000
[train]
type = "skipgram"
dim = 16
window = 5
epochs = 100000
workers = 2              # Hogwild threads: they must end before the process does
[[export]]
type = "parquet"
what = "embeddings"
"""


@pytest.mark.parametrize("text, export, resumed", [
    (PIPELINE.format(nodes=600, sample=SAMPLED).replace("eval_every = 3", "eval_every = 1"),
     "predictions.parquet",
     "[train] resuming after epoch"),
    (LINK_PIPELINE.format(sample=""), "embeddings.parquet", "[train] resuming after epoch"),
    (LINK_PIPELINE.format(sample=SAMPLED.replace("batch_size = 64", "batch_size = 1024")),
     "embeddings.parquet",
     "[train] resuming after epoch"),
    (SKIPGRAM_PIPELINE, "embeddings.parquet", "[train] resuming skip-gram in epoch"),
], ids=["node-sampled", "link-full", "link-sampled", "node2vec-skipgram"])
def test_sigterm_inside_each_task_exits_143_and_resume_finishes(tmp_path, procs, cli, text,
                                                                export, resumed):
    proc, out, err = _start(tmp_path, text)
    procs.append(proc)
    _wait_for(lambda: len(_epochs(out)) >= 2, proc, "two epochs in metrics.jsonl")
    proc.send_signal(signal.SIGTERM)
    code = proc.wait(60)
    log = err.read_text()
    # No SIGABRT from a worker thread left inside torch at exit (exit 134).
    assert code == 143 and "terminate called" not in log, log
    assert log.rstrip().endswith("graphflow: terminated by SIGTERM"), log
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "terminated" and record["signal"] == "SIGTERM"
    assert not (out / export).exists()
    assert (out / "train_state.pt").exists(), log
    stopped = _epochs(out)[-1]

    total = stopped + 2
    code, _, log = _resume(cli, tmp_path, out, total)  # in this process (see above)
    assert code == 0, log
    assert resumed in log
    record = json.loads((out / "run.json").read_text())
    assert record["status"] == "ok" and "signal" not in record
    assert (out / export).exists()
    assert _epochs(out)[-1] == total
    assert not (out / "train_state.pt").exists() or "skipgram" not in text
