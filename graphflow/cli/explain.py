"""``graphflow explain RUN_DIR --data PIPELINE.toml --nodes FILE`` (``--graphs FILE`` for a
graph model, ``--pairs FILE`` for a link model): why the model predicted.

The data pipeline's ``[pipeline]``, ``[load]`` and ``[[transform]]`` sections give the graph,
run by ``graphflow predict``'s own loader (:func:`graphflow.cli.predict.run_predict`: a
``predict`` stage on the bundle, its fitted transform state, its checks, ``run.json``); the
method then explains the bundle's outputs at the named nodes, graphs or pairs (original
ids) and writes importances with original ids (:func:`graphflow.explain.run.explain_to_folder`,
which the ``[explain]`` stage of a run runs too; docs/explain.md).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from graphflow.cli.predict import predict_args, run_predict



def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    help_ = "explain a trained model's predictions: important edges and features"
    p = sub.add_parser("explain", parents=[common], help=help_, description=help_)
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR",
                   help="a training run's out_dir (its model/ bundle), or a bundle folder")
    p.add_argument("--data", type=Path, required=True, metavar="PIPELINE",
                   help="pipeline TOML whose [load] and [[transform]] sections give the graph")
    which = p.add_mutually_exclusive_group(required=True)
    which.add_argument("--nodes", type=Path, metavar="FILE",
                       help="node models: nodes to explain: Parquet / CSV (column id) / .txt "
                            "of original ids")
    which.add_argument("--graphs", type=Path, metavar="FILE",
                       help="graph models: graphs of the collection to explain: Parquet / CSV "
                            "(column id) / .txt of original graph ids")
    which.add_argument("--pairs", type=Path, metavar="FILE",
                       help="link models: node pairs whose scores to explain: Parquet / CSV "
                            "(columns src, dst) / .txt (src dst lines) of original ids")
    p.add_argument("--method", default="gnnexplainer",
                   help="a registered explainer: gnnexplainer (default), pgexplainer, "
                        "saliency, ig (integrated gradients); graphflow plugins lists them")
    p.add_argument("--out", type=Path, metavar="DIR",
                   help="output folder (default: RUN_DIR/explain)")
    p.add_argument("--format", choices=("parquet", "csv"), default="parquet",
                   help="table format (default parquet)")
    p.add_argument("--top-k", type=int, default=6, metavar="K",
                   help="edges per target in the top-k subgraph (default 6)")
    p.add_argument("--epochs", type=int, help="gnnexplainer: epochs (default 100)")
    p.add_argument("--lr", type=float, help="gnnexplainer: Adam lr (default 0.01)")
    p.add_argument("--steps", type=int, help="ig: integration steps (default 50)")
    p.add_argument("--threads", type=int, metavar="N",
                   help="torch intra-op threads while explaining (default: torch's; small "
                        "unions often run best on 1)")
    p.add_argument("--option", dest="method_options", action="append", default=[],
                   metavar="KEY=VALUE", help="an option of the method (graphflow describe "
                                             "NAME lists them)")
    p.add_argument("--stage", metavar="SECTION", help='the bundle of this stage, e.g. "train.0"')
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE", help="override a value of the data pipeline")
    p.add_argument("--quiet", action="store_true", help="no progress or info lines")
    p.set_defaults(func=cmd_explain)


def cmd_explain(args: argparse.Namespace) -> int:
    from graphflow.bundle import load_bundle
    from graphflow.bundle.layout import find_bundle
    from graphflow.bundle.load import read_meta
    from graphflow.errors import ConfigError
    from graphflow.explain.run import check_method, check_targets, explain_to_folder
    from graphflow.manager import create_host
    from graphflow.options import parse_options

    if args.top_k < 1:
        raise ConfigError(f"--top-k {args.top_k}: must be >= 1")
    if args.threads is not None and args.threads < 1:
        raise ConfigError(f"--threads {args.threads}: must be >= 1")
    folder = find_bundle(args.run_dir, args.stage)
    kind = read_meta(folder)["kind"]
    which, path = next((w, p) for w, p in (("nodes", args.nodes), ("graphs", args.graphs),
                                           ("pairs", args.pairs)) if p is not None)
    check_targets(kind, which, f"the bundle in {args.run_dir}")
    host = create_host()
    cls = check_method(host.registry, args.method, kind)
    values = {k: v for k, v in (("epochs", args.epochs), ("lr", args.lr),
                                ("steps", args.steps)) if v is not None}
    for assignment in args.method_options:
        key, sep, value = assignment.partition("=")
        if not sep:
            raise ConfigError(f"--option {assignment}: write KEY=VALUE")
        values[key.strip()] = _value(value.strip())
    explainer = cls(parse_options(cls.Options, values, section="method",
                                  component=args.method, source="graphflow explain",
                                  base_dir=Path.cwd()))
    out = (args.out or args.run_dir / "explain").resolve()
    ns = predict_args(args.run_dir, args.data, overrides=args.overrides, out=out / "data",
                      stage=args.stage, device="cpu", quiet=True)
    data = run_predict(ns, kind, host, export=False).ctx.data
    bundle = load_bundle(args.run_dir, stage=args.stage, host=host)
    import torch

    before = torch.get_num_threads()
    if args.threads is not None:
        torch.set_num_threads(args.threads)
    try:
        summary = explain_to_folder(out, bundle, data, explainer, which, path,
                                    top_k=args.top_k, fmt=args.format)
    finally:
        torch.set_num_threads(before)
    level = {"link": "pair"}.get(summary["level"], summary["level"])
    print(f"graphflow: explained {summary['targets']} {level}s with {args.method} "
          f"({folder})")
    print(f"  fidelity+={summary['fidelity_plus']:.4g}  fidelity-="
          f"{summary['fidelity_minus']:.4g}  characterization="
          f"{summary['characterization']:.4g}  (top {args.top_k} edges)")
    print("  wrote:")
    for path in summary["files"] + [str(out / "explain.json")]:
        print(f"    {path}")
    return 0


def _value(text: str) -> object:
    """A TOML value (``3``, ``0.1``, ``true``, ``"x"``), or the text itself."""
    import tomllib

    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text
