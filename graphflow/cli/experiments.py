"""``graphflow runs`` (past runs side by side), ``graphflow sweep`` (an Optuna study) and
``graphflow report`` (the plots of a run or a sweep, as one HTML file)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "list runs (their run.json) with the settings that differ and their metrics"
    p = sub.add_parser("runs", parents=[common], help=help_, description=help_)
    p.add_argument("dir", nargs="?", type=Path, default=Path("runs"),
                   help="folder of runs, searched below (default: runs/)")
    p.add_argument("--compare", nargs=2, metavar=("A", "B"),
                   help="two runs side by side: run folders, or their paths under DIR")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_runs)
    help_ = "search a pipeline's options with Optuna, as its [sweep] table says"
    s = sub.add_parser("sweep", parents=[common], help=help_, description=help_)
    s.add_argument("pipeline", type=Path, help="pipeline TOML file with a [sweep] table")
    s.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE",
                   help="override a value of the pipeline or of [sweep] (sweep.trials=5)")
    s.add_argument("--out-dir", type=Path,
                   help="the sweep's folder (default runs/<name>-sweep); the same folder "
                        "resumes the sweep")
    # a worker process of a sweep with jobs > 1 (graphflow.experiments.parallel starts it)
    s.add_argument("--worker", type=int, help=argparse.SUPPRESS)
    s.set_defaults(func=cmd_sweep)
    help_ = "write one self-contained HTML file of a run's or a sweep's plots"
    r = sub.add_parser("report", parents=[common], help=help_, description=help_)
    r.add_argument("dir", type=Path, metavar="RUN_OR_SWEEP_DIR",
                   help="a run's folder (run.json) or a sweep's folder (summary.json, sweep.db)")
    r.add_argument("--out", type=Path, metavar="FILE",
                   help="the HTML file (default: DIR/report.html)")
    r.set_defaults(func=cmd_report)


def cmd_runs(args: argparse.Namespace) -> int:
    from graphflow.experiments import runs

    if args.compare:
        a, b = (runs.read_run(_locate(Path(x), args.dir)) for x in args.compare)
        data = runs.compare(a, b)
        print(json.dumps(data, indent=2, default=str) if args.json else runs.render_compare(data))
        return 0
    data = runs.table(runs.find_runs(args.dir), args.dir)
    print(json.dumps(data, indent=2, default=str) if args.json else runs.render_table(data))
    return 0


def _locate(path: Path, root: Path) -> Path:
    """A run given as a folder, or as its path under the runs folder."""
    return path if path.exists() or not (root / path).exists() else root / path


def cmd_sweep(args: argparse.Namespace) -> int:
    from graphflow.experiments.sweep import run_sweep
    from graphflow.manager import create_host
    from graphflow.runtime.signals import handle_signals

    host = create_host()
    with handle_signals():  # SIGTERM: the running trial stops at a safe point, runs again
        run_sweep(args.pipeline, host, out_dir=args.out_dir, overrides=args.overrides,
                  worker=args.worker, echo=_echo)
    return 0


def _echo(line: str) -> None:
    print(line, flush=True)  # beside the workers' lines, in order


def cmd_report(args: argparse.Namespace) -> int:
    from graphflow.experiments.report import write_report

    path, charts = write_report(args.dir, args.out)
    size = path.stat().st_size / 2**20
    print(f"wrote: {path} ({charts} charts, {size:.1f} MiB, opens without network)")
    return 0
