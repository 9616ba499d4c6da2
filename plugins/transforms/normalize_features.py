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


class NormalizeFeatures(Transform):
    """Normalise ``ndata["feat"]``: rows to unit L1 norm, or columns to zero mean and unit
    variance. All-zero rows and constant columns are left at zero instead of dividing by 0."""

    name = "normalize_features"
    summary = "Row (L1) or standard (z-score) normalisation of node features"
    Options = NormalizeFeaturesOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        feat = data.graph.ndata.get("feat")
        if feat is None:
            raise DataError("the graph has no node features (ndata['feat']) to normalise")
        x = feat.float()
        if self.options.method == "row":
            norm = x.abs().sum(dim=1, keepdim=True)
            out = x / torch.where(norm > 0, norm, torch.ones_like(norm))
        else:
            mean = x.mean(dim=0, keepdim=True)
            std = x.std(dim=0, unbiased=False, keepdim=True)
            out = (x - mean) / torch.where(std > 0, std, torch.ones_like(std))
        result = data.with_graph(data.graph.clone())
        result.graph.ndata["feat"] = out
        return result
