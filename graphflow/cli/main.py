"""``graphflow`` entry point: argument parsing and the one place errors become exit codes.

Exit codes: 0 ok, 1 pipeline or config error, 2 usage error, 128 + N stopped by signal N
(130 Ctrl-C, 143 SIGTERM, 129 SIGHUP; see :mod:`graphflow.runtime.signals`).
A ``GraphflowError`` prints one line; a traceback only with ``--debug``.
"""

from __future__ import annotations

import argparse
import os
import select
import sys
import traceback
from collections.abc import Sequence

from graphflow.errors import GraphflowError
from graphflow.runtime.signals import Terminated


def build_parser() -> argparse.ArgumentParser:
    from graphflow.cli import (distributed, doctor, experiments, explain, info, predict, run,
                               scaffold, serve)

    common = argparse.ArgumentParser(add_help=False)
    # SUPPRESS (the action is shared by every command's parser): a command's parser sets
    # ``debug`` only when given after the command, so ``graphflow --debug run ...`` is not
    # reset to False by the command's own default; parse() fills in False when absent.
    common.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                        help="show tracebacks on errors")
    parser = argparse.ArgumentParser(
        prog="graphflow", description="Plugin-based graph learning pipelines on DGL and PyTorch.",
        parents=[common])
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    run.add_commands(sub, common)
    info.add_commands(sub, common)
    doctor.add_commands(sub, common)
    scaffold.add_commands(sub, common)
    distributed.add_commands(sub, common)
    experiments.add_commands(sub, common)
    predict.add_commands(sub, common)
    explain.add_commands(sub, common)
    serve.add_commands(sub, common)
    return parser


def parse(argv: Sequence[str] | None) -> argparse.Namespace:
    """The command line's arguments; ``--debug`` counts before or after the command."""
    args = build_parser().parse_args(argv)
    args.debug = getattr(args, "debug", False)
    return args


def main(argv: Sequence[str] | None = None) -> int:
    code = _main(argv)
    world = sys.modules.get("graphflow.distributed.world")  # imported by any run that joined
    if world is not None and world.left_group():  # a data-parallel worker: see left_group
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
    return code


def _main(argv: Sequence[str] | None) -> int:
    args = parse(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # surface a closed pipe here, not at interpreter exit
        return code
    except GraphflowError as exc:
        return _report(exc, args.debug, f"error: {exc}", exc.exit_code)
    except Terminated as exc:  # SIGINT / SIGTERM / SIGHUP under graphflow.runtime.signals
        print(f"graphflow: {exc.status} by {exc.name}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("graphflow: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError as exc:
        if not _stdout_reader_left():  # some other pipe or socket broke: a real failure
            return _report(exc, args.debug, f"internal error: {type(exc).__name__}: {exc}", 1)
        # `graphflow describe gcn | head`: the reader left; not an error
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except Exception as exc:  # a bug in graphflow itself: still no raw traceback by default
        return _report(exc, args.debug, f"internal error: {type(exc).__name__}: {exc}", 1)


def _stdout_reader_left() -> bool:
    """Whether stdout is a pipe whose reading end is closed (poll reports an error on it)."""
    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(events & select.POLLERR for _, events in poller.poll(0))
    except (OSError, ValueError, AttributeError):  # no real file behind stdout
        return False


def _report(exc: BaseException, debug: bool, message: str, code: int) -> int:
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"graphflow: {message}", file=sys.stderr)
    if not debug and (exc.__cause__ is not None or not isinstance(exc, GraphflowError)):
        print("graphflow: run again with --debug for the traceback", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
