"""``graphflow run`` and ``graphflow validate``."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING

from graphflow.errors import ConfigError

if TYPE_CHECKING:  # torch, DGL and the plugins load when a command runs, not for --help
    from graphflow.config import PipelineConfig
    from graphflow.manager import PluginHost


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    for name, func, help_ in (("run", cmd_run, "run a pipeline"),
                              ("validate", cmd_validate, "check a pipeline without running it")):
        p = sub.add_parser(name, parents=[common], help=help_, description=help_)
        p.add_argument("pipeline", type=Path, help="pipeline TOML file")
        p.add_argument("--set", dest="overrides", action="append", default=[],
                       metavar="SECTION.KEY=VALUE",
                       help="override a value (parsed as TOML); transform.0.key for list sections")
        p.add_argument("--device", help="override pipeline.device (auto|cpu|cuda|cuda:N)")
        p.add_argument("--out-dir", type=Path, help="override pipeline.out_dir")
        p.add_argument("--seeds", metavar="SEEDS",
                       help="one run per seed (0-9, 0,1,2 or 0-4,10), each in OUT_DIR/seed-S/, "
                            "and their mean and std in OUT_DIR/summary.json; replaces "
                            "pipeline.seed / pipeline.seeds")
        p.add_argument("--nproc", type=int, default=1, metavar="N",
                       help="data-parallel worker processes on this machine, started "
                            "with torch.distributed.run (gloo on CPU, NCCL on CUDA)")
        if name == "run":
            p.add_argument("--resume", action="store_true",
                           help="continue an interrupted run from its last checkpoint")
            p.add_argument("--quiet", action="store_true", help="no progress or info lines")
        p.set_defaults(func=func)


def _config(args: argparse.Namespace) -> tuple[PluginHost, PipelineConfig]:
    from graphflow.config import load_config
    from graphflow.experiments.seeds import parse_seeds
    from graphflow.manager import create_host

    text = getattr(args, "seeds", None)  # partition and launch take no --seeds
    seeds = parse_seeds(text) if text is not None else None
    host = create_host()
    config = load_config(args.pipeline, host.registry, overrides=args.overrides,
                         device=args.device, out_dir=args.out_dir, seeds=seeds)
    return host, config


def cmd_validate(args: argparse.Namespace) -> int:
    from graphflow.capabilities import check_pipeline
    from graphflow.runtime.device import resolve_device
    from graphflow.runner import default_out_dir

    _, config = _config(args)
    check_pipeline(config, nproc=args.nproc)  # run-level features each task refuses
    resolve_device(config.settings.device)
    specs = [config.load, *config.transforms]
    for train in config.train:
        specs += [s for s in (train.sample, train.model) if s is not None] + [train.task]
    specs += list(config.exports) + list(config.tracks)
    if config.explain is not None:
        specs.append(config.explain.method)
    for spec in specs:
        spec.build().check()
    chain = " -> ".join(f"{s.section}:{s.type}" for s in specs)
    print(f'ok: pipeline "{config.settings.name}" ({config.source})\n  {chain}\n'
          f"  out_dir: {default_out_dir(config)}")
    if config.settings.seeds:
        seeds = ", ".join(map(str, config.settings.seeds))
        print(f"  seeds: {seeds} (one run each, in out_dir/seed-S/)")
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from graphflow.capabilities import check_pipeline
    from graphflow.runtime.device import resolve_device
    from graphflow.distributed.nproc import run_nproc
    from graphflow.distributed.world import World, check_data_parallel
    from graphflow.runner import run_pipeline
    from graphflow.runtime.signals import handle_signals

    host, config = _config(args)
    if config.settings.seeds:
        return _run_seeds(args, host, config)
    # what a task cannot offer stops here, before any data loads or worker starts
    check_pipeline(config, nproc=max(args.nproc, int(os.environ.get("WORLD_SIZE", "1"))),
                   resume=args.resume)
    device = resolve_device(config.settings.device)
    world = World.from_env(device)  # set by torchrun / --nproc in each worker
    if args.nproc != 1:
        if world.distributed:
            raise ConfigError(f"--nproc {args.nproc} inside a worker of torchrun: the launcher "
                              f"already started {world.size} processes; drop --nproc")
        return run_nproc(args, config)  # torch's launcher forwards signals to the workers
    check_data_parallel(config, world.size)
    # SIGTERM / SIGHUP / SIGINT: stop at a safe point, record why (each worker does the same)
    with handle_signals(), world.group(world.place(device)):
        result = run_pipeline(config, host, resume=args.resume, quiet=args.quiet, world=world)
    if not world.is_main:
        return 0
    rec = result.record
    print(f'graphflow: ran "{rec["name"]}" in {rec["seconds"]:.1f}s on {rec["device"]}')
    peak = rec.get("memory") or {}
    if "peak_rss_mb" in peak:
        shown = f"{peak['peak_rss_mb']:.0f} MB resident ({peak['peak_rss_stage']})"
        if "peak_cuda_mb" in peak:
            shown += f", {peak['peak_cuda_mb']:.0f} MB CUDA ({peak['peak_cuda_stage']})"
        print(f"  peak memory: {shown}")
    if rec["metrics"]:
        shown = "  ".join(f"{k}={format_metric(v)}" for k, v in rec["metrics"].items())
        print(f"  metrics: {shown}")
    print("  wrote:")
    for out in rec["outputs"]:
        print(f"    {out['path']}  ({out['what']})")
    return 0


def _run_seeds(args: argparse.Namespace, host: PluginHost, config: PipelineConfig) -> int:
    """``pipeline.seeds``: one run per seed, then each metric's mean ± std."""
    from graphflow.capabilities import check_pipeline
    from graphflow.experiments.seeds import SUMMARY, format_summary, run_seeds
    from graphflow.runner import default_out_dir
    from graphflow.runtime.signals import handle_signals

    for flag, given in (("--nproc", args.nproc != 1), ("--resume", args.resume),
                        ("torchrun", int(os.environ.get("WORLD_SIZE", "1")) > 1)):
        if given:
            raise ConfigError(f"{config.source}: pipeline.seeds runs its seeds one after the "
                              f"other in one process, not with {flag}; run each seed with "
                              f"--set pipeline.seed=S instead")
    check_pipeline(config)  # what a task cannot offer stops here, before the first seed
    with handle_signals():
        summary = run_seeds(config, host, quiet=args.quiet)
    seeds = summary["seeds"]
    print(f'graphflow: ran "{summary["name"]}" with {len(seeds)} seeds '
          f'({", ".join(map(str, seeds))}) in {summary["seconds"]:.1f}s')
    for line in format_summary(summary["metrics"]):
        print(f"  {line}")
    root = default_out_dir(config)
    print(f"  wrote:\n    {root / SUMMARY}  (per-seed metrics, mean and std)\n"
          f"    {root}/seed-S/  (each seed's run)")
    return 0


def format_metric(value: float | int) -> str:
    """A metric for the run summary: whole counts in full (169300, not 1.693e+05), other
    numbers to 4 significant digits."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return f"{value:.4g}"
