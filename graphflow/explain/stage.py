"""The ``[explain]`` stage: explain the run's trained model once it has trained.

::

    [explain]
    nodes = "explain_nodes.txt"   # node models; graphs = FILE for graph models,
                                  # pairs = FILE for link models (original ids)
    method = "gnnexplainer"       # gnnexplainer (default), pgexplainer, saliency, ig, a plugin's
    top_k = 6                     # edges per target in the top-k subgraph
    epochs = 50                   # any other key: an option of the method

It runs after the ``[train]`` stages and the ``[[export]]`` sections, on the bundle the run
wrote (``OUT_DIR/model/``; ``stage = "train.N"`` picks another stage's) and the graph the run
trained on, through the same function as ``graphflow explain``
(:func:`graphflow.explain.run.explain_to_folder`), and writes the same files into
``OUT_DIR/explain/`` (``out`` to change it), with the explained stage's ``[train.cores]``
threads unless ``threads`` says otherwise. ``run.json`` records the stage (its seconds and
memory), the files among its outputs and the summary under ``reports["explain"]``.

What can be checked before anything runs is checked when the pipeline is read
(:func:`explain_spec`): one of ``nodes`` / ``graphs`` / ``pairs``, the one the trained kind
of model explains (:attr:`graphflow.components.Task.model_kind`), the file exists, the method
is registered and explains that kind, its options. Ids not in the graph are reported when
the stage runs, in one line naming the file and the id.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.errors import ConfigError, did_you_mean
from graphflow.options import option, parse_options

if TYPE_CHECKING:
    from graphflow.config import ComponentSpec, TrainSpec
    from graphflow.context import RunContext
    from graphflow.registry import Registry

SECTION = "explain"
FORMATS = ("parquet", "csv")


@dataclass
class ExplainStageOptions:
    nodes: Path | None = option(None, "Node models: the nodes to explain: Parquet, CSV "
                                      "(column id) or .txt (one id a line) of original ids.")
    graphs: Path | None = option(None, "Graph models: the graphs of the collection to explain "
                                       "(original graph ids, the same formats).")
    pairs: Path | None = option(None, "Link models: the node pairs whose scores to explain: "
                                      "Parquet / CSV (columns src, dst) or .txt (src dst "
                                      "lines) of original ids.")
    method: str = option("gnnexplainer", "A registered explainer: gnnexplainer, pgexplainer, "
                                         "saliency, ig, or a plugin's.")
    top_k: int = option(6, "Edges per target in the top-k subgraph.")
    format: str = option("parquet", "Table format of edges and features: parquet or csv.")
    stage: str | None = option(None, 'The training stage whose bundle to explain, e.g. '
                                     '"train.0" (default: the last that wrote one).')
    out: Path | None = option(None, "Output folder (default: OUT_DIR/explain).")
    threads: int | None = option(None, "torch intra-op threads while explaining (default: the "
                                       "explained stage's [train.cores] threads, else "
                                       "torch's).")

    def __post_init__(self) -> None:
        if self.threads is not None and self.threads < 1:
            raise ValueError(f"threads = {self.threads}: must be >= 1")
        if self.top_k < 1:
            raise ValueError(f"top_k = {self.top_k}: must be >= 1")
        if self.format not in FORMATS:
            raise ValueError(f'format = "{self.format}": choose "parquet" or "csv"')


@dataclass(frozen=True)
class ExplainSpec:
    """The validated ``[explain]`` table: the stage's own keys and the method's spec (its
    ``section`` is ``explain``, its ``type`` the method)."""

    options: ExplainStageOptions
    method: ComponentSpec
    which: str  # nodes | graphs | pairs
    kind: str | None  # the model kind known when the pipeline is read, else None
    threads: int | None = None  # threads, or the explained stage's [train.cores] threads

    @property
    def path(self) -> Path:
        return getattr(self.options, self.which)

    def resolved(self) -> dict[str, Any]:
        """As ``run.json`` records it: the stage's keys and the method's options."""
        stage = {k: str(v) if isinstance(v, Path) else v
                 for k, v in dataclasses.asdict(self.options).items() if v is not None}
        method = self.method.resolved()
        method.pop("type")
        if self.threads is not None:
            stage["threads"] = self.threads
        return {**stage, **method}


def explain_spec(table: Any, registry: Registry, src: str, base: Path,
                 train: list[TrainSpec]) -> ExplainSpec:
    """Validate the ``[explain]`` table of pipeline ``src`` (paths relative to ``base``)
    against the ``[train]`` stages ``train``; every refusal is one line naming the section
    and the fix."""
    from graphflow.config import ComponentSpec
    from graphflow.explain.run import check_method, check_targets

    where = f"{src}: [{SECTION}]"
    if not isinstance(table, dict):
        raise ConfigError(f'{where} must be a table, e.g. [{SECTION}] nodes = "nodes.txt"')
    own = [f.name for f in dataclasses.fields(ExplainStageOptions)]
    options = parse_options(ExplainStageOptions, {k: v for k, v in table.items() if k in own},
                            section=SECTION, component=SECTION, source=src, base_dir=base)
    given = [w for w in ("nodes", "graphs", "pairs") if getattr(options, w) is not None]
    if len(given) != 1:
        said = " and ".join(f"{w} = FILE" for w in given) or "none of them"
        raise ConfigError(f"{where} names the targets with one of nodes = FILE (node models), "
                          f"pairs = FILE (link models), graphs = FILE (graph models); got "
                          f"{said}")
    which = given[0]
    path = getattr(options, which)
    if not path.is_file():
        raise ConfigError(f"{where} {which} = {path}: no such file; give the file of ids to "
                          f"explain (relative paths resolve against the pipeline's folder)")
    stage = _explained_stage(train, options.stage, where)
    kind = getattr(stage.task.info.cls, "model_kind", None)
    subject = f"the model of [{stage.task.section}] {stage.task.type}"
    if kind is not None:
        try:
            check_targets(kind, which, subject, spell=lambda w: f"{w} = FILE")
        except ConfigError as exc:
            raise ConfigError(f"{where} {exc}") from None
    info = registry.get("explainer", options.method, where=f"{src}: {SECTION}.method")
    encoder = getattr(getattr(stage.model, "options", None), "input_encoder", "none")
    if getattr(info.cls, "feature_gradients", False) and encoder != "none":
        raise ConfigError(f'{where} method = "{options.method}": the model embeds its input '
                          f'features as categories (input_encoder = "{encoder}"), which have '
                          f"no gradient; use gnnexplainer or pgexplainer (edge masks only)")
    if kind is not None:
        check_method(registry, options.method, kind,
                     spelled=f'{where} method = "{options.method}"')
    values = {k: v for k, v in table.items() if k not in own}
    fields = [f.name for f in dataclasses.fields(info.cls.Options)]
    for key in values:
        if key not in fields:
            raise ConfigError(
                f"{src}: {SECTION}.{key}: unknown key{did_you_mean(key, [*own, *fields])}; "
                f"[{SECTION}] takes {', '.join(own)} and the options of "
                f"{options.method!r}: {', '.join(fields) or '(none)'}")
    method_options = parse_options(info.cls.Options, values, section=SECTION,
                                   component=options.method, source=src, base_dir=base)
    spec = ComponentSpec(section=SECTION, kind="explainer", type=options.method,
                         options=method_options, info=info, given=frozenset(values))
    threads = options.threads if options.threads is not None else stage.cores.threads
    return ExplainSpec(options=options, method=spec, which=which, kind=kind, threads=threads)


def _explained_stage(train: list[TrainSpec], stage: str | None, where: str) -> TrainSpec:
    """The ``[train]`` stage whose model ``[explain]`` explains: ``stage``, else the last."""
    if not train:
        raise ConfigError(f"{where} explains the model a [train] stage trains, and the "
                          f"pipeline has none; add [train], or explain a finished run with "
                          f"graphflow explain RUN_DIR")
    if stage is None:
        return train[-1]
    found = [t for t in train if t.task.section == stage]
    if not found:
        sections = ", ".join(t.task.section for t in train)
        raise ConfigError(f'{where} stage = "{stage}": no such training stage; stages: '
                          f"{sections}")
    return found[0]


def run_explain_stage(ctx: RunContext, spec: ExplainSpec, explainer: Any) -> None:
    """The stage: explain the run's bundle on the graph it trained on and record the files
    and the summary (:func:`graphflow.explain.run.explain_to_folder`)."""
    import torch

    from graphflow.bundle import load_bundle
    from graphflow.explain.run import check_method, check_targets, explain_to_folder

    o = spec.options
    bundle = load_bundle(ctx.out_dir, stage=o.stage, host=ctx.host, warn=ctx.info)
    if spec.kind is None:  # a stage whose kind shows only now (predict, sparsify, a plugin's)
        check_targets(bundle.kind, spec.which, f"the bundle in {bundle.path}",
                      spell=lambda w: f"{w} = FILE")
        check_method(ctx.host.registry, o.method, bundle.kind,
                     spelled=f'method = "{o.method}"')
    out = o.out or ctx.out_dir / "explain"
    before = torch.get_num_threads()
    if spec.threads is not None:  # small unions: as many threads as the stage trained with
        torch.set_num_threads(spec.threads)
    try:
        summary = explain_to_folder(out, bundle, ctx.graph(), explainer, spec.which,
                                    spec.path, top_k=o.top_k, fmt=o.format)
    finally:
        torch.set_num_threads(before)
    for path in summary["files"]:
        ctx.add_output(Path(path), "explanation")
    ctx.add_output(out / "explain.json", "explanation summary")
    ctx.reports[SECTION] = {k: v for k, v in summary.items() if k != "files"}
    ctx.info(f"[{SECTION}] {o.method}: {summary['targets']} {summary['level']} targets, "
             f"fidelity+ {summary['fidelity_plus']:.4g}, fidelity- "
             f"{summary['fidelity_minus']:.4g}")
