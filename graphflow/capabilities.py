"""Which run-level features each task supports, checked once before anything runs.

A run-level feature is something a pipeline or a command asks of any task: a third-party
``[model]``, a ``[sample]`` section, ``--nproc``, mixed precision, a model bundle and what
reads it (``graphflow predict``, ``graphflow serve``), ONNX / TorchScript exports, embeddings
and predictions exports, ``[[track]]`` trackers, ``graphflow sweep``, ``--resume``, SIGTERM
and the non-finite guard (:data:`FEATURES`).

A task declares what it cannot do (:attr:`graphflow.components.Task.refusals`, a tuple of
:class:`Refusal`, each with its reason and what to do instead; ``--nproc`` follows
``supports_distributed``), and :func:`check_pipeline` refuses such a combination when the
pipeline is read: by ``graphflow validate``, and by ``graphflow run`` / ``graphflow sweep``
before any data loads, worker starts or epoch runs, in one line::

    [train] link_prediction cannot run data-parallel (--nproc): ...; run it without --nproc

An exporter option value that a kind of model cannot be exported with is declared here too
(:data:`EXPORT_REFUSALS`, e.g. ``inputs = "block"`` for a typed model) and refused by the same
check.

:data:`ROWS` and :func:`table` turn the first-party tasks' declarations into the capability
table of ``docs/capabilities.md`` (``python -m graphflow.capabilities --markdown`` prints
it); ``tests/test_composition.py`` checks every cell of the same table, and that the page
equals what this module generates.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from graphflow.errors import ConfigError

if TYPE_CHECKING:
    from graphflow.config import ComponentSpec, PipelineConfig, TrainSpec


@dataclass(frozen=True)
class Feature:
    """A run-level feature: its column in the table, how a refusal names it, how to ask."""

    column: str
    verb: str  # "[train] X cannot <verb>: ..."
    asked: str  # how a pipeline or command asks for it (docs)


FEATURES: dict[str, Feature] = {
    "model": Feature("3rd-party model", "train a third-party [model]",
                     "a `[model]` type that an installed plugin registers"),
    "sampled": Feature("sampled", "train on sampled minibatches ([sample])",
                       "a `[sample]` section"),
    "nproc": Feature("--nproc", "run data-parallel (--nproc)", "`graphflow run --nproc 2`"),
    "amp": Feature("AMP", "train in mixed precision", '`precision = "bf16-mixed"` '
                   "(`amp = true` where the task has no `precision`)"),
    "nan_guard": Feature("NaN guard", "stop on a non-finite loss",
                         "always on: a diverging run stops in one line, exporting nothing"),
    "bundle": Feature("bundle", "write a model bundle", "always: `OUT_DIR/model/`"),
    "predict": Feature("predict", "be applied by graphflow predict",
                       "`graphflow predict OUT_DIR`"),
    "serve": Feature("serve", "be served by graphflow serve", "`graphflow serve OUT_DIR`"),
    "onnx": Feature("ONNX", "export its model to ONNX", '`[[export]] type = "onnx"`'),
    "torchscript": Feature("TorchScript", "export its model to TorchScript",
                           '`[[export]] type = "torchscript"`'),
    "embeddings": Feature("embeddings", "export embeddings",
                          '`[[export]] what = "embeddings"`'),
    "predictions": Feature("predictions", "export predictions",
                           '`[[export]] what = "predictions"`'),
    "tracker": Feature("tracker", "report to a [[track]] tracker",
                       '`[[track]] type = "tensorboard"` (or `mlflow`)'),
    "sweep": Feature("sweep", "run under graphflow sweep", "`graphflow sweep pipeline.toml`"),
    "resume": Feature("resume", "resume (graphflow run --resume)",
                      "`graphflow run --resume` after a stopped run"),
    "sigterm": Feature("SIGTERM", "stop on SIGTERM at a safe point",
                       "`kill -TERM`: exit 143, `run.json` says so, `--resume` finishes"),
}
"""Every run-level feature, in the table's column order."""

Condition = Literal["typed", "untyped", "sampled", "full"]


@dataclass(frozen=True)
class Refusal:
    """A run-level feature a task cannot offer, why, and what to do instead.

    :param feature: a key of :data:`FEATURES`.
    :param reason: why, in a few words (no trailing period).
    :param alternative: what to do instead (an imperative; no trailing period).
    :param when: the conditions under which it holds (``typed``: the stage's ``[model]`` is a
        typed one, ``untyped``, ``sampled``: the stage has a ``[sample]``, ``full``); empty:
        always.
    """

    feature: str
    reason: str
    alternative: str
    when: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        if self.feature not in FEATURES:
            raise ValueError(f"unknown run-level feature {self.feature!r}; features: "
                             f"{', '.join(FEATURES)}")

    def applies(self, *, typed: bool, sampled: bool) -> bool:
        holds = {"typed": typed, "untyped": not typed, "sampled": sampled, "full": not sampled}
        return all(holds[c] for c in self.when)

    def line(self, section: str, task: str) -> str:
        """The one-line refusal: ``[section] task cannot <feature>: reason; alternative``."""
        return f"[{section}] {task} cannot {FEATURES[self.feature].verb}: {self.reason}; " \
               f"{self.alternative}"


def refuses(*features: str, reason: str, alternative: str,
            when: Iterable[str] = ()) -> tuple[Refusal, ...]:
    """The same refusal for several features (e.g. ``bundle``, ``predict``, ``serve``)."""
    return tuple(Refusal(f, reason, alternative, frozenset(when)) for f in features)


@dataclass(frozen=True)
class ExportRefusal:
    """An exporter option value that the model of a stage cannot be exported with.

    :param exporters: the ``[[export]]`` types it concerns.
    :param option: the exporter's option; :param value: its refused value.
    :param reason: why, in a few words; :param alternative: what to do instead.
    :param when: the conditions on the stage whose model is exported (as :class:`Refusal`'s).
    """

    exporters: tuple[str, ...]
    option: str
    value: Any
    reason: str
    alternative: str
    when: frozenset[str] = frozenset()

    def applies(self, spec: ComponentSpec, *, typed: bool, sampled: bool) -> bool:
        holds = {"typed": typed, "untyped": not typed, "sampled": sampled, "full": not sampled}
        return (spec.type in self.exporters
                and getattr(spec.options, self.option, None) == self.value
                and all(holds[c] for c in self.when))

    def line(self, section: str, exporter: str, stage: str) -> str:
        """``[export] onnx cannot export the typed model of [train] with inputs = "block":
        reason; alternative``."""
        kind = "typed " if "typed" in self.when else ""
        return f'[{section}] {exporter} cannot export the {kind}model of [{stage}] with ' \
               f'{self.option} = "{self.value}": {self.reason}; {self.alternative}'


EXPORT_REFUSALS: tuple[ExportRefusal, ...] = (
    ExportRefusal(("onnx", "torchscript"), "inputs", "block",
                  reason="a typed model takes the whole typed graph, not sampled blocks",
                  alternative='export it with inputs = "full"', when=frozenset({"typed"})),
)
"""Exporter options refused for the model they would export (checked by
:func:`check_pipeline`; ``graphflow.portable`` refuses the same when called directly)."""


NOT_DATA_PARALLEL = ("it has no data-parallel training yet",
                     "run it without --nproc (or with --nproc 1)")


def refusal(task_cls: type, feature: str, *, typed: bool = False,
            sampled: bool = False) -> Refusal | None:
    """The refusal of ``feature`` that task class ``task_cls`` declares for a stage that is
    ``typed`` / ``sampled``, or None when it offers the feature. ``--nproc`` is refused
    unless the class sets ``supports_distributed``."""
    if feature not in FEATURES:
        raise ValueError(f"unknown run-level feature {feature!r}")
    if feature == "nproc" and not getattr(task_cls, "supports_distributed", False):
        return Refusal("nproc", *NOT_DATA_PARALLEL)
    for r in getattr(task_cls, "refusals", ()):
        if r.feature == feature and r.applies(typed=typed, sampled=sampled):
            return r
    return None


# --- the one check --------------------------------------------------------------------------

PRECISION_OPTIONS = ("precision", "amp")
"""Task options that ask for mixed precision (``precision`` other than fp32 / float32 /
auto, ``amp = true``)."""
PORTABLE_EXPORTERS = {"onnx": "onnx", "torchscript": "torchscript"}
"""Exporter types that ask for a portable form of the model (feature of the same name)."""


def stage_is_typed(train: TrainSpec) -> bool:
    """Whether the stage trains a typed model (its ``[model]`` class sets ``typed``)."""
    return train.model is not None and bool(getattr(train.model.info.cls, "typed", False))


def asks_precision(options: Any) -> bool:
    """Whether a task's options ask for mixed precision."""
    precision = getattr(options, "precision", None)
    if isinstance(precision, str) and precision not in ("fp32", "float32", "auto"):
        return True
    return getattr(options, "amp", False) is True


def stage_features(train: TrainSpec, *, nproc: int = 1, resume: bool = False,
                   sweep: bool = False, tracked: bool = False) -> list[str]:
    """The run-level features a stage is asked for by its own sections and the command."""
    asked = []
    if train.sample is not None:
        asked.append("sampled")
    if nproc > 1:
        asked.append("nproc")
    if asks_precision(train.task.options):
        asked.append("amp")
    if tracked:
        asked.append("tracker")
    if sweep:
        asked.append("sweep")
    if resume:
        asked.append("resume")
    return asked


def export_feature(spec: ComponentSpec) -> str | None:
    """The run-level feature an ``[[export]]`` asks of the stages before it, if any."""
    if spec.type in PORTABLE_EXPORTERS:
        return PORTABLE_EXPORTERS[spec.type]
    what = getattr(spec.options, "what", None)
    return what if what in ("embeddings", "predictions") else None


def check_pipeline(config: PipelineConfig, *, nproc: int = 1, resume: bool = False,
                   sweep: bool = False) -> None:
    """Refuse, in one line, a run-level feature a stage of ``config`` cannot offer.

    Each ``[train]`` stage is checked for what it is asked (:func:`stage_features`); an
    ``[[export]]`` of embeddings, predictions or a portable model is refused when no stage
    offers it (the message names the last stage), and an exporter option of
    :data:`EXPORT_REFUSALS` when it holds for the last stage that offers it. Called by
    ``graphflow validate``, and by ``graphflow run`` and ``graphflow sweep`` before any data
    loads.

    :param nproc: the number of data-parallel processes (``--nproc``, or torchrun's world).
    :param resume: ``graphflow run --resume``.
    :param sweep: the pipeline runs as trials of ``graphflow sweep``.
    :raises ConfigError: the first refused combination.
    """
    for train in config.train:
        cls, typed = train.task.info.cls, stage_is_typed(train)
        sampled = train.sample is not None
        for feature in stage_features(train, nproc=nproc, resume=resume, sweep=sweep,
                                      tracked=bool(config.tracks)):
            r = refusal(cls, feature, typed=typed, sampled=sampled)
            if r is not None:
                raise ConfigError(r.line(train.task.section, train.task.type))
    if not config.train:
        return
    for spec in config.exports:
        feature = export_feature(spec)
        if feature is None:
            continue
        found = [(t, refusal(t.task.info.cls, feature, typed=stage_is_typed(t),
                             sampled=t.sample is not None)) for t in config.train]
        if all(r is not None for _, r in found):
            train, r = found[-1]
            raise ConfigError(f"{r.line(train.task.section, train.task.type)} "
                              f"(asked by [{spec.section}] {spec.type})")
        exported = [t for t, r in found if r is None][-1]  # the model the export writes
        for e in EXPORT_REFUSALS:
            if e.applies(spec, typed=stage_is_typed(exported),
                         sampled=exported.sample is not None):
                raise ConfigError(e.line(spec.section, spec.type, exported.task.section))


def check_options(task_cls: type, table: dict[str, Any], section: str, task: str, *,
                  typed: bool, sampled: bool) -> None:
    """A ``[train]`` table that asks a task for mixed precision through an option the task
    does not have gets the task's refusal line rather than "unknown key"."""
    for key in PRECISION_OPTIONS:
        if key in table and key not in getattr(task_cls.Options, "__dataclass_fields__", {}):
            r = refusal(task_cls, "amp", typed=typed, sampled=sampled)
            if r is not None:
                raise ConfigError(r.line(section, task))


# --- the table ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Row:
    """One row of the capability table: a task in one mode."""

    key: str  # the id of the row in tests
    task: str
    label: str
    typed: bool = False
    sampled: bool = False


ROWS: tuple[Row, ...] = (
    Row("node", "node_classification", "node_classification"),
    Row("node_sampled", "node_classification", "node_classification, sampled", sampled=True),
    Row("node_typed", "node_classification", "node_classification, typed graph (rgcn)",
        typed=True),
    Row("link", "link_prediction", "link_prediction"),
    Row("link_typed", "link_prediction", "link_prediction, typed graph (rgcn)", typed=True),
    Row("graph_cls", "graph_classification", "graph_classification"),
    Row("graph_reg", "graph_regression", "graph_regression"),
    Row("skipgram", "skipgram", "skipgram", sampled=True),
    Row("kg", "kg_completion", "kg_completion"),
)
"""The first-party tasks and modes the table covers (``tests/test_composition.py``)."""

NOT_APPLICABLE: dict[tuple[str, str], str] = {
    ("skipgram", "model"): "skip-gram learns an embedding table, it has no [model]",
    ("skipgram", "bundle"): "the embeddings are the result: there is no model to apply",
    ("skipgram", "predict"): "the embeddings are the result: there is no model to apply",
    ("skipgram", "serve"): "the embeddings are the result: there is no model to apply",
    ("kg", "model"): "its [model] is a knowledge-graph embedding (transe, distmult, complex, "
                     "rotate), not a message-passing model a plugin could swap in",
    ("node_sampled", "sampled"): "this row is the sampled mode",
    ("skipgram", "sampled"): "skip-gram always trains on the walks of its [sample]",
}
"""Cells where the feature has no meaning for the task (shown as a dash, with the reason)."""

PENDING: dict[tuple[str, str], str] = {}
"""Cells being built now: not refused (the work lands without touching the check), expected
to fail (``xfail`` in the composition test) and shown with the reason until they work."""

Status = Literal["yes", "no", "n/a", "pending"]


@dataclass(frozen=True)
class Cell:
    """One cell of the table: the expected outcome and, unless it works, why."""

    row: Row
    feature: str
    status: Status
    reason: str = ""
    refusal: Refusal | None = None

    @property
    def mark(self) -> str:
        return {"yes": "✓", "no": "✗", "n/a": "—", "pending": "✗"}[self.status]


def cell(row: Row, feature: str, registry: Any = None) -> Cell:
    """The expected outcome of ``feature`` for ``row``: a declared refusal, not applicable,
    being built, or working."""
    if (row.key, feature) in NOT_APPLICABLE:
        return Cell(row, feature, "n/a", NOT_APPLICABLE[row.key, feature])
    cls = task_class(row.task, registry)
    r = refusal(cls, feature, typed=row.typed, sampled=row.sampled)
    if r is not None:
        return Cell(row, feature, "no", f"{r.reason}; {r.alternative}", r)
    if (row.key, feature) in PENDING:
        return Cell(row, feature, "pending", PENDING[row.key, feature])
    return Cell(row, feature, "yes")


def table(registry: Any = None) -> list[list[Cell]]:
    """Every cell, row by row (:data:`ROWS` x :data:`FEATURES`)."""
    registry = registry if registry is not None else _registry()
    return [[cell(row, f, registry) for f in FEATURES] for row in ROWS]


def markdown(registry: Any = None) -> str:
    """``docs/capabilities.md``: the table and, under it, the reason of every cell that is
    not a plain ✓."""
    cells = table(registry)
    lines = [
        "# Capabilities: tasks × run-level features",
        "",
        "Generated by `python -m graphflow.capabilities --markdown > docs/capabilities.md` from "
        "the tasks' declarations (`graphflow/capabilities.py`); `tests/test_composition.py` "
        "checks every cell on tiny graphs and that this page is what the command prints "
        "(`pytest tests/test_composition.py`: CPU only, two-epoch runs of a hundred-odd "
        "nodes or 24 to 120 small graphs; the `--nproc` cells share three two-process launches).",
        "",
        "✓: works, and the composition test checks the output (predict reproduces the run's "
        "predictions, an ONNX export its logits...). ✗ with a number: refused when the "
        "pipeline is read (`graphflow validate`, and `graphflow run` before any data loads "
        "or worker starts), in the one line given below, or being built (said so below); "
        "a bundle, which no pipeline asks for, is refused by writing none (`graphflow "
        "predict` and `serve` then stop in one line). —: does not apply.",
        "",
        "| task | " + " | ".join(f.column for f in FEATURES.values()) + " |",
        "| --- | " + " | ".join("---" for _ in FEATURES) + " |",
    ]
    notes: list[str] = []
    for row_cells in cells:
        marks = []
        for c in row_cells:
            if c.status == "yes":
                marks.append(c.mark)
                continue
            notes.append(_note(c))
            marks.append(f"{c.mark} {len(notes)}")
        lines.append(f"| {row_cells[0].row.label} | " + " | ".join(marks) + " |")
    lines += ["", "## Why not", ""]
    lines += [f"{i}. {n}" for i, n in enumerate(notes, 1)]
    lines += ["", "## Exporter options", "",
              "Refused when the pipeline is read, for the model the export would write:", ""]
    lines += [f"- {' / '.join(f'`{x}`' for x in e.exporters)} with `{e.option} = "
              f"\"{e.value}\"`: `{e.line('export', e.exporters[0], 'train')}`"
              for e in EXPORT_REFUSALS]
    lines += ["", "## The features", "", "| feature | how it is asked for |", "| --- | --- |"]
    lines += [f"| {f.column} | {f.asked} |" for f in FEATURES.values()]
    lines += ["", "A third-party task declares its own refusals (`Task.refusals`, a tuple of "
              "`graphflow.capabilities.Refusal`; `--nproc` follows `supports_distributed`), "
              "and the same check refuses them for it (docs/architecture.md, \"Training "
              "spine\")."]
    return "\n".join(lines) + "\n"


def _note(c: Cell) -> str:
    where = f"{c.row.label} × {FEATURES[c.feature].column}"
    if c.status == "no":
        return f"{where}: refused: `{c.refusal.line('train', c.row.task)}`"
    if c.status == "pending":
        return f"{where}: being built: {c.reason}."
    return f"{where}: does not apply: {c.reason}."


def _registry() -> Any:
    from graphflow.manager import create_host

    return create_host(autoload=False).registry


def task_class(name: str, registry: Any = None) -> type:
    """The class of first-party task ``name`` (from ``registry``, else a fresh host's)."""
    registry = registry if registry is not None else _registry()
    return registry.get("task", name).cls


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m graphflow.capabilities",
        description="The capability table of the first-party tasks (docs/capabilities.md).")
    parser.add_argument("--markdown", action="store_true", help="print the docs page")
    args = parser.parse_args(argv)
    if args.markdown:
        sys.stdout.write(markdown())
        return 0
    for row_cells in table():
        print(f"{row_cells[0].row.label}: " + " ".join(f"{c.feature}={c.mark}"
                                                      for c in row_cells))
    return 0


if __name__ == "__main__":
    sys.exit(main())
