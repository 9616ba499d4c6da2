"""Base classes of the eight component kinds a plugin can register.

Each component class declares

* ``name``: the ``type = "..."`` users write in TOML,
* ``summary``: one line for ``graphflow plugins``,
* ``Options``: a dataclass schema (see :mod:`graphflow.options`); its instance is
  ``self.options``,
* a docstring, shown by ``graphflow describe``.

The host builds components from validated options only; components never see raw TOML.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal, get_args

import torch

from graphflow.capabilities import Refusal
from graphflow.errors import DataError
from graphflow.options import NoOptions

if TYPE_CHECKING:
    from graphflow.context import RunContext
    from graphflow.graph import GraphData

Kind = Literal["loader", "transform", "sampler", "model", "task", "exporter", "tracker",
               "explainer"]
KINDS: tuple[Kind, ...] = ("loader", "transform", "sampler", "model", "task", "exporter",
                           "tracker", "explainer")


class Component:
    """Common base: options handling and metadata."""

    kind: ClassVar[Kind]
    name: ClassVar[str]
    summary: ClassVar[str]
    Options: ClassVar[type] = NoOptions

    def __init__(self, options: Any = None):
        self.options = self.Options() if options is None else options

    def check(self) -> None:
        """Cheap checks for ``graphflow validate`` (files exist...). Raise ``GraphflowError``."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options!r})"


class Loader(Component):
    """Reads a graph from somewhere: ``[load]``."""

    kind = "loader"

    def load(self, ctx: RunContext) -> GraphData:
        """Return the graph on the CPU with its original node ids."""
        raise NotImplementedError


class Transform(Component):
    """Rewrites the graph: ``[[transform]]``, applied in file order."""

    kind = "transform"
    typed: ClassVar[bool] = False
    """Whether :meth:`apply` handles typed graphs (``data.is_typed``: several node types or
    relations). The host refuses a typed graph to a transform that does not say so, in one
    line, rather than let it rewrite a heterograph as if it had one type."""

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        """Return the transformed graph (a new ``GraphData`` or ``data`` itself)."""
        raise NotImplementedError


class Sampler(Component):
    """Draws minibatches from the graph: ``[sample]``.

    The contract is DGL's: ``sample(graph, seeds) -> minibatch``. The sample stage calls
    :meth:`prepare` once, so that device structures (CSC on the GPU...) are built outside
    the training loop; the task then passes what ``prepare`` returned as ``graph``.
    """

    kind = "sampler"

    def prepare(self, data: GraphData, device: torch.device) -> Any:
        """Build what :meth:`sample` reads. Default: the DGLGraph itself."""
        return data.graph

    def sample(self, graph: Any, seeds: torch.Tensor) -> Any:
        raise NotImplementedError


class Model(Component):
    """A stack of sparse message-passing layers: ``[model]``.

    The built module is called as ``forward(adj, x)`` (see docs/plugins.md, "The model input
    contract"): ``adj`` is one :class:`graphflow.sparse.Adjacency` (the full graph) or a list
    of them, one per layer (sampled blocks, input side first); ``x`` holds the input features
    (num_src, F). ``x`` is a dense tensor unless the class sets ``accepts_sparse = True``: then
    a task may pass :class:`graphflow.sparse.SparseFeatures` for mostly-zero features, which
    the module must handle (``graphflow.sparse.features.linear`` / ``dropout`` / ``to_dense``).
    """

    kind = "model"
    accepts_sparse: ClassVar[bool] = False
    """Whether the module's ``forward`` (and ``inference``) take ``SparseFeatures`` as ``x``."""
    reads_edge_features: ClassVar[bool] = False
    """Whether the module reads ``adj.edge_feat`` (edge feature vectors): the pipeline then
    pairs it only with a task whose ``carries_edge_features`` is set."""

    def build(self, in_dim: int, out_dim: int) -> torch.nn.Module:
        """Return a fresh ``nn.Module`` mapping ``in_dim`` features to ``out_dim`` outputs."""
        raise NotImplementedError


class Task(Component):
    """Trains or evaluates: ``[train]`` (or each ``[[train]]``).

    ``requires_model`` / ``requires_sampler`` make ``graphflow validate`` insist on a
    ``[model]`` / ``[sample]`` section. A task may accept a sampler without requiring one.
    ``supports_distributed`` says the task runs data-parallel (``graphflow run --nproc N``,
    ``torchrun``): it shards its training seeds with ``ctx.world`` and wraps its model in
    DDP; other tasks refuse more than one process.
    ``fanout_per_layer`` says each fanout of the stage's ``[sample]`` feeds one
    message-passing layer of its ``[model]``: the counts are then checked when the
    pipeline is read (``graphflow validate``, and ``graphflow run`` before any data loads).
    """

    kind = "task"
    level: ClassVar[Literal["node", "graph", "any"]] = "node"
    """What the task learns from: ``node`` tasks are refused a collection of graphs
    (``data.graphs``), ``graph`` tasks need one, ``any`` takes both."""
    model_kind: ClassVar[str | None] = None
    """The kind of model bundle the task writes (``node``, ``link``, ``graph``, ``kg``), so
    that what reads it (an ``[explain]`` stage) is checked when the pipeline is read; None
    when it writes none or the kind is known only when it runs (``predict``: its bundle's)."""
    requires_model: ClassVar[bool] = False
    requires_sampler: ClassVar[bool] = False
    supports_distributed: ClassVar[bool] = False
    fanout_per_layer: ClassVar[bool] = False
    carries_edge_features: ClassVar[bool] = False
    """Whether the adjacencies the task hands its model carry the graph's edge features
    (``edata["edge_feat"]`` as ``adj.edge_feat``), which models with
    ``reads_edge_features`` need."""
    refusals: ClassVar[tuple[Refusal, ...]] = ()
    """The run-level features (:data:`graphflow.capabilities.FEATURES`: exports, mixed
    precision, ...) this task cannot offer, each with its reason and alternative, optionally
    only on typed or sampled stages. :func:`graphflow.capabilities.check_pipeline` refuses
    them when the pipeline is read, before anything runs; ``--nproc`` is refused unless
    ``supports_distributed`` is set."""

    def run(self, ctx: RunContext) -> None:
        """Train; store artifacts in ``ctx.artifacts`` and metrics with ``ctx.log_metrics``."""
        raise NotImplementedError

    def mode_defaults(self, *, sampled: bool) -> dict[str, Any]:
        """Values of the options whose default depends on the mode: those declared with
        default None ("by mode", the doc giving both values), for a full-batch stage
        (``sampled`` false) or one with a ``[sample]`` section. The host fills in the options
        left at None when the pipeline is read, so ``run.json`` records the values used."""
        return {}

    def model_defaults(self, model: str, *, sampled: bool) -> dict[str, Any]:
        """This task's preferred values for the options of its ``[model]`` (type ``model``)
        that the pipeline leaves unset, e.g. no dropout for an encoder. Names the model's
        options lack are ignored; values the pipeline sets always win. Applied when the
        pipeline is read and recorded in ``run.json`` with the stage's model."""
        return {}

    def resolve_mode_defaults(self, *, sampled: bool) -> None:
        """Fill in the options still at None from :meth:`mode_defaults` (the host does so
        when it reads the pipeline; a task built directly does it when it runs)."""
        unset = {k: v for k, v in self.mode_defaults(sampled=sampled).items()
                 if getattr(self.options, k) is None}
        if unset:
            self.options = dataclasses.replace(self.options, **unset)


What = Literal["embeddings", "predictions", "logits", "graph", "links", "model"]
"""The artifacts an exporter can write (its ``what`` option); ``links``: scored node pairs of
link prediction; ``model``: the trained module."""
WHATS: tuple[str, ...] = get_args(What)
TABLE_WHATS: tuple[str, ...] = ("embeddings", "predictions", "logits", "graph")
"""What an exporter writes unless it declares ``writes`` (all but ``links`` and ``model``)."""


class Exporter(Component):
    """Writes an artifact to a file: ``[[export]]``.

    Its ``Options`` must have ``what: What`` and ``path: Path | None`` (the registry checks),
    and ``writes`` lists the artifacts it can write (default: every one of :data:`What`).
    Write to :meth:`target`, which is ``path`` or, when it is left out, ``OUT_DIR/<what><suffix>``
    (a folder ``OUT_DIR/graph`` for exporters that write a graph as the files ``graph_files``).
    Writes are atomic: use :func:`graphflow.io.atomic.atomic_path`.
    """

    kind = "exporter"
    writes: ClassVar[tuple[str, ...]] = TABLE_WHATS
    """The ``what`` values this exporter writes; ``graphflow validate`` rejects any other."""
    suffix: ClassVar[str] = ""
    graph_files: ClassVar[tuple[str, ...]] = ()
    """The files of a graph written as a folder (``what = "graph"``); empty: one file."""

    def target(self, ctx: RunContext) -> Path:
        """Where to write: the ``path`` option, else a default inside the run's out_dir.

        :raises DataError: a graph written as a folder is given the path of a file.
        """
        what = self.options.what
        folder = what == "graph" and bool(self.graph_files)
        path = self.options.path
        if path is None:
            path = ctx.out_dir / ("graph" if folder else f"{what}{self.suffix}")
        if folder and path.is_file():
            raise DataError(f'{path} is a file; for what = "graph" the path is a folder that '
                            f'will hold {" and ".join(self.graph_files)}')
        return path

    def export(self, ctx: RunContext) -> list[Path]:
        """Write and return the files written."""
        raise NotImplementedError


class Tracker(Component):
    """Sends a run to an experiment tracker (MLflow, TensorBoard...): ``[[track]]``.

    The host (:mod:`graphflow.experiments.tracking`) calls, on rank 0 only:

    * :meth:`start` once, before the first stage (``ctx.config`` is resolved);
    * :meth:`log_epoch` after each epoch, with the figures written to ``metrics.jsonl``;
    * :meth:`flush` at the end of each stage;
    * :meth:`finish` once, after ``run.json`` is written, whether the run succeeded, failed
      or was stopped (``record["status"]`` says which).

    A method that raises stops this tracker with one warning line; the run goes on and loses
    nothing. Import the tracker's client library inside :meth:`start`, never at module level:
    ``graphflow --help`` and runs without ``[[track]]`` must not pay for it.
    """

    kind = "tracker"

    def start(self, ctx: RunContext) -> dict[str, Any] | None:
        """Open the tracker's run and send the configuration
        (``graphflow.experiments.tracking.params``); return where the run lives (a run id, a
        folder), which ``run.json`` records under ``reports["track.N"]``."""
        raise NotImplementedError

    def log_epoch(self, key_values: dict[str, float], step: int) -> None:
        """One epoch's figures, keyed by ``graphflow.experiments.tracking.metric_key``."""
        raise NotImplementedError

    def flush(self) -> None:
        """Send what is buffered (called at the end of each stage)."""

    def finish(self, ctx: RunContext, record: dict[str, Any]) -> None:
        """Close the tracker's run: final metrics, files, status (``record`` is ``run.json``)."""
        raise NotImplementedError


class Explainer(Component):
    """Explains a trained model's outputs: ``graphflow explain --method NAME`` (docs/explain.md).

    :meth:`explain` takes the model (``model(adj, x) -> (N, C)`` logits, or a graph model
    ``model(batch) -> (scores, ...)``, in eval mode, its parameters frozen), its inputs on
    the graph (:class:`graphflow.explain.GraphInputs`: the adjacency, the features, the
    model's depth, the hidden node embeddings, a collection's ``graph_ptr`` for a graph
    model) and the targets (int64 (T,): nodes, or the collection's graphs), and returns a
    :class:`graphflow.explain.Explanation`: an importance per edge of each target's
    computation subgraph and per input feature. Edge weights reach any model that follows
    the model contract through :class:`~graphflow.sparse.Adjacency` values; build the
    targets' subgraphs with ``inputs.units(targets)``
    (:func:`graphflow.explain.subgraph.make_units`) and read the model's outputs at the
    targets with ``units.outputs(model, adj, x)``.

    ``explains`` names the bundle kinds (``node``, ``link``, ``graph``) the method handles;
    ``graphflow explain`` refuses the others in one line that names the methods that can.
    """

    kind = "explainer"
    explains: ClassVar[tuple[str, ...]] = ("node",)

    def explain(self, model: Any, inputs: Any, targets: torch.Tensor) -> Any:
        """The :class:`~graphflow.explain.Explanation` of ``model``'s outputs at ``targets``."""
        raise NotImplementedError


BASES: dict[Kind, type[Component]] = {
    "loader": Loader,
    "transform": Transform,
    "sampler": Sampler,
    "model": Model,
    "task": Task,
    "exporter": Exporter,
    "tracker": Tracker,
    "explainer": Explainer,
}
