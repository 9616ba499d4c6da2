"""The ``dedup`` transform: keep one edge per (source, target) pair."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.io.edge_keys import first_occurrences_with_slots
from graphflow.options import option
from graphflow_plugins.transforms.rebuild import with_edges


@dataclass
class DedupOptions:
    weights: Literal["first", "sum", "max"] = option(
        "first", "The kept edge's weight: the first duplicate's, their sum or their max.")


class Dedup(Transform):
    """Remove parallel edges: the first edge of each (source, target) pair stays, in its
    original position. Its weight is the first one's, or the sum / max over the pair's
    edges; other edge data are the first edge's."""

    name = "dedup"
    summary = "Remove duplicate edges (weights: first, sum or max)"
    Options = DedupOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        src, dst = data.graph.edges()
        keep, slot = first_occurrences_with_slots(src * data.num_nodes + dst)
        out = with_edges(data, src[keep], dst[keep], keep)
        how = self.options.weights
        if how != "first" and "weight" in data.graph.edata and len(keep) < len(src):
            weight = data.graph.edata["weight"]
            merged = torch.zeros(len(keep), dtype=weight.dtype) if how == "sum" else \
                torch.full((len(keep),), float("-inf"), dtype=weight.dtype)
            merged.scatter_reduce_(0, slot, weight, reduce="sum" if how == "sum" else "amax")
            out.graph.edata["weight"] = merged
        return out
