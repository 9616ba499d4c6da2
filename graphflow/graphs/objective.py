"""Graph-level targets: their objective and standard units.

The objective of graph-level targets is :class:`graphflow.train.objective.Objective`, the
one every supervised task uses (kinds ``classes``, ``binary``: 0/1 tasks with NaN =
missing, ``regression``: MSE or L1 over the present entries, optionally in standard units);
``GraphObjective`` is its name here. :func:`standard_units` gives a regression head's
per-target shift and scale.
"""

from __future__ import annotations

from typing import Literal

import torch

from graphflow.train.objective import Objective

TargetKind = Literal["classes", "binary", "regression"]
"""The kinds of graph-level targets (graph labels: classes; float (G, T): binary or
regression)."""

GraphObjective = Objective


def standard_units(y: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(mean, std)`` (T,) of float (n, T) targets over their present entries (NaN =
    missing): what :meth:`GraphModel.scale_targets
    <graphflow.graphs.model.GraphModel.scale_targets>` takes. A target without entries gets
    (0, 1); one that does not vary (std at most 1e-6 of its size) keeps a std of 1."""
    present = ~torch.isnan(y)
    count = present.sum(0).clamp(min=1)
    mean = torch.where(present, y, 0.0).sum(0) / count
    std = (torch.where(present, y - mean, 0.0).square().sum(0) / count).sqrt()
    flat = ~(std > 1e-6 * (mean.abs() + 1.0))  # NaN-safe: a NaN std counts as flat
    return mean, torch.where(flat, torch.ones_like(std), std)
