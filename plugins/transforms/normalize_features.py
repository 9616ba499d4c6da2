"""The ``normalize_features`` transform: row (L1) or standard (z-score) normalisation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.options import option


@dataclass
class NormalizeFeaturesOptions:
    method: Literal["row", "standard"] = option(
        "row", "row: divide each row by its sum of absolute values (GCN's preprocessing); "
               "standard: per column, subtract the mean and divide by the standard deviation.")
    node_type: str = option("", "Typed graphs: the node type whose features to normalise; empty: "
                           "every type that has features (each on its own statistics).")


def normalize(feat: torch.Tensor, method: str) -> torch.Tensor:
    """(N, F) features normalised by rows (L1) or columns (z-score); zero rows and constant
    columns stay at zero."""
    x = feat.float()
    if method == "row":
        norm = x.abs().sum(dim=1, keepdim=True)
        return x / torch.where(norm > 0, norm, torch.ones_like(norm))
    mean = x.mean(dim=0, keepdim=True)
    std = x.std(dim=0, unbiased=False, keepdim=True)
    return (x - mean) / torch.where(std > 0, std, torch.ones_like(std))


class NormalizeFeatures(Transform):
    """Normalise ``ndata["feat"]``: rows to unit L1 norm, or columns to zero mean and unit
    variance. All-zero rows and constant columns are left at zero instead of dividing by 0.
    On a typed graph: the features of node type ``type``, or of every type that has them."""

    name = "normalize_features"
    summary = "Row (L1) or standard (z-score) normalisation of node features (per node type)"
    Options = NormalizeFeaturesOptions
    typed = True

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        g = data.graph
        if not data.is_typed:
            if o.node_type:
                raise DataError(f'normalize_features: node_type = "{o.node_type}", but the '
                                f"graph has one node type; leave node_type out")
            feat = g.ndata.get("feat")
            if feat is None:
                raise DataError("the graph has no node features (ndata['feat']) to normalise")
            result = data.with_graph(g.clone())
            result.graph.ndata["feat"] = normalize(feat, o.method)
            return result
        featured = [t for t in g.ntypes if "feat" in g.nodes[t].data]
        if o.node_type:
            if o.node_type not in g.ntypes:
                raise DataError(f'normalize_features: node_type = "{o.node_type}" is not a '
                                f"node type; node types: {', '.join(g.ntypes)}")
            if o.node_type not in featured:
                raise DataError(f'normalize_features: node type "{o.node_type}" has no features; '
                                f"types with features: {', '.join(featured) or 'none'}")
            featured = [o.node_type]
        elif not featured:
            raise DataError("normalize_features: no node type of the graph has features")
        result = data.with_graph(g.clone())
        for ntype in featured:  # over node types
            frame = result.graph.nodes[ntype].data
            frame["feat"] = normalize(frame["feat"], o.method)
        return result
