"""One machine of a ``graphflow launch`` run: its DistDGL server and its trainers, supervised.

``python -m graphflow.distributed.machine SPEC_JSON`` is what the launcher starts on each
machine (over ssh, or on this host for ``--local``, there inside its own mount namespace
with a private ``/dev/shm``). It starts the machine's processes (all in its own process
group, so that the launcher can stop the machine with one ``killpg``) and watches them:

* a process that exits with an error: the others are stopped, one status line goes to the
  launcher, exit 1;
* every trainer done: the server (which stops when its last client leaves) is given
  :data:`SERVER_GRACE` seconds, then stopped; exit 0;
* SIGINT / SIGTERM / SIGHUP (the launcher stopping the run, or a closed ssh session): every
  process is stopped, exit 128 + N;
* the launcher gone (killed without a chance to stop the machines): every process is
  stopped, exit 1.

The status line is ``@graphflow-launch {"role": ..., "status": ...}`` on stdout; the
processes' own output passes through on stdout and stderr.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

from graphflow.distributed.procs import describe_exit, stop_all

STATUS = "@graphflow-launch "
SERVER_GRACE = 20.0
POLL = 0.1


@dataclass
class Role:
    """One process of the machine: what to run and as whom."""

    label: str  # "server", "trainer 0 (rank 2)"
    argv: list[str]
    env: dict[str, str]
    trainer: bool


def report(role: str, status: str) -> None:
    print(STATUS + json.dumps({"role": role, "status": status}), flush=True)


def run(spec: dict[str, Any]) -> int:
    roles = [Role(**r) for r in spec["roles"]]
    stop: list[int] = []
    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, lambda s, _f: stop.append(s))
    procs = [(r, subprocess.Popen(r.argv, env={**os.environ, **r.env}, cwd=spec["cwd"]))
             for r in roles]
    trainers_done_at: float | None = None
    parent = os.getppid()
    try:
        while True:
            if stop:
                return 128 + stop[0]
            if os.getppid() != parent:  # the launcher died: nobody would stop us
                report("supervisor", "lost its launcher")
                return 1
            for role, proc in procs:
                code = proc.poll()
                if code not in (None, 0):
                    report(role.label, describe_exit(code))
                    return 1
            if trainers_done_at is None and all(p.poll() == 0 for r, p in procs if r.trainer):
                trainers_done_at = time.monotonic()
            if trainers_done_at is not None and (
                    all(p.poll() is not None for _, p in procs)
                    or time.monotonic() - trainers_done_at > SERVER_GRACE):
                return 0
            time.sleep(POLL)
    finally:
        stop_all([p for _, p in procs])


if __name__ == "__main__":
    sys.exit(run(json.loads(sys.argv[1])))
