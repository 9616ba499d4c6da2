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
from graphflow_plugins.transforms.rebuild import with_edges, with_typed_edges


@dataclass
class DedupOptions:
    weights: Literal["first", "sum", "max"] = option(
        "first", "The kept edge's weight: the first duplicate's, their sum or their max.")


def merged_weights(weight: torch.Tensor, keep: torch.Tensor, slot: torch.Tensor,
                   how: str) -> torch.Tensor:
    """The kept edges' weights: the sum or the max over each pair's edges."""
    merged = torch.zeros(len(keep), dtype=weight.dtype) if how == "sum" else \
        torch.full((len(keep),), float("-inf"), dtype=weight.dtype)
    return merged.scatter_reduce_(0, slot, weight, reduce="sum" if how == "sum" else "amax")


class Dedup(Transform):
    """Remove parallel edges: the first edge of each (source, target) pair stays, in its
    original position. Its weight is the first one's, or the sum / max over the pair's
    edges; other edge data are the first edge's. On a typed graph: within each relation."""

    name = "dedup"
    summary = "Remove duplicate edges (weights: first, sum or max; per relation)"
    Options = DedupOptions
    typed = True

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        if data.is_typed:
            return self._typed(data)
        src, dst = data.graph.edges()
        keep, slot = first_occurrences_with_slots(src * data.num_nodes + dst)
        out = with_edges(data, src[keep], dst[keep], keep)
        how = self.options.weights
        if how != "first" and "weight" in data.graph.edata and len(keep) < len(src):
            out.graph.edata["weight"] = merged_weights(data.graph.edata["weight"], keep, slot,
                                                       how)
        return out

    def _typed(self, data: GraphData) -> GraphData:
        g = data.graph
        how = self.options.weights
        changes, merged = {}, {}
        for c in g.canonical_etypes:  # over relations
            src, dst = g.edges(etype=c)
            keep, slot = first_occurrences_with_slots(src * g.num_nodes(c[2]) + dst)
            if len(keep) == len(src):
                continue
            changes[c] = (src[keep], dst[keep], keep)
            if how != "first" and "weight" in g.edges[c].data:
                merged[c] = merged_weights(g.edges[c].data["weight"], keep, slot, how)
        if not changes:
            return data
        out = with_typed_edges(data, changes)
        for c, weight in merged.items():
            out.graph.edges[c].data["weight"] = weight
        return out
