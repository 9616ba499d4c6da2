"""Load a model bundle: checks, then the model rebuilt in eval mode (:class:`Bundle`)."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyarrow.parquet as pq
from torch import nn

from graphflow.bundle.layout import BUNDLE_JSON, FORMAT, HELD_OUT, find_bundle
from graphflow.bundle.versions import Difference, compare
from graphflow.bundle.write import sha256
from graphflow.errors import ConfigError, DataError, GraphflowError
from graphflow.graph import NodeIds
from graphflow.record import package_versions

if TYPE_CHECKING:
    from graphflow.components import Model
    from graphflow.graph import GraphData
    from graphflow.manager import PluginHost
    from graphflow.sparse import Adjacency
    from graphflow.sparse.features import Features

KINDS = ("node", "link", "graph", "kg")
"""What a bundle's model predicts: nodes, links, graphs, or knowledge-graph triples
(``kg``: :mod:`graphflow.kge.bundle`)."""


def read_meta(folder: Path) -> dict[str, Any]:
    """``bundle.json`` of a bundle folder, checked for its format (no weights read)."""
    path = folder / BUNDLE_JSON
    try:
        meta = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"{path}: not a readable bundle ({type(exc).__name__}: "
                        f"{str(exc).splitlines()[0][:120]}); train again to rewrite it") from None
    if not isinstance(meta, dict) or "format" not in meta or meta.get("kind") not in KINDS:
        raise DataError(f"{path}: not a graphflow model bundle (no format or kind); train "
                        f"again to rewrite it")
    if not isinstance(meta["format"], int) or meta["format"] > FORMAT:
        raise ConfigError(f"{path}: bundle format {meta['format']!r} is newer than this "
                          f"graphflow reads (format {FORMAT}); upgrade graphflow "
                          f"(the bundle was written by graphflow "
                          f"{meta.get('versions', {}).get('graphflow')})")
    return meta


@dataclass
class Bundle:
    """A trained model and everything that rebuilds its input.

    :ivar path: the bundle folder.
    :ivar meta: ``bundle.json`` as read.
    :ivar model: the rebuilt ``nn.Module`` with the trained weights, in eval mode on the CPU
        (node: the ``[model]``'s module; link: ``LinkModel`` (encoder + decoder); graph:
        ``GraphModel`` (encoder + readout + head); kg: the ``KgeModel``).
    :ivar component: the ``[model]`` component that built it.
    :ivar differences: version differences with this environment (errors refused already).
    """

    path: Path
    meta: dict[str, Any]
    model: nn.Module
    component: Model
    differences: list[Difference] = field(default_factory=list)

    # -- what the bundle records ----------------------------------------------------------
    @property
    def kind(self) -> str:
        """``node``, ``link``, ``graph`` or ``kg``."""
        return str(self.meta["kind"])

    @property
    def config(self) -> dict[str, Any]:
        """The resolved ``[model]`` and ``[train]`` tables, and the data sections."""
        return {"model": self.meta.get("model"), "train": self.meta.get("task"),
                **self.meta.get("data", {})}

    @property
    def model_info(self) -> dict[str, Any]:
        return dict(self.meta.get("model_info") or {})

    @property
    def versions(self) -> dict[str, Any]:
        return dict(self.meta.get("versions") or {})

    @property
    def fitted(self) -> list[dict[str, Any]]:
        """Fitted transform state, in pipeline order (:mod:`graphflow.bundle.fitted`)."""
        return list(self.meta.get("fitted") or [])

    @property
    def in_dim(self) -> Any:
        """The input width; a typed model's: the width of each node type (None:
        featureless)."""
        value = self.meta["inputs"]["in_dim"]
        return dict(value) if isinstance(value, dict) else int(value)

    @property
    def typed(self) -> dict[str, Any] | None:
        """A typed model's record (:mod:`graphflow.bundle.typed`), or None."""
        return self.meta.get("typed")

    @property
    def target(self) -> str | None:
        """The node type a typed model classifies (None for a one-type model)."""
        return None if self.typed is None else str(self.typed["target"])

    @property
    def class_names(self) -> list[str] | None:
        return (self.meta.get("labels") or {}).get("names")

    @property
    def multilabel(self) -> bool:
        return bool((self.meta.get("labels") or {}).get("multilabel", False))

    @cached_property
    def ids(self) -> NodeIds:
        """The training graph's original node ids (the id map)."""
        table = pq.read_table(self.path / self.meta["ids"]["file"])
        values = table.column("id").combine_chunks()
        return NodeIds(len(values), None if self.meta["ids"]["type"] == "identity" else values)

    def held_out_ids(self) -> Any | None:
        """The ids ``hold_out_nodes`` removed from the training graph (pyarrow), or None."""
        if "held_out_nodes" not in self.meta:
            return None
        return pq.read_table(self.path / HELD_OUT).column("id").combine_chunks()

    # -- turning data into model inputs ----------------------------------------------------
    def check_data(self, data: GraphData, *, where: str = "the new data") -> None:
        """Refuse data the model cannot read: missing features, another feature width or
        columns, a stateful training transform it did not go through, a collection for a
        node model or a single graph for a graph model.

        :raises DataError: one line saying what differs and how to fix it.
        """
        from graphflow.bundle.fitted import missing_replay

        inputs = self.meta["inputs"]
        if self.typed is not None:
            self._check_typed(data, where)
            return
        if inputs.get("features", "feat") != "feat":
            raise DataError(f"the model was trained on features = {inputs['features']!r} "
                            f"(made by an earlier stage), which predict cannot rebuild; "
                            f'train on features = "feat" to predict on new data')
        feat = data.graph.ndata.get("feat")
        if feat is None:
            raise DataError(f"{where} has no node features (ndata['feat']); the model reads "
                            f"{self.in_dim} feature columns")
        width = int(feat.shape[1]) if feat.dim() == 2 else 1
        if width != self.in_dim:
            raise DataError(f"{where} has {width} feature columns, but the model was trained "
                            f"on {self.in_dim}; load the training data's feature columns, in "
                            f"the same order")
        trained, now = inputs.get("feature_columns"), data.meta.get("feature_columns")
        if trained and now and list(trained) != list(now):
            diff = next(i for i, (a, b) in enumerate(zip(trained, now)) if a != b) \
                if len(trained) == len(now) else min(len(trained), len(now))
            raise DataError(f"{where}'s feature columns differ from training's at column "
                            f"{diff} ({now[diff] if diff < len(now) else None!r} vs "
                            f"{trained[diff] if diff < len(trained) else None!r}); select the "
                            f"training columns in the same order")
        missing = missing_replay(data)
        if missing:
            raise DataError(f"the training pipeline applied {', '.join(missing)} to the "
                            f"features, but {where} did not go through it; add the same "
                            f"[[transform]] (it reuses the training statistics)")
        if self.kind == "graph" and data.graphs is None:
            raise DataError(f"the model predicts whole graphs, but {where} is a single graph; "
                            f'load a collection (e.g. type = "tu")')
        if self.kind != "graph" and data.graphs is not None:
            raise DataError(f"the model is {self.kind}-level, but {where} is a collection of "
                            f"graphs; load one graph")

    def _check_typed(self, data: GraphData, where: str) -> None:
        from graphflow.bundle.fitted import missing_replay
        from graphflow.bundle.typed import check_typed_data

        features = self.meta["inputs"].get("features", "feat")
        if features != "feat":
            raise DataError(f"the model was trained on features = {features!r} (made by an "
                            f"earlier stage), which predict cannot rebuild; train on "
                            f'features = "feat" to predict on new data')
        if data.graphs is not None:
            raise DataError(f"the model is node-level, but {where} is a collection of "
                            f"graphs; load one graph")
        check_typed_data(self.path, self.typed, data, where)  # type: ignore[arg-type]
        missing = missing_replay(data)
        if missing:
            raise DataError(f"the training pipeline applied {', '.join(missing)} to the "
                            f"features, but {where} did not go through it; add the same "
                            f"[[transform]] (it reuses the training statistics)")

    def adjacency(self, data: GraphData) -> Adjacency:
        """The graph's CSR as the model was trained on it (edge weights when it used them)."""
        from graphflow.sparse import Adjacency

        weighted = bool(self.meta["inputs"].get("edge_weights"))
        if weighted and "weight" not in data.graph.edata:
            raise DataError("the model was trained with edge_weights = true, but the new "
                            "graph has no edge weights (edata['weight'])")
        width = int(self.meta["inputs"].get("edge_features", 0))
        adj = Adjacency.from_graph(data.graph, weight="weight" if weighted else None,
                                   feat="edge_feat" if width else None)
        got = 0 if adj.edge_feat is None else int(adj.edge_feat.shape[1])
        if got != width:
            raise DataError(f"the model was trained with edge features {width} wide, but the "
                            f"new graph's (edata['edge_feat']) are {got or 'absent'}; load it "
                            f"as the training data was loaded")
        return adj

    def inputs(self, data: GraphData) -> tuple[Adjacency, Features]:
        """``(adj, x)`` for the model's ``forward`` / ``inference`` on ``data`` (already
        transformed by the data pipeline; checked with :meth:`check_data`)."""
        from graphflow.train.inputs import model_input

        self.check_data(data)
        if self.typed is not None:  # (TypedAdjacency, per-type features or node ids)
            from graphflow.bundle.typed import typed_inputs

            return typed_inputs(self.typed, data,  # type: ignore[return-value]
                                bool(self.meta["inputs"].get("edge_weights")))
        x = data.graph.ndata["feat"].float()
        if x.dim() == 1:
            x = x.unsqueeze(1)
        return self.adjacency(data), model_input(
            x, self.component, float(self.meta["inputs"].get("sparse_threshold", 0.0)))


def load_bundle(path: str | Path, *, stage: str | None = None, host: PluginHost | None = None,
                warn: Any = None) -> Bundle:
    """The bundle in ``path`` (a run folder or a bundle folder), checked and rebuilt.

    Checks: the folder has a bundle, its format is readable, the weights match their
    sha256, the graphflow / torch / DGL versions are compatible (:mod:`versions`: an
    incompatible one is an error, a major torch or DGL change a warning printed through
    ``warn``, default stderr), the ``[model]`` plugin is installed and the weights fit it.

    :raises DataError: / :raises ConfigError: one line each, with the fix.
    """
    folder = find_bundle(Path(path), stage)
    meta = read_meta(folder)
    weights = folder / meta["weights"]["file"]
    if not weights.is_file():
        raise DataError(f"{weights}: missing; the bundle is incomplete, train again")
    digest = sha256(weights)
    if digest != meta["weights"]["sha256"]:
        raise DataError(f"{weights}: its sha256 does not match bundle.json (the file changed "
                        f"or is damaged); restore it or train again")
    differences = compare(meta.get("versions") or {}, package_versions())
    errors = [d for d in differences if d.severity == "error"]
    if errors:
        raise ConfigError(f"{folder}: incompatible bundle: " + "; ".join(d.line() for d in errors))
    say = warn or (lambda line: print(line, file=sys.stderr, flush=True))
    for d in differences:
        if d.severity == "warning":
            say(f"warning: bundle {folder}: {d.line()}")
    if host is None:
        from graphflow.manager import create_host

        host = create_host()
    component, model = _rebuild(folder, meta, host)
    from graphflow.pruning.two_four import attach_masks
    from graphflow.train import checkpoint as ckpt

    payload = ckpt.load(weights)
    state = payload.get("model") if isinstance(payload, dict) else None
    if not isinstance(state, dict):
        raise DataError(f"{weights}: not a model state dict; train again")
    attach_masks(model, state)
    try:
        model.load_state_dict(state)
    except RuntimeError as exc:
        first = str(exc).strip().splitlines()[0][:200]
        raise DataError(f"{weights}: the weights do not fit the rebuilt "
                        f"{meta['model']['type']!r} model ({first}); the [model] plugin "
                        f"changed since training: install the version that trained it") from None
    return Bundle(path=folder, meta=meta, model=model.eval(), component=component,
                  differences=differences)


def _rebuild(folder: Path, meta: dict[str, Any], host: PluginHost) -> tuple[Any, nn.Module]:
    """The ``[model]`` component and a fresh module of the bundle's shape."""
    from graphflow.options import parse_options

    spec = dict(meta.get("model") or {})
    name = spec.pop("type", None)
    if not name:
        raise DataError(f"{folder / BUNDLE_JSON}: no [model] recorded; train again")
    where = str(folder / BUNDLE_JSON)
    try:
        info = host.registry.get("model", name, where=f"{where}: model.type")
    except GraphflowError as exc:
        raise ConfigError(f"{exc}; install the plugin that trained this model") from None
    options = parse_options(info.cls.Options, spec, section="model", component=name,
                            source=where, base_dir=folder)
    component = info.cls(options)
    if meta["kind"] == "kg":  # entity and relation tables (graphflow.kge.bundle)
        kg = meta["kg"]
        return component, component.build(int(kg["entities"]), int(kg["relations"]),
                                          reciprocal=bool(kg["reciprocal"]))
    if meta.get("typed") is not None:  # per-type widths, relations, featureless tables
        from graphflow.bundle.typed import load_schema

        schema = load_schema(folder, meta["typed"])
        return component, component.build_typed(schema, int(meta["labels"]["classes"]),
                                                host.registry)
    in_dim = int(meta["inputs"]["in_dim"])
    kind = meta["kind"]
    if kind == "node":
        return component, component.build(in_dim, int(meta["labels"]["classes"]))
    if kind == "link":
        from graphflow.linkpred.decoders import LinkModel, make_decoder

        dim = int(meta["link"]["embedding_dim"])
        return component, LinkModel(component.build(in_dim, dim),
                                    make_decoder(meta["link"]["decoder"], dim))
    from graphflow.graphs.model import GraphModel

    g = meta["graph_model"]
    encoder = component.build(in_dim, int(g["hidden"]))
    return component, GraphModel(encoder, list(g["widths"]), int(g["out_dim"]),
                                 pooling=g["pooling"], layers=g["layers"],
                                 dropout=float(g["dropout"]))
