"""Splits of a collection's graphs: stratified train/val/test, k folds, fold files.

All are seeded: the same seed and labels give the same graphs in the same parts.

* :func:`stratified_parts`: graphs shuffled, then cut per class in the given fractions
  (:func:`graphflow.io.node_split.stratified_split`, here over graphs).
* :func:`stratified_folds`: graphs shuffled, grouped by class, and dealt to the folds in turn,
  so each fold holds ``~G/k`` graphs with the class proportions of the whole set
  (scikit-learn's ``StratifiedKFold`` idea).
* :func:`read_fold_file`: a JSON list of ``{"train": [...], "test": [...]}``, by graph
  position or by graph id; overlapping or unknown entries are refused.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import torch

from graphflow.errors import DataError
from graphflow.io.node_split import stratified_split

FoldIndex = Literal["position", "id"]


@dataclass
class Fold:
    """int64 graph positions of one fold's parts (``val`` may be empty)."""

    train: torch.Tensor
    val: torch.Tensor
    test: torch.Tensor


def strata(labels: torch.Tensor | None, num_graphs: int) -> torch.Tensor:
    """int64 (G,) the class used to stratify: class ids; for float targets, 0 (no strata),
    except single-column 0/1 targets, which stratify by value."""
    if labels is None:
        return torch.zeros(num_graphs, dtype=torch.int64)
    if not labels.is_floating_point():
        return labels.long().reshape(-1)
    if labels.dim() == 2 and labels.shape[1] == 1:
        col = labels[:, 0]
        if bool(((col == 0) | (col == 1)).all()):
            return col.long()
    return torch.zeros(num_graphs, dtype=torch.int64)


def stratified_parts(labels: torch.Tensor | None, num_graphs: int, *, train: float,
                     val: float, test: float, seed: int) -> dict[str, torch.Tensor]:
    """bool (G,) ``train`` / ``val`` / ``test`` masks over the graphs, stratified by class."""
    try:
        masks = stratified_split(strata(labels, num_graphs), num_graphs, train=train, val=val,
                                 test=test, seed=seed)
    except ValueError as exc:
        raise DataError(f"graph split: {exc}") from None
    return {"train": masks.train, "val": masks.val, "test": masks.test}


def stratified_folds(labels: torch.Tensor | None, num_graphs: int, k: int, *,
                     seed: int) -> list[torch.Tensor]:
    """The ``k`` test folds (int64 positions, sorted), stratified, from ``seed``."""
    if not 2 <= k <= num_graphs:
        raise DataError(f"folds = {k}: need 2 <= folds <= the number of graphs ({num_graphs})")
    cls = strata(labels, num_graphs)
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(num_graphs, generator=gen)
    order = perm[torch.argsort(cls[perm], stable=True)]  # grouped by class, shuffled within
    fold_of = torch.empty(num_graphs, dtype=torch.int64)
    fold_of[order] = torch.arange(num_graphs) % k  # dealt in turn: class shares preserved
    return [(fold_of == f).nonzero().squeeze(1) for f in range(k)]


def fold_parts(test: torch.Tensor, num_graphs: int, labels: torch.Tensor | None, *,
               val_fraction: float, seed: int, train: torch.Tensor | None = None) -> Fold:
    """One fold: the test graphs, the rest (or ``train``) for training, of which a stratified
    ``val_fraction`` is held out for model selection (none when 0)."""
    if train is None:
        rest = torch.ones(num_graphs, dtype=torch.bool)
        rest[test] = False
        train = rest.nonzero().squeeze(1)
    if val_fraction <= 0:
        return Fold(train=train, val=train[:0], test=test)
    cls = strata(labels, num_graphs)[train]
    parts = stratified_split(cls, int(train.shape[0]), train=1.0 - val_fraction,
                             val=val_fraction, test=0.0, seed=seed)
    return Fold(train=train[parts.train | parts.test], val=train[parts.val], test=test)


def read_fold_file(path: Path, graph_ids: pa.Array, *, index: FoldIndex) -> list[
        tuple[torch.Tensor, torch.Tensor]]:
    """``(train, test)`` positions of each fold of a JSON fold file.

    :param index: whether the file lists graph positions (``0..G-1``) or graph ids.
    :raises DataError: unreadable JSON, a fold without ``train`` / ``test`` lists, an entry
        out of range or unknown, or a graph in both parts of a fold or repeated.
    """
    try:
        folds = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataError(f"fold file {path} not found") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"fold file {path} is not JSON ({exc})") from None
    if not isinstance(folds, list) or not folds:
        raise DataError(f'fold file {path}: expected a non-empty JSON list of '
                        f'{{"train": [...], "test": [...]}}')
    g = len(graph_ids)
    lookup = None
    if index == "id":
        keys = graph_ids.to_pylist()
        lookup = {str(k): i for i, k in enumerate(keys)}
    out = []
    for f, fold in enumerate(folds):
        if not isinstance(fold, dict) or not isinstance(fold.get("train"), list) \
                or not isinstance(fold.get("test"), list):
            raise DataError(f'fold file {path}, fold {f}: needs "train" and "test" lists')
        parts = []
        for part in ("train", "test"):
            entries = fold[part]
            if lookup is not None:
                unknown = [e for e in entries if str(e) not in lookup]
                if unknown:
                    raise DataError(f"fold file {path}, fold {f}: {part} lists graph id "
                                    f"{unknown[0]!r}, which the collection does not have")
                pos = np.array([lookup[str(e)] for e in entries], dtype=np.int64)
            else:
                if not all(isinstance(e, int) and not isinstance(e, bool) for e in entries):
                    raise DataError(f"fold file {path}, fold {f}: {part} must list graph "
                                    f"positions (integers); set fold_index = \"id\" for ids")
                pos = np.array(entries, dtype=np.int64)
                bad = pos[(pos < 0) | (pos >= g)]
                if bad.size:
                    raise DataError(f"fold file {path}, fold {f}: {part} position "
                                    f"{int(bad[0])} is out of range (0..{g - 1})")
            uniq, counts = np.unique(pos, return_counts=True)
            if (counts > 1).any():
                raise DataError(f"fold file {path}, fold {f}: {part} lists graph "
                                f"{int(uniq[counts > 1][0])} more than once")
            parts.append(torch.from_numpy(pos))
        both = np.intersect1d(parts[0].numpy(), parts[1].numpy())
        if both.size:
            raise DataError(f"fold file {path}, fold {f}: graph {int(both[0])} is in both "
                            f"train and test (overlapping entries)")
        if parts[1].numel() == 0 or parts[0].numel() == 0:
            raise DataError(f"fold file {path}, fold {f}: train and test must not be empty")
        out.append((parts[0], parts[1]))
    return out
