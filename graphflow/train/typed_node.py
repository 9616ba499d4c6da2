"""Node classification on a typed graph: the target type's labels and splits, every type's
features, and full-graph or sampled training passes over typed adjacencies.

The passes follow the pass protocol of :mod:`graphflow.train.step` (``train_epoch(epoch) ->
figures``, ``logits() -> (n_target, C)``) on the node passes' epochs and the one
:class:`~graphflow.train.step.Step` (precision, clipping), so the shared task base and epoch
loop drive them unchanged; logits, predictions and metrics cover the nodes of the target
type, indexed by their id within the type.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import torch
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.nn.typed import TypedAdjacency, TypedSchema, full_input
from graphflow.train.inputs import SPLITS, Targets, _check_finite
from graphflow.train.node import FullBatch, MiniBatches
from graphflow.train.objective import Objective
from graphflow.train.step import Step

if TYPE_CHECKING:
    from graphflow.graph import GraphData

Progress = Callable[..., Any]


def is_typed(data: GraphData) -> bool:
    """Whether ``data`` holds a typed graph (several node types or relations)."""
    g = data.graph
    return len(g.ntypes) > 1 or len(g.canonical_etypes) > 1


def target_type(data: GraphData, target: str | None) -> str:
    """The node type to classify: ``target``, or the graph's one type with labels."""
    g = data.graph
    labelled = [t for t in g.ntypes if "label" in g.nodes[t].data]
    if target is None:
        target = data.meta.get("target")
    if target is None:
        if len(labelled) != 1:
            have = ", ".join(labelled) if labelled else "none"
            raise ConfigError(f'[train] target: the typed graph {data.name!r} has labels on '
                              f'the node types: {have}; set target = "<node type>"')
        return labelled[0]
    if target not in g.ntypes:
        raise ConfigError(f'[train] target = "{target}" is not a node type of {data.name!r}; '
                          f"node types: {', '.join(g.ntypes)}")
    if target not in labelled:
        have = ", ".join(labelled) if labelled else "none"
        raise DataError(f'[train] target = "{target}": that node type has no labels '
                        f'(nodes["{target}"].data["label"]); node types with labels: {have}')
    return target


def typed_targets(data: GraphData, ntype: str) -> Targets:
    """Labels and split ids of the nodes of ``ntype`` (ids within the type)."""
    g = data.graph
    nd = g.nodes[ntype].data
    n = g.num_nodes(ntype)
    label = nd["label"]
    if label.dim() != 1 or label.is_floating_point():
        raise DataError(f'nodes["{ntype}"].data["label"] must be int64 ({n},) class ids, got '
                        f"{label.dtype} {tuple(label.shape)}")
    label = label.long()
    splits: dict[str, torch.Tensor] = {}
    for split in SPLITS:
        mask = nd.get(f"{split}_mask")
        if mask is None:
            continue
        if mask.dtype != torch.bool or mask.shape != (n,):
            raise DataError(f'nodes["{ntype}"].data["{split}_mask"] must be bool ({n},), got '
                            f"{mask.dtype} {tuple(mask.shape)}")
        splits[split] = mask.nonzero().squeeze(1)  # (n_split,)
    if "train" not in splits or splits["train"].numel() == 0:
        raise DataError(f'node type "{ntype}" has no training nodes (train_mask); the loader '
                        f"must mark them")
    used = torch.cat(list(splits.values()))
    num_classes = int(data.meta.get("num_classes") or int(label[used].max()) + 1)
    lo, hi = int(label[used].min()), int(label[used].max())
    if lo < 0 or hi >= num_classes:
        raise DataError(f'labels of the split nodes of "{ntype}" must lie in [0, {num_classes}),'
                        f" found {lo}..{hi}")
    if num_classes < 2:
        raise DataError(f"node classification needs at least 2 classes, {ntype!r} has "
                        f"{num_classes}")
    return Targets(labels=label, num_classes=num_classes, multilabel=False, splits=splits)


def typed_features(data: GraphData) -> dict[str, torch.Tensor]:
    """float32 features of each node type that has ``feat`` (featureless types left out)."""
    g = data.graph
    out = {}
    for t in g.ntypes:
        feat = g.nodes[t].data.get("feat")
        if feat is None:
            continue
        if feat.dim() != 2 or feat.shape[0] != g.num_nodes(t):
            raise DataError(f'nodes["{t}"].data["feat"] must be ({g.num_nodes(t)}, F), got '
                            f"{tuple(feat.shape)}")
        feat = feat.float()
        _check_finite(feat, f'nodes["{t}"].data["feat"]', "fix or drop those rows")
        out[t] = feat
    return out


def build_typed_model(component: Any, data: GraphData, feats: dict[str, torch.Tensor],
                      num_classes: int, registry: Any) -> nn.Module:
    """The ``[model]`` component's module for this typed graph, or a ``ConfigError`` when it
    is a homogeneous model."""
    if not hasattr(component, "build_typed"):
        raise ConfigError(f'[model] type = "{component.name}" is a homogeneous model and the '
                          f"graph {data.name!r} is typed ({len(data.graph.ntypes)} node types, "
                          f'{len(data.graph.canonical_etypes)} relations); use type = "rgcn", '
                          f'or type = "hetero" with layer = "{component.name}"')
    return component.build_typed(TypedSchema.of(data.graph, feats), num_classes, registry)


class TypedFullBatch(FullBatch):
    """Full-graph training on a typed graph (:class:`FullBatch`'s epoch and predictions):
    per-relation adjacencies, per-type inputs and the target type's labels on the device;
    the model's output rows are the target type's."""

    def __init__(self, model: nn.Module, step: Step, objective: Objective,
                 adj: TypedAdjacency, x: dict[str, torch.Tensor], target: str,
                 labels: torch.Tensor, train_ids: torch.Tensor):
        dev = step.device
        self.model, self.step, self.objective, self.target = model, step, objective, target
        self.adj = adj.to(dev)
        self.x = {t: v.to(dev) for t, v in x.items()}
        self.labels = labels.to(dev)  # (n_target,)
        self.train_ids = train_ids.to(dev)  # (n_train,)
        self.inference_batch_size, self.progress = 0, None  # one full-graph forward

    def forward(self) -> torch.Tensor:
        """(n_target, C): the target type's rows of the model's per-type output."""
        return self.model(self.adj, self.x)[self.target]


class TypedMiniBatches(MiniBatches):
    """Sampled training on a typed graph (:class:`MiniBatches`' epoch, on the same
    :class:`~graphflow.train.step.Step`): batches of target-type seeds, one typed block
    adjacency per layer (a typed sampler's ``iterate_typed``); predictions by the model's
    full-graph ``inference``."""

    def __init__(self, model: nn.Module, step: Step, objective: Objective,
                 adj: TypedAdjacency, x: dict[str, torch.Tensor], target: str,
                 labels: torch.Tensor, train_ids: torch.Tensor, *, sampler: Any, graph: Any,
                 generator: torch.Generator, progress: Progress | None = None):
        self.model, self.step, self.objective, self.target = model, step, objective, target
        self.adj, self.x, self.labels, self.train_ids = adj, x, labels, train_ids
        self.sampler, self.graph, self.generator, self.progress = sampler, graph, generator, \
            progress
        if not hasattr(sampler, "iterate_typed"):
            name = getattr(sampler, "name", type(sampler).__name__)
            raise ConfigError(f'[sample] "{name}" does not sample typed graphs; use type = '
                              f'"typed_neighbor"')
        if hasattr(sampler, "check_layers") and hasattr(model, "num_layers"):
            sampler.check_layers(model.num_layers)

    def batches(self) -> Iterator[Any]:
        yield from self.sampler.iterate_typed(self.graph, self.target, self.train_ids,
                                              self.generator)

    def inputs(self, mb: Any) -> tuple[list[Any], dict[str, torch.Tensor], torch.Tensor]:
        """The batch's typed block adjacencies, per-type input rows (or ids) and seed labels
        on the device."""
        dev = self.step.device
        adjs = [a.to(dev) for a in mb.adjs]
        x = {t: self.x[t].index_select(0, ids.to(self.x[t].device)).to(dev)  # (n_t, F_t) or ids
             for t, ids in mb.input_nodes.items()}
        return adjs, x, self.labels[mb.seeds.to(self.labels.device)].to(dev)

    def forward(self, adjs: Any, x: Any) -> torch.Tensor:
        """(B, C): the target type's rows of the model's per-type output."""
        return self.model(adjs, x)[self.target]

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(n_target, C) float32, eval mode, full neighbourhoods."""
        self.model.eval()
        with self.step.autocast():
            out = self.model.inference(self.adj, self.x, device=self.step.device)
        return out[self.target].float()


def model_inputs(data: GraphData, feats: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """Full-graph model input: features per featured type, node ids for the others."""
    return full_input(data.graph, feats)
