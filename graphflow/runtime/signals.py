"""Termination signals: SIGINT, SIGTERM and SIGHUP stop a run cleanly, at a safe point.

Batch schedulers (Slurm, Kubernetes, systemd) stop a job with SIGTERM and, after a grace
period, SIGKILL; a closed terminal sends SIGHUP; Ctrl-C sends SIGINT. Under
:func:`handle_signals` all three behave alike:

* **first signal**: raises :class:`Terminated` at once, except inside a :func:`deferred`
  region (the epoch loop), where it is only noted; the region's code reaches a safe point
  (:func:`pending` / :func:`safe_point`, e.g. the end of an epoch), saves what ``--resume``
  needs and stops. A region that has not reached its safe point ``grace`` seconds later is
  stopped as if a second signal had come, so a scheduler's SIGKILL still finds ``run.json``
  written;
* **second signal**: raises :class:`Terminated` at once, wherever the run is, and gives the
  signals back to their previous handlers, so a third one takes the old action (for SIGTERM
  and SIGHUP: the process dies);
* once the run calls :func:`finishing` (it is writing ``run.json`` on its way out), a signal
  is only noted, so that the record of a stopping run is never cut short.

:class:`Terminated` is a ``KeyboardInterrupt``: every ``except KeyboardInterrupt`` already in
the code treats it as Ctrl-C. It carries the signal: ``status`` (``"interrupted"`` for SIGINT,
``"terminated"`` for the others, as ``run.json`` records it), ``name`` and ``exit_code``
(128 + signal number: 130 SIGINT, 143 SIGTERM, 129 SIGHUP, the shell's convention).

The handlers exist only while :func:`handle_signals` is active (the CLI wraps ``graphflow
run`` in it) and the previous ones come back when it exits. Without it, library use of
``run_pipeline`` changes nothing process-wide: :func:`deferred`,
:func:`finishing`, :func:`pending` and :func:`safe_point` do nothing, and Ctrl-C raises Python's own
``KeyboardInterrupt``. Handlers can only be set in the main thread; elsewhere
:func:`handle_signals` installs nothing and yields an inactive guard.

API::

    with handle_signals(on_signal=None, grace=GRACE_SECONDS) as guard:  # install, restore after
        ...
    guard.requested          # the first signal received (an int), or None
    pending()                # same, for code without the guard (None when no guard is active)
    safe_point()             # raise Terminated if a signal is pending
    agree()                  # pending() on any rank of a data-parallel run (a collective)
    with deferred(): ...     # the first signal waits for a safe point (at most `grace` seconds)
    finishing()              # from now on signals are noted, never raised (final writes)

**Worker threads** (Hogwild skip-gram trainers, sampling prefetch workers) must end before
the interpreter does. A thread still inside a torch kernel when Python finalises is stopped
by the interpreter with ``pthread_exit`` as soon as it asks for the GIL back; that unwinds
through a C++ destructor declared ``noexcept`` (pybind11's GIL release guard), C++ calls
``std::terminate`` ("terminate called without an active exception") and the process dies by
SIGABRT (exit 134) after ``run.json`` already said ``terminated``. So every owner of worker
threads tells them to stop and waits for them in a ``finally`` with :func:`join_threads`,
which keeps waiting when a further signal interrupts the wait; threads are named
``graphflow-*``, and leaving the outermost :func:`handle_signals` block collects unreachable
generators (whose ``finally`` stops their workers) and joins any such thread still running,
for at most :data:`JOIN_SECONDS`.

**Multi-process launchers** (one parent, N workers, each worker a ``graphflow run``-like process
under its own :func:`handle_signals`) reuse this module to forward signals::

    procs = [subprocess.Popen(cmd, start_new_session=True) for cmd in commands]
    with handle_signals(on_signal=lambda s: [p.send_signal(s) for p in procs]) as guard:
        with deferred():                     # let the workers reach their safe point
            while any(p.poll() is None for p in procs):
                time.sleep(0.1)
        safe_point()                         # then stop the launcher itself: Terminated
    # except Terminated as exc: ... return exc.exit_code

``on_signal(signum)`` runs in the main thread for every real signal received (not for the
grace timer's), before the guard decides what to do. Start workers in their own session or
process group (``start_new_session=True``): a signal sent to the whole group (Ctrl-C at a
terminal, ``kill -TERM -PGID``) would otherwise reach each worker twice, directly and
forwarded, and the second copy stops it at once.

**Workers in a collective** (DDP under ``--nproc`` or torchrun) must stop at the same safe
point, or one rank waits for the others forever: a scheduler may signal one worker only.
:func:`agree` is that safe point's test: when ``torch.distributed`` is initialised it
all-reduces (MAX) each rank's pending signal, once per call (the epoch loop calls it once per
epoch and the end of a :func:`deferred` region once more), and a rank that learns of a peer's
signal stops as if it had received it (``run.json`` from rank 0 records that signal, the
resume state is saved, every worker exits with 128 + its number). A peer's signal does not
count as this rank's first: the launcher's own SIGTERM to the survivors (torch's agent
sends one when a worker exits) still waits for the safe point instead of stopping at once.
And a worker that stopped that way ignores SIGTERM and SIGHUP (where their previous action
was the default, death) once its guard ends: it has written everything and is on its way out
with 128 + N, and the launcher's SIGTERM to a worker that is still exiting would otherwise
kill it during interpreter shutdown (reported as exit code -15, not 143). A worker stuck
there still ends by the launcher's SIGKILL.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

SIGNALS: tuple[int, ...] = tuple(
    s for s in (getattr(signal, n, None) for n in ("SIGINT", "SIGTERM", "SIGHUP")) if s)
"""The signals :func:`handle_signals` takes over by default."""

JOIN_SECONDS = 30.0
"""How long leaving :func:`handle_signals` waits for ``graphflow-*`` threads still running."""

THREAD_PREFIX = "graphflow-"
"""The name prefix of graphflow's worker threads (joined before the process exits)."""

GRACE_SECONDS = 10.0
"""How long a deferred first signal waits for a safe point (Kubernetes and Slurm wait 30 s
between SIGTERM and SIGKILL)."""


def signal_name(signum: int) -> str:
    """``"SIGTERM"`` for 15, ``"signal 99"`` for a number without a name."""
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


class Terminated(KeyboardInterrupt):
    """The run was stopped by a signal (a ``KeyboardInterrupt``, so handled like Ctrl-C)."""

    def __init__(self, signum: int):
        super().__init__(signal_name(signum))
        self.signum = signum

    @property
    def name(self) -> str:
        return signal_name(self.signum)

    @property
    def status(self) -> str:
        """What ``run.json`` records: ``interrupted`` (SIGINT) or ``terminated``."""
        return "interrupted" if self.signum == signal.SIGINT else "terminated"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


class SignalGuard:
    """The state of one :func:`handle_signals` block (see the module docstring)."""

    def __init__(self, signals: tuple[int, ...], on_signal: Callable[[int], Any] | None,
                 grace: float):
        self.signals = signals
        self.on_signal = on_signal
        self.grace = grace
        self.received: list[int] = []
        self.active = False
        self._previous: dict[int, Any] = {}
        self._defer = 0
        self._shield = 0
        self._timer: threading.Timer | None = None
        self._grace_expired = False
        self.peer: int | None = None  # a signal another rank received (see agree())
        self.collective = False  # stopped by agreement in a process group (see agree())

    @property
    def requested(self) -> int | None:
        """The first signal received (by this process, else by a peer rank), or None."""
        return self.received[0] if self.received else self.peer

    def install(self) -> None:
        for s in self.signals:
            self._previous[s] = signal.getsignal(s)
            signal.signal(s, self._handle)
        self.active = True

    def restore(self) -> None:
        """Give every signal back to its previous handler (idempotent)."""
        self._cancel_timer()
        for s, handler in self._previous.items():
            signal.signal(s, handler if handler is not None else signal.SIG_DFL)
        self._previous.clear()

    def check(self) -> None:
        """A safe point: raise :class:`Terminated` if a signal came."""
        if self.requested is not None and not self._shield:
            self._cancel_timer()
            raise Terminated(self.requested)

    def _handle(self, signum: int, frame: Any) -> None:
        if self._grace_expired:  # the timer's signal: stop now, as a second signal would
            self._grace_expired = False
        else:
            self.received.append(signum)
            if self.on_signal is not None:
                try:
                    self.on_signal(signum)
                except Exception as exc:  # forwarding must not break the stop itself
                    print(f"graphflow: warning: forwarding {signal_name(signum)} failed: "
                          f"{type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
        if self._shield:
            return
        if len(self.received) == 1 and self._defer and self._timer is None:
            print(f"graphflow: {signal_name(signum)} received: stopping at the next safe point "
                  f"(at most {self.grace:g}s); send it again to stop at once",
                  file=sys.stderr, flush=True)
            self._start_timer(signum)
            return
        if len(self.received) > 1:
            self.restore()  # a third signal takes the previous action (SIGTERM: death)
        self._cancel_timer()
        raise Terminated(self.received[0] if self.received else signum)

    def _start_timer(self, signum: int) -> None:
        main = threading.main_thread().ident

        def expire() -> None:
            self._grace_expired = True
            if main is not None:
                signal.pthread_kill(main, signum)

        self._timer = threading.Timer(self.grace, expire)
        self._timer.daemon = True
        self._timer.start()

    def _cancel_timer(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


_guards: list[SignalGuard] = []  # active guards, innermost last (main thread only)


def active() -> SignalGuard | None:
    """The innermost active guard, or None (library use)."""
    return _guards[-1] if _guards else None


@contextmanager
def handle_signals(signals: tuple[int, ...] = SIGNALS, *,
                   on_signal: Callable[[int], Any] | None = None,
                   grace: float = GRACE_SECONDS) -> Iterator[SignalGuard]:
    """Handle ``signals`` as described in the module docstring while the block runs."""
    guard = SignalGuard(tuple(signals), on_signal, grace)
    if threading.current_thread() is not threading.main_thread():
        yield guard  # signal.signal works only in the main thread: stay inactive
        return
    guard.install()
    _guards.append(guard)
    try:
        yield guard
    finally:
        _guards.remove(guard)
        if not _guards:
            guard._shield += 1  # joining: signals are noted, not raised, until restore()
            _settle_threads(JOIN_SECONDS)
        guard.restore()
        if guard.collective:  # a data-parallel worker on its way out (module docstring)
            for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
                if s in guard.signals and signal.getsignal(s) in (signal.SIG_DFL, None):
                    signal.signal(s, signal.SIG_IGN)


def join_threads(threads: list[threading.Thread]) -> None:
    """Join every thread of ``threads`` (already told to stop), even when a signal's
    :class:`Terminated` interrupts the wait; that exception is raised once all have ended."""
    interrupted: BaseException | None = None
    for t in threads:
        while True:
            try:
                t.join()
                break
            except KeyboardInterrupt as exc:  # Terminated included: wait on, raise after
                interrupted = interrupted or exc
    if interrupted is not None:
        raise interrupted


def _settle_threads(seconds: float) -> list[str]:
    """Join the ``graphflow-*`` threads still running (module docstring), at most ``seconds``
    in all; returns the names of those that did not end (and warns about them)."""
    import gc
    import time

    def running() -> list[threading.Thread]:
        return [t for t in threading.enumerate()
                if t.name.startswith(THREAD_PREFIX) and t is not threading.current_thread()
                and t.is_alive()]

    if not running():
        return []
    gc.collect()  # an abandoned prefetch generator's finally stops and joins its workers
    end = time.monotonic() + seconds
    for t in running():
        t.join(max(0.0, end - time.monotonic()))
    left = [t.name for t in running()]
    if left:
        print(f"graphflow: warning: worker thread(s) {', '.join(left)} still running at exit",
              file=sys.stderr, flush=True)
    return left


def pending() -> int | None:
    """The signal waiting for a safe point, or None (also when no guard is active)."""
    guard = active()
    return guard.requested if guard is not None else None


def safe_point() -> None:
    """Raise :class:`Terminated` if a signal is pending; nothing without an active guard."""
    guard = active()
    if guard is not None:
        guard.check()


@contextmanager
def deferred() -> Iterator[None]:
    """While inside, a first signal waits for :func:`safe_point` (see the module docstring).

    Leaving the region is itself a safe point.
    """
    guard = active()
    if guard is None:
        yield
        return
    guard._defer += 1
    try:
        yield
    finally:
        guard._defer -= 1
    if not guard._defer:
        agree()  # data-parallel: a signal that came after the last epoch's agreement
        guard.check()


def agree() -> int | None:
    """:func:`pending` agreed over the ranks of a data-parallel run: the signal pending on
    any rank (the largest number if several), or None.

    A collective when ``torch.distributed`` is initialised: every rank must call it at the
    same point (once per epoch: an all-reduce of one integer). A signal learned from a peer
    is noted, so :func:`safe_point` stops this rank too. Without a process group it is
    :func:`pending`, and costs nothing."""
    guard = active()
    mine = guard.requested if guard is not None else None
    dist = sys.modules.get("torch.distributed")  # never imports torch itself
    if dist is None or not dist.is_available() or not dist.is_initialized():
        return mine
    import torch

    device = torch.device("cpu")
    if dist.get_backend() == "nccl":
        device = torch.device("cuda", torch.cuda.current_device())
    flag = torch.tensor([mine or 0], dtype=torch.int64, device=device)
    dist.all_reduce(flag, op=dist.ReduceOp.MAX)
    agreed = int(flag.item()) or None
    if agreed is not None and guard is not None:
        guard.collective = True
        if guard.requested is None:
            guard.peer = agreed
    return agreed


def stopped_together() -> bool:
    """True when this rank is stopping because :func:`agree` found a signal: every rank of
    the process group raised :class:`Terminated` at the same safe point."""
    guard = active()
    return guard is not None and guard.collective


def finishing() -> None:
    """The run is ending (its record is being written): from now on, until the guard exits,
    signals are noted and never raised, so that ``run.json`` is never cut short."""
    guard = active()
    if guard is not None:
        guard._shield += 1
