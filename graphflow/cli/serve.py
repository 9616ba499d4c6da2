"""``graphflow serve RUN_DIR``: the model of a run as an HTTP JSON service."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "serve a trained model (a run's bundle) over HTTP"
    p = sub.add_parser("serve", parents=[common], help=help_, description=help_)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR")
    p.set_defaults(func=cmd_serve)


def cmd_serve(args: argparse.Namespace) -> int:
    raise NotImplementedError
