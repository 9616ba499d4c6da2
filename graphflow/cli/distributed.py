"""``graphflow partition`` and ``graphflow launch``: DistDGL runs (docs/distributed.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from graphflow.cli.run import _config


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

    help_ = "train on a partitioned graph with DistDGL servers and trainers on each machine"
    p = sub.add_parser("launch", parents=[common], help=help_, description=help_)
    p.add_argument("pipeline", type=Path, help='pipeline TOML file ([load] type = '
                   '"partitioned", [sample] type = "dist_neighbor")')
    p.add_argument("--ip-config", type=Path, required=True, metavar="IP.txt",
                   help="one line per machine: IP PORT (the DistDGL server's port)")
    p.add_argument("--trainers", type=int, required=True, metavar="T",
                   help="trainer processes per machine")
    p.add_argument("--samplers", type=int, default=0, metavar="S",
                   help="DistDGL sampler processes per trainer; only 0 (sample inside each "
                   "trainer) is supported yet")
    p.add_argument("--local", type=int, default=None, metavar="M",
                   help="run the M machines of the ip config on this host (development, "
                   "tests); without it, each machine is reached over ssh")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override a pipeline value (TOML)")
    p.add_argument("--out-dir", type=Path, default=None,
                   help="where rank 0 writes run.json and the exports")
    p.add_argument("--quiet", action="store_true", help="no progress or info lines")
    p.set_defaults(func=cmd_launch, device=None)


def cmd_partition(args: argparse.Namespace) -> int:
    from graphflow.distributed.partition import check_parts, describe, partition

    check_parts(args.parts, args.method)
    host, config = _config(args)
    meta = partition(config, host, parts=args.parts, method=args.method, out=args.out,
                     quiet=args.quiet)
    print(describe(meta, args.out.resolve()))
    return 0


def cmd_launch(args: argparse.Namespace) -> int:
    from graphflow.distributed.launch import launch

    _, config = _config(args)
    argv = [str(args.pipeline.resolve())]
    for override in args.overrides:
        argv += ["--set", override]
    argv += [flag for flag, on in (("--quiet", args.quiet), ("--debug", args.debug)) if on]
    return launch(config, ip_config=args.ip_config, trainers=args.trainers,
                  samplers=args.samplers, local=args.local, argv=argv, quiet=args.quiet)
