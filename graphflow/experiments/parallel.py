"""Parallel trials (``[sweep] jobs = N``): N worker processes on one Optuna study.

The parent (``graphflow sweep``) opens the study, requeues the trials a killed sweep left
running, then starts N workers, each ``graphflow sweep PIPELINE --out-dir DIR --worker I``:
an ordinary sweep process that claims trials from the SQLite study
(:func:`graphflow.experiments.sweep.claim`) until it holds ``trials`` finished or running
ones, then exits 0. The parent waits for them and writes the outputs.

**Cores.** The core budget (``[pipeline] cores``, default torch's thread count, as for a run:
graphflow.runtime.cores) is split between the workers (:func:`split`): each gets
``cores // jobs`` torch threads (the first ``cores % jobs`` one more), pinned to CPUs of its
own, so that 2 jobs on 2 cores run one thread each, on one core each. A worker's runs see
its share as their budget (``--set pipeline.cores=T``, and ``OMP_NUM_THREADS=T``), so every
stage's core plan (``run.json`` ``stages[].cores``) splits that share. More jobs than cores
share CPUs, one thread each (said in one line: they slow each other down).

**A worker that dies** (killed by a signal: the kernel's OOM killer, a crash): one line says
which, the trial it was running (``user_attrs["pid"]``) is queued again, and a new worker
takes its place; a trial that has already killed a worker once is dropped instead. The
sweep ends as usual once the study has its trials. **A worker that fails** (a bad metric, a
NaN the run refuses, exit 1): its error is the sweep's one line, the other workers are
stopped, and the sweep exits 1.

**Signals.** SIGINT, SIGTERM or SIGHUP to the parent is forwarded to every worker (each in a
session of its own, so a terminal's Ctrl-C reaches each once); each stops its trial at a safe
point and queues it again, and the parent exits 128 + N once they have: the same command
resumes without repeating a finished trial. Whatever happens, no worker outlives the parent
(:func:`graphflow.distributed.procs.stop_all` in a ``finally``).
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from graphflow.distributed.procs import describe_exit, stop_all
from graphflow.errors import GraphflowError
from graphflow.runtime import signals

if TYPE_CHECKING:
    from graphflow.experiments.sweep import OpenSweep

POLL = 0.1
ERROR_PREFIX = "graphflow: error: "
QUIET = re.compile(r"graphflow: (terminated by |interrupted$|SIG\w+ received: stopping|run again "
                   r"with --debug)")
"""A worker's lines that repeat the parent's own (a signal it forwarded, the --debug hint)."""


@dataclass(frozen=True)
class Slot:
    """One worker's share: its torch threads and the CPUs it is pinned to."""

    index: int
    threads: int
    cpus: tuple[int, ...]

    def describe(self) -> str:
        cpus = ",".join(map(str, self.cpus))
        return f"worker {self.index}: {self.threads} thread{'s' * (self.threads > 1)} on " \
               f"CPU {cpus}"


def available_cpus() -> list[int]:
    """The CPUs this process may run on (its affinity), else all of them."""
    if hasattr(os, "sched_getaffinity"):
        return sorted(os.sched_getaffinity(0))
    return list(range(os.cpu_count() or 1))


def split(jobs: int, cores: int, cpus: Sequence[int]) -> list[Slot]:
    """``jobs`` shares of ``cores`` threads over ``cpus``: ``cores // jobs`` threads each
    (the first ``cores % jobs`` one more; at least one), on consecutive CPUs of ``cpus``
    (the first ``cores`` of them), wrapping round when there are more jobs than cores."""
    if jobs < 1 or cores < 1 or not cpus:
        raise ValueError(f"split({jobs}, {cores}, {list(cpus)}): needs jobs, cores and CPUs")
    pool = list(cpus)[:cores]
    slots, start = [], 0
    for i in range(jobs):
        threads = max(1, cores // jobs + (i < cores % jobs))
        slots.append(Slot(i, threads, tuple(pool[(start + k) % len(pool)]
                                            for k in range(min(threads, len(pool))))))
        start += threads
    return slots


def budget(raw: dict[str, Any]) -> int:
    """The sweep's core budget: ``[pipeline] cores``, else torch's thread count."""
    value = raw.get("pipeline", {}).get("cores") or 0
    if isinstance(value, int) and not isinstance(value, bool) and value > 0:
        return value
    from graphflow.runtime.cores import default_cores

    return default_cores()


@dataclass
class Worker:
    """A running worker process and what its stderr said."""

    slot: Slot
    proc: subprocess.Popen[str]
    errors: list[str] = field(default_factory=list)
    relay: threading.Thread | None = None


def _relay(stream: IO[str], errors: list[str]) -> None:
    """Pass a worker's stderr on, keeping its ``graphflow: error:`` lines for the parent."""
    for line in stream:
        if line.startswith(ERROR_PREFIX):
            errors.append(line[len(ERROR_PREFIX):].rstrip("\n"))
        elif not QUIET.match(line):
            sys.stderr.write(line)
            sys.stderr.flush()


def worker_command(opened: OpenSweep, overrides: Sequence[str], slot: Slot) -> list[str]:
    """The worker's ``graphflow sweep`` command line."""
    argv = [sys.executable, "-m", "graphflow", "sweep", str(opened.pipeline.resolve()),
            "--out-dir", str(opened.root.resolve())]
    for assignment in [*overrides, f"pipeline.cores={slot.threads}"]:
        argv += ["--set", assignment]
    return [*argv, "--worker", str(slot.index)]


def start(opened: OpenSweep, overrides: Sequence[str], slot: Slot) -> Worker:
    """Start ``slot``'s worker: its threads in the environment, pinned to its CPUs, in a
    session of its own, its stdout passed through and its stderr relayed."""
    threads = str(slot.threads)
    env = {**os.environ, "OMP_NUM_THREADS": threads, "MKL_NUM_THREADS": threads,
           "PYTHONUNBUFFERED": "1"}
    pin: Callable[[], None] | None = None
    if hasattr(os, "sched_setaffinity"):
        cpus = set(slot.cpus)

        def pin() -> None:  # in the child, before exec: every thread it starts inherits it
            os.sched_setaffinity(0, cpus)

    proc = subprocess.Popen(worker_command(opened, overrides, slot), env=env, text=True,
                            stderr=subprocess.PIPE, start_new_session=True, preexec_fn=pin)
    worker = Worker(slot, proc)
    worker.relay = threading.Thread(target=_relay, args=(proc.stderr, worker.errors),
                                    name=f"graphflow-sweep-relay-{slot.index}", daemon=True)
    worker.relay.start()
    return worker


def _running_trials(opened: OpenSweep, pid: int) -> list[Any]:
    import optuna

    return [t for t in opened.study.get_trials(
                deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
            if t.user_attrs.get("pid") == pid]


def _bury(opened: OpenSweep, worker: Worker) -> str:
    """The trials a dead worker was running: queued again (or dropped, the second time);
    returns what became of them, for the warning line."""
    import optuna

    from graphflow.experiments.sweep import requeue

    said = []
    for trial in _running_trials(opened, worker.proc.pid):
        if trial.user_attrs.get("killed_worker"):
            opened.study._storage.set_trial_user_attr(trial._trial_id, "failed",
                                                      "killed a worker twice")
            opened.study._storage.set_trial_state_values(trial._trial_id,
                                                         optuna.trial.TrialState.FAIL)
            said.append(f"trial {trial.number} is dropped (its values killed a worker before)")
        else:
            how = exit_text(worker.proc.returncode)
            requeue(opened.study, trial, f"its worker was {how}", killed_worker=True)
            said.append(f"trial {trial.number} runs again")
    return "; ".join(said) or "it was between trials"


def exit_text(code: int) -> str:
    """``killed by SIGKILL``, ``stopped by SIGTERM`` (a worker's own 128 + N), or the status."""
    if code > 128 and code - 128 in signals.SIGNALS:
        return f"stopped by {signals.signal_name(code - 128)}"
    return describe_exit(code)


def run_workers(opened: OpenSweep, *, overrides: Sequence[str] = (),
                echo: Callable[[str], Any] = print) -> None:
    """Run ``opened``'s remaining trials in ``jobs`` worker processes (module docstring).

    :raises GraphflowError: a worker failed (its own one-line message), or every worker
        died before the study had its trials.
    :raises graphflow.runtime.signals.Terminated: stopped by a signal, after the workers.
    """
    sweep = opened.sweep
    jobs = max(1, min(sweep.jobs, sweep.trials - opened.finished()))  # no idle workers
    cores, cpus = budget(opened.raw), available_cpus()
    slots = split(jobs, cores, cpus)
    shared = " (more jobs than cores: workers share CPUs)" if jobs > cores else ""
    echo(f"graphflow: {jobs} worker{'s' * (jobs > 1)} on {cores} cores{shared}: "
         + "; ".join(s.describe() for s in slots))
    workers: dict[int, Worker] = {}
    failure: tuple[Worker, int] | None = None
    deaths = 0

    def forward(signum: int) -> None:
        for w in workers.values():
            if w.proc.poll() is None:
                w.proc.send_signal(signum)

    try:
        # wait for the workers to reach their safe points: longer than their own grace
        with signals.handle_signals(on_signal=forward, grace=3 * signals.GRACE_SECONDS) \
                as guard:
            with signals.deferred():
                for slot in slots:
                    workers[slot.index] = start(opened, overrides, slot)
                while workers:
                    time.sleep(POLL)
                    for index, w in list(workers.items()):
                        code = w.proc.poll()
                        if code is None:
                            continue
                        if w.relay is not None:
                            w.relay.join(timeout=5)
                        del workers[index]
                        if code == 0 or guard.requested is not None:
                            continue
                        if 0 < code <= 128:  # it failed and said why: stop the others
                            failure = (w, code)
                            forward(signal.SIGTERM)
                            continue
                        if failure is not None:
                            continue
                        deaths += 1
                        fate = _bury(opened, w)
                        again = opened.finished() < sweep.trials and deaths <= sweep.trials
                        echo(f"graphflow: warning: sweep worker {index} (pid {w.proc.pid}) "
                             f"{exit_text(code)}; {fate}"
                             + ("; a new worker takes its place" if again else ""))
                        if again:
                            workers[index] = start(opened, overrides, w.slot)
            signals.safe_point()
    finally:
        left = [w.proc for w in workers.values() if w.proc.poll() is None]
        if left:  # a second signal, or the grace ran out: none outlives the sweep
            stop_all(left)
        for w in workers.values():
            if w.relay is not None:
                w.relay.join(timeout=5)
    if failure is not None:
        w, code = failure
        message = w.errors[-1] if w.errors else \
            f"sweep worker {w.slot.index} (pid {w.proc.pid}) failed: {describe_exit(code)}"
        error = GraphflowError(message)
        error.exit_code = code
        raise error
    if opened.finished() < sweep.trials:
        raise GraphflowError(f"{opened.storage_path}: the workers ended with "
                             f"{opened.finished()} of {sweep.trials} trials finished (see the "
                             f"warnings above); run the same command to resume")
