"""``graphflow predict RUN_DIR --data pipeline.toml``: apply a trained model to new data.

The data pipeline's ``[pipeline]``, ``[load]`` and ``[[transform]]`` sections describe the
new data (its other sections are ignored); the command runs them with a ``[train] type =
"predict"`` stage on the run's bundle and one ``[[export]]`` of the results, through the
same runner as ``graphflow run`` (one line per error, atomic files, ``run.json``).

A knowledge-graph model (a ``kg_completion`` bundle) needs no data pipeline: ``graphflow
predict RUN_DIR --queries FILE`` answers ``(head, relation, ?)`` / ``(?, relation, tail)``
queries from the bundle's names, embeddings and known triples (:func:`cmd_predict_queries`,
:mod:`graphflow.kge.bundle`).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

FORMATS = ("parquet", "csv", "npy", "pt")
KEPT = ("pipeline", "load", "transform")
"""The sections of the data pipeline that predict reads."""


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "apply a trained model (a run's bundle) to new data"
    p = sub.add_parser("predict", parents=[common], help=help_, description=help_)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                   help="a training run's out_dir (its model/ bundle), or a bundle folder")
    p.add_argument("--data", type=Path, metavar="PIPELINE",
                   help="pipeline TOML whose [load] and [[transform]] sections give the data "
                        "(required, except for a knowledge-graph model)")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="output folder (default: RUN_DIR/predict)")
    p.add_argument("--format", choices=FORMATS, default="parquet",
                   help="exporter of the results (default parquet)")
    p.add_argument("--what", choices=("predictions", "logits", "embeddings", "links"),
                   help="artifact to write (default: predictions; links with --pairs)")
    p.add_argument("--nodes", type=Path, metavar="FILE",
                   help="node models: only these nodes: Parquet / CSV (column id) / .txt of "
                        "original ids")
    p.add_argument("--graphs", type=Path, metavar="FILE",
                   help="graph models: only these graphs of the collection: Parquet / CSV "
                        "(column id) / .txt of original graph ids")
    p.add_argument("--pairs", type=Path, metavar="FILE",
                   help="link models: Parquet or CSV of src, dst original ids to score")
    p.add_argument("--queries", type=Path, metavar="FILE",
                   help="knowledge-graph models: (head, relation, ?) and (?, relation, tail) "
                        "queries of original names: .txt/.tsv lines head<TAB>relation<TAB>"
                        "tail, or CSV / Parquet columns head, relation, tail")
    p.add_argument("--top-k", type=int, default=10, metavar="K",
                   help="knowledge-graph models: answers per query (default 10)")
    p.add_argument("--stage", metavar="SECTION",
                   help='the bundle of this stage, e.g. "train.0" (default: the last stage '
                        "that produced a model, e.g. a sparsify stage's pruned model)")
    p.add_argument("--batch-size", type=int, metavar="N",
                   help="nodes per batch of layer-wise inference (default: as in training)")
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override a value of the data pipeline")
    p.add_argument("--device", help="auto|cpu|cuda|cuda:N (default: the data pipeline's)")
    p.add_argument("--quiet", action="store_true", help="no progress or info lines")
    p.set_defaults(func=cmd_predict)


def predict_config(args: argparse.Namespace, kind: str) -> dict[str, Any]:
    """The pipeline table predict runs: the data sections, the predict stage, one export."""
    from graphflow.config import apply_override, read_toml
    from graphflow.errors import ConfigError

    raw = read_toml(args.data)
    for assignment in args.overrides:
        apply_override(raw, assignment)
    if "load" not in raw:
        raise ConfigError(f"{args.data}: missing [load] section: predict reads the new data "
                          f"from the pipeline's [load] and [[transform]] sections")
    table: dict[str, Any] = {k: raw[k] for k in KEPT if k in raw}
    settings = dict(table.get("pipeline") or {})
    settings["out_dir"] = str((args.out or args.run_dir / "predict").resolve())
    if args.device:
        settings["device"] = args.device
    table["pipeline"] = settings
    stage: dict[str, Any] = {"type": "predict", "bundle": str(args.run_dir.resolve())}
    for key, value in (("stage", args.stage), ("batch_size", args.batch_size)):
        if value is not None:
            stage[key] = value
    for key, value in (("nodes", args.nodes), ("graphs", args.graphs), ("pairs", args.pairs)):
        if value is not None:
            stage[key] = str(value.resolve())
    table["train"] = stage
    what = args.what or ("links" if args.pairs is not None else
                         "embeddings" if kind == "link" else "predictions")
    if kind == "link" and what == "links" and args.pairs is None:
        raise ConfigError("a link model scores the pairs given with --pairs FILE (src, dst "
                          "columns of original ids); without them, use --what embeddings")
    if kind == "node" and what == "links":
        raise ConfigError(f"--what {what}: a node classification model writes predictions, "
                          f"logits or embeddings")
    table["export"] = [{"type": args.format, "what": what}]
    return table


def predict_args(run_dir: Path, data: Path, **values: Any) -> argparse.Namespace:
    """predict's arguments for ``RUN_DIR --data DATA``, every other option at its default
    but ``values``: what a command that loads data as predict does (``graphflow explain``)
    passes to :func:`run_predict`."""
    parser = argparse.ArgumentParser(prog="graphflow")
    add_commands(parser.add_subparsers(), argparse.ArgumentParser(add_help=False))
    args = parser.parse_args(["predict", str(run_dir), "--data", str(data)])
    for key, value in values.items():
        if not hasattr(args, key):
            raise TypeError(f"predict has no option {key!r}")
        setattr(args, key, value)
    return args


def run_predict(args: argparse.Namespace, kind: str, host: Any = None, *,
                export: bool = True) -> Any:
    """Run :func:`predict_config`'s pipeline (the data sections, their checks against the
    bundle, the predict stage) through the runner and return its result, whose
    ``ctx.data`` is the loaded graph; ``export=False`` writes no predictions."""
    from graphflow.config import validate_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline
    from graphflow.runtime.signals import handle_signals

    host = host or create_host()
    table = predict_config(args, kind)
    if not export:
        table["export"] = []
    config = validate_config(table, host.registry, source=args.data)
    with handle_signals():
        return run_pipeline(config, host, quiet=args.quiet)


def cmd_predict(args: argparse.Namespace) -> int:
    from graphflow.bundle.layout import find_bundle
    from graphflow.bundle.load import read_meta

    folder = find_bundle(args.run_dir, args.stage)  # default: the last stage's
    kind = read_meta(folder)["kind"]
    if kind == "kg" or args.queries is not None:
        return cmd_predict_queries(args, kind)
    if args.data is None:
        from graphflow.errors import ConfigError

        raise ConfigError(f"--data PIPELINE: the {kind} model of {args.run_dir} predicts on "
                          f"the graph a pipeline's [load] and [[transform]] sections give")
    if args.pairs is not None and kind != "link":
        from graphflow.errors import ConfigError

        raise ConfigError(f"--pairs: the bundle in {args.run_dir} is a {kind} model; pairs "
                          f"are scored by link prediction models")
    result = run_predict(args, kind)
    rec = result.record
    print(f"graphflow: predicted with {folder} in {rec['seconds']:.1f}s")
    if rec["metrics"]:
        print("  " + "  ".join(f"{k}={v:.4g}" for k, v in rec["metrics"].items()))
    print("  wrote:")
    for out in rec["outputs"]:
        print(f"    {out['path']}  ({out['what']})")
    return 0


def cmd_predict_queries(args: argparse.Namespace, kind: str) -> int:
    """``graphflow predict RUN_DIR --queries FILE``: a knowledge-graph model's top-k answers
    (:func:`graphflow.kge.bundle.predict_queries`)."""
    import time

    from graphflow.errors import ConfigError
    from graphflow.kge.bundle import predict_queries

    if kind != "kg":
        raise ConfigError(f"--queries: the bundle in {args.run_dir} is a {kind} model; "
                          f"queries are answered by a kg_completion model")
    if args.queries is None:
        raise ConfigError(f"{args.run_dir} holds a knowledge-graph model: give its queries "
                          f"with --queries FILE (head, relation, tail with ? in the place "
                          f"asked for)")
    unused = [flag for flag, value in (("--data", args.data), ("--nodes", args.nodes),
                                       ("--graphs", args.graphs), ("--pairs", args.pairs),
                                       ("--what", args.what), ("--set", args.overrides),
                                       ("--device", args.device))
              if value]
    if unused:
        raise ConfigError(f"{', '.join(unused)}: a knowledge-graph model answers --queries "
                          f"from its bundle alone; drop {' and '.join(unused)}")
    if args.top_k < 1:
        raise ConfigError(f"--top-k {args.top_k}: give at least 1")
    start = time.perf_counter()
    path, table, folder = predict_queries(
        args.run_dir, args.queries, args.out or args.run_dir / "predict", stage=args.stage,
        k=args.top_k, fmt=args.format, batch_size=args.batch_size or 256,
        warn=None if not args.quiet else (lambda line: None))
    queries = int(table["query"].nunique()) if len(table) else 0
    print(f"graphflow: answered {queries} queries with {folder} in "
          f"{time.perf_counter() - start:.1f}s")
    print("  wrote:")
    print(f"    {path}  (answers: top {args.top_k} per query)")
    return 0
