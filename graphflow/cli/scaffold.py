"""``graphflow new-plugin NAME``: scaffold a plugin package (see :mod:`graphflow.scaffold`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from graphflow.scaffold import DEFAULT_KINDS, KINDS, new_plugin, parse_kinds


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "write a pip-installable plugin package, with tests, README and example pipeline"
    p = sub.add_parser("new-plugin", parents=[common], help=help_, description=help_)
    p.add_argument("name", help="package name (lowercase, e.g. my_models); also the plugin name")
    p.add_argument("--kinds", default=",".join(DEFAULT_KINDS),
                   help=f"comma-separated components to include: {','.join(KINDS)} "
                        f"(default: {','.join(DEFAULT_KINDS)})")
    p.add_argument("--dir", type=Path, default=Path("."),
                   help="folder in which to create the package folder NAME (default: .)")
    p.set_defaults(func=cmd_new_plugin)


def cmd_new_plugin(args: argparse.Namespace) -> int:
    path = new_plugin(args.name, parse_kinds(args.kinds), args.dir)
    files = sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file())
    print(f"graphflow: wrote plugin package {path} ({len(files)} files)")
    for rel in files:
        print(f"    {rel}")
    print(f"next:\n    cd {path}\n    pip install -e .\n    pytest\n    graphflow run pipeline.toml")
    return 0
