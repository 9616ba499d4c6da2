"""``graphflow partition``: split a pipeline's graph for DistDGL (docs/distributed.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from graphflow.cli.run import _config
from graphflow.distributed.partition import check_parts, describe, partition


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "partition a pipeline's graph for distributed training (DGL partition_graph)"
    p = sub.add_parser("partition", parents=[common], help=help_, description=help_)
    p.add_argument("pipeline", type=Path, help="pipeline TOML file ([load], [[transform]])")
    p.add_argument("--parts", type=int, required=True, metavar="N",
                   help="number of partitions (one per machine)")
    p.add_argument("--method", default="metis", choices=("metis", "random"),
                   help="METIS (fewer cut edges) or random assignment (default: metis)")
    p.add_argument("--out", type=Path, required=True, metavar="DIR",
                   help="folder for the partitions, graph.json and graphflow's metadata")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override a pipeline value (TOML)")
    p.add_argument("--quiet", action="store_true", help="no progress or info lines")
    p.set_defaults(func=cmd_partition, device=None, out_dir=None)


def cmd_partition(args: argparse.Namespace) -> int:
    check_parts(args.parts, args.method)
    host, config = _config(args)
    meta = partition(config, host, parts=args.parts, method=args.method, out=args.out,
                     quiet=args.quiet)
    print(describe(meta, args.out.resolve()))
    return 0
