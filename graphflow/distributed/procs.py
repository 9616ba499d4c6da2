"""Stopping process trees: what ``graphflow launch`` and its machines use to leave nothing."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path

GRACE = 3.0  # seconds between SIGTERM and SIGKILL


def describe_exit(code: int) -> str:
    """``exit status 1`` or ``killed by SIGKILL`` for a ``Popen.returncode``."""
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit status {code}"


def descendants(pid: int) -> list[int]:
    """Every living process below ``pid`` (from ``/proc``)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def _signal(pids: Sequence[int], signum: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, signum)
        except OSError:  # already gone
            pass


def stop_all(procs: Sequence[subprocess.Popen], grace: float = GRACE) -> None:
    """SIGTERM ``procs`` and all their descendants, SIGKILL what is left after ``grace``
    seconds, and reap ``procs``."""
    tree = [pid for p in procs if p.poll() is None for pid in (p.pid, *descendants(p.pid))]
    _signal(tree, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    _signal([pid for p in procs for pid in descendants(p.pid)] + tree, signal.SIGKILL)
    for p in procs:
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass


def stop_groups(procs: Sequence[subprocess.Popen], grace: float = GRACE) -> None:
    """Stop each of ``procs`` with its whole process group (each started in its own
    session): SIGTERM, then SIGKILL after ``grace`` seconds; reap them."""
    groups = [p.pid for p in procs]
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGTERM)
        except OSError:
            pass
    deadline = time.monotonic() + grace
    while time.monotonic() < deadline and any(p.poll() is None for p in procs):
        time.sleep(0.05)
    for pgid in groups:
        try:
            os.killpg(pgid, signal.SIGKILL)
        except OSError:
            pass
    for p in procs:
        try:
            p.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            pass
