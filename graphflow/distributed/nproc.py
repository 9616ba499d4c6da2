"""``graphflow run PIPELINE --nproc N``: N data-parallel workers through torch's elastic launcher.

This is ``torchrun --nnodes 1 --nproc-per-node N --master-addr 127.0.0.1 --master-port PORT
-m graphflow run PIPELINE ...`` run in-process with :func:`torch.distributed.run.run`: the
launcher (not graphflow) starts the workers, sets their ``RANK`` / ``WORLD_SIZE`` /
``LOCAL_RANK`` / ``MASTER_*`` environment, watches them, and stops all of them when one
fails or on Ctrl-C. Each worker is an ordinary ``graphflow run`` that finds that environment
(:meth:`graphflow.distributed.world.World.from_env`). For several machines, run ``torchrun``
yourself with its rendezvous options and the same ``-m graphflow run PIPELINE`` command.
"""

from __future__ import annotations

import argparse
import os
import socket
import sys
from pathlib import Path

from graphflow.config import PipelineConfig
from graphflow.distributed.world import check_data_parallel
from graphflow.errors import ConfigError, GraphflowError
from graphflow.manager import WARNED_ENV
from graphflow.runner import default_out_dir
from graphflow.runtime.signals import SIGNALS, Terminated

LOOPBACK = "127.0.0.1"


def free_port(host: str = LOOPBACK) -> int:
    """A TCP port nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def worker_argv(args: argparse.Namespace, config: PipelineConfig) -> list[str]:
    """The ``graphflow run`` arguments each worker gets: the parent's, less ``--nproc``, with
    the out_dir made absolute so that every worker agrees on it."""
    argv = ["run", str(Path(args.pipeline).resolve())]
    for override in args.overrides:
        argv += ["--set", override]
    if args.device:
        argv += ["--device", args.device]
    argv += ["--out-dir", str(default_out_dir(config).resolve())]
    argv += [flag for flag, on in (("--resume", args.resume), ("--quiet", args.quiet),
                                   ("--debug", args.debug)) if on]
    return argv


def launcher_argv(nproc: int, worker: list[str], port: int | None = None) -> list[str]:
    """``torch.distributed.run`` arguments for ``nproc`` workers on this machine (loopback)."""
    return ["--nnodes", "1", "--nproc-per-node", str(nproc), "--master-addr", LOOPBACK,
            "--master-port", str(port or free_port()), "--module", "graphflow", *worker]


def run_nproc(args: argparse.Namespace, config: PipelineConfig) -> int:
    """Start ``args.nproc`` workers of ``config`` and wait for them; 0 when all succeed.

    :raises ConfigError: ``--nproc`` < 1, or a task that cannot run data-parallel.
    :raises GraphflowError: a worker failed (its own message is printed above).
    :raises Terminated: the launcher, or every failed worker, was stopped by SIGINT, SIGTERM
        or SIGHUP; ``graphflow`` then exits 128 + its number, as a single-process run does.
    """
    if args.nproc < 1:
        raise ConfigError(f"--nproc {args.nproc}: give the number of worker processes (>= 1)")
    check_data_parallel(config, args.nproc)
    from torch.distributed.elastic.multiprocessing.api import SignalException
    from torch.distributed.elastic.multiprocessing.errors import ChildFailedError
    from torch.distributed.run import parse_args, run

    # The launcher loaded the plugins and warned about broken ones; its workers inherit this
    # environment and stay quiet about them.
    os.environ[WARNED_ENV] = "1"
    try:
        run(parse_args(launcher_argv(args.nproc, worker_argv(args, config))))
    except SignalException as exc:  # the launcher itself got SIGTERM/SIGHUP and stopped them
        raise Terminated(int(exc.sigval)) from None
    except ChildFailedError as exc:
        failed = ", ".join(f"rank {rank} (exit code {f.exitcode})"
                           for rank, f in sorted(exc.failures.items()))
        stopped_by = {f.exitcode - 128 for f in exc.failures.values()}
        if len(stopped_by) == 1 and (signum := stopped_by.pop()) in SIGNALS:
            # every failed worker was stopped by the same signal at a safe point: that is the
            # run's outcome (run.json says so), not a failure of graphflow's
            print(f"graphflow: {args.nproc} data-parallel workers of {config.source}: {failed}",
                  file=sys.stderr)
            raise Terminated(signum) from None
        raise GraphflowError(f"{args.nproc} data-parallel workers of {config.source}: "
                             f"{failed} failed; see its message above") from None
    finally:
        os.environ.pop(WARNED_ENV, None)
    return 0
