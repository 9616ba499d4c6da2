"""What a node-level task reads from the run: features, targets and splits, checked.

Each accessor raises a :class:`~graphflow.errors.DataError` or
a ``ConfigError`` (a missing artifact) that says what is missing and which section adds it, so
that a pipeline without masks or labels fails before any training starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import torch

from graphflow.errors import DataError
from graphflow.sparse.features import Features, as_features

if TYPE_CHECKING:
    from graphflow.components import Model
    from graphflow.context import Artifacts
    from graphflow.graph import GraphData

FeatureSource = Literal["feat", "embeddings", "feat+embeddings"]
SPLITS = ("train", "val", "test")


@dataclass
class Targets:
    """Labels and splits of a node classification problem.

    :ivar labels: int64 (N,) class ids, or float32 (N, C) 0/1 for multi-label.
    :ivar num_classes: C.
    :ivar multilabel: whether ``labels`` is (N, C).
    :ivar splits: int64 node ids of each present split (``train`` always present, non-empty).
    """

    labels: torch.Tensor
    num_classes: int
    multilabel: bool
    splits: dict[str, torch.Tensor]


def node_features(data: GraphData, source: FeatureSource, artifacts: Artifacts, *,
                  section: str = "train") -> torch.Tensor:
    """float32 (N, F) input features on the CPU, from the graph, an earlier stage, or both.

    :param artifacts: the run's artifacts (``embeddings`` for ``"embeddings"`` sources).
    :param section: the training section, for messages.
    """
    n = data.num_nodes
    parts = []
    if source in ("feat", "feat+embeddings"):
        feat = data.graph.ndata.get("feat")
        if feat is None:
            raise DataError(
                f'the graph {data.name!r} has no node features ("feat"); use a loader that '
                f'provides them, or set features = "embeddings" after a stage that makes '
                f'embeddings (e.g. a "skipgram" training stage over a "node2vec" sampler)')
        if feat.dim() != 2 or feat.shape[0] != n:
            raise DataError(f'ndata["feat"] must be (N={n}, F), got {tuple(feat.shape)}')
        _check_finite(feat, f'ndata["feat"] of the graph {data.name!r}',
                      "fix or drop those rows in the input data (a NaN stays NaN through every "
                      "transform and poisons each neighbour it reaches)")
        parts.append(feat)
    if source in ("embeddings", "feat+embeddings"):
        emb = artifacts.require("embeddings", section=f"[{section}] features")
        if emb.dim() != 2 or emb.shape[0] != n:
            raise DataError(f"the embeddings artifact is {tuple(emb.shape)} but the graph has "
                            f"{n} nodes; the embedding stage must run on the same graph")
        _check_finite(emb, "the embeddings artifact of an earlier stage",
                      "that stage diverged; lower its lr")
        parts.append(emb.detach().to("cpu"))
    x = parts[0] if len(parts) == 1 else torch.cat([p.float() for p in parts], dim=1)
    x = x.float()
    _check_finite(x, f"node features ({source}) as float32", "they overflow float32: "
                  "rescale them (e.g. a normalize_features transform)")
    return x  # (N, F)


def _check_finite(x: torch.Tensor, source: str, fix: str) -> None:
    """A DataError naming ``source`` and the first node with a NaN or infinite feature."""
    if not x.is_floating_point() or bool(torch.isfinite(x).all()):
        return
    bad = (~torch.isfinite(x)).reshape(x.shape[0], -1).any(dim=1)  # (N,)
    rows = bad.nonzero().squeeze(1)
    raise DataError(f"node features: {source} contain NaN or infinite values (first at "
                    f"internal node {int(rows[0])}, {rows.numel()} node(s) in all); {fix}")


def model_input(x: torch.Tensor, model: Model, sparse_threshold: float) -> Features:
    """The features a task hands to ``model``'s module: the one place that decides.

    A model receives a dense tensor unless its class declares ``accepts_sparse = True``;
    then mostly-zero features (density below ``sparse_threshold``) come as
    :class:`~graphflow.sparse.SparseFeatures` (see :func:`graphflow.sparse.as_features`).

    :param x: float32 (N, F) dense features.
    :param model: the ``[model]`` component (``ctx.model``).
    :param sparse_threshold: density below which features go sparse; 0 keeps them dense.
    """
    if not getattr(model, "accepts_sparse", False):
        return x  # (N, F) dense
    return as_features(x, sparse_threshold)


def node_targets(data: GraphData) -> Targets:
    """Labels and the train/val/test node ids, with clear errors when they are missing."""
    g = data.graph
    label = g.ndata.get("label")
    if label is None:
        raise DataError(f'the graph {data.name!r} has no labels (ndata["label"]); '
                        f"node_classification needs a loader that provides labels "
                        f"(e.g. planetoid, or synthetic with classes)")
    splits: dict[str, torch.Tensor] = {}
    for split in SPLITS:
        mask = g.ndata.get(f"{split}_mask")
        if mask is None:
            continue
        if mask.dtype != torch.bool or mask.shape != (data.num_nodes,):
            raise DataError(f'ndata["{split}_mask"] must be bool (N={data.num_nodes},), got '
                            f"{mask.dtype} {tuple(mask.shape)}")
        splits[split] = mask.nonzero().squeeze(1)  # (n_split,)
    if "train" not in splits:
        raise DataError(f'the graph {data.name!r} has no train_mask; add a split, e.g. '
                        f'[[transform]] type = "split" (train/val/test fractions)')
    if splits["train"].numel() == 0:
        raise DataError('train_mask selects no node; check the [[transform]] "split" fractions')
    multilabel = label.dim() == 2
    if multilabel:
        if not label.is_floating_point():
            label = label.float()
        if not ((label == 0) | (label == 1)).all():
            raise DataError('multi-label ndata["label"] (N, C) must hold only 0 and 1')
        num_classes = int(label.shape[1])
    else:
        if label.dim() != 1 or label.is_floating_point():
            raise DataError(f'ndata["label"] must be int64 (N,) class ids or float (N, C) 0/1, '
                            f"got {label.dtype} {tuple(label.shape)}")
        label = label.long()
        num_classes = data.num_classes or 0
        used = torch.cat(list(splits.values()))
        lo, hi = int(label[used].min()), int(label[used].max())
        if lo < 0 or hi >= num_classes:
            raise DataError(f"labels of the split nodes must lie in [0, {num_classes}), found "
                            f"{lo}..{hi}; unlabelled nodes (-1) must stay out of the masks")
    if num_classes < 2 and not multilabel:
        raise DataError(f"node classification needs at least 2 classes, the labels have "
                        f"{num_classes}")
    return Targets(labels=label, num_classes=num_classes, multilabel=multilabel, splits=splits)

