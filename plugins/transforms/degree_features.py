"""The ``degree_features`` transform: one-hot node degrees as (or added to) the features."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.graphs.features import degree_one_hot
from graphflow.options import option


@dataclass
class DegreeFeaturesOptions:
    max_degree: int | None = option(
        None, "Degrees above this share the last column (default: the largest degree).")
    append: bool = option(False, "Append to the existing features instead of replacing them.")

    def __post_init__(self) -> None:
        if self.max_degree is not None and self.max_degree < 0:
            raise ValueError(f"max_degree must be >= 0, got {self.max_degree}")


class DegreeFeatures(Transform):
    """One-hot in-degree features (the GIN paper's input for the social sets, which have no
    node features): ``ndata["feat"]`` becomes (N, D + 1), or gains D + 1 columns with
    ``append``. Works on single graphs and on collections (the node set is unchanged)."""

    name = "degree_features"
    summary = "One-hot node degrees as node features (replace or append)"
    Options = DegreeFeaturesOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        out = data.with_graph(data.graph.clone())
        deg = degree_one_hot(out.graph.in_degrees(), self.options.max_degree)  # (N, D + 1)
        old = out.graph.ndata.get("feat")
        out.graph.ndata["feat"] = torch.cat([old.float(), deg], 1) \
            if self.options.append and old is not None else deg
        return out
