"""The ``normalize_features`` transform: row (L1) or standard (z-score) normalisation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import torch

from graphflow.bundle.fitted import frozen_state, record_state
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


def normalize(feat: torch.Tensor, method: str,
              frozen: dict[str, Any] | None = None) -> tuple[torch.Tensor, dict[str, Any]]:
    """(N, F) features normalised by rows (L1) or columns (z-score), and the fitted state
    (``standard``: per-column mean and std). ``frozen``: a state fitted before (the training
    data's, when predicting) to apply instead of refitting. Zero rows and constant columns
    stay at zero."""
    x = feat.float()
    if frozen is not None and frozen.get("method") != method:
        raise DataError(f'method = "{method}", but the model was trained with method = '
                        f'"{frozen.get("method")}"; use the training pipeline\'s setting')
    state: dict[str, Any] = {"method": method}
    if method == "row":
        norm = x.abs().sum(dim=1, keepdim=True)
        return x / torch.where(norm > 0, norm, torch.ones_like(norm)), state
    if frozen is not None:
        mean = torch.tensor(frozen["mean"], dtype=torch.float32).reshape(1, -1)
        std = torch.tensor(frozen["std"], dtype=torch.float32).reshape(1, -1)
        if mean.shape[1] != x.shape[1]:
            raise DataError(f"the features have {x.shape[1]} columns, but the model was trained "
                            f"on {mean.shape[1]}; load the columns the training data had, in "
                            f"the same order")
    else:
        mean = x.mean(dim=0, keepdim=True)  # (1, F)
        std = x.std(dim=0, unbiased=False, keepdim=True)  # (1, F)
    state.update(mean=mean.reshape(-1).tolist(), std=std.reshape(-1).tolist())
    return (x - mean) / torch.where(std > 0, std, torch.ones_like(std)), state


class NormalizeFeatures(Transform):
    """Normalise ``ndata["feat"]``: rows to unit L1 norm, or columns to zero mean and unit
    variance. All-zero rows and constant columns are left at zero instead of dividing by 0.
    On a typed graph: the features of node type ``node_type``, or of every type that has them.

    ``standard`` fits per-column statistics. On a graph with one node type they are recorded
    with the graph (:mod:`graphflow.bundle.fitted`) and saved in the trained model's bundle;
    when a pipeline predicts with a bundle (``graphflow predict``, ``[train] type =
    "predict"``), the transform applies the training statistics to the new data instead of
    refitting."""

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
            out, state = normalize(feat, o.method, frozen_state(data, self.name))
            result = data.with_graph(g.clone())
            result.graph.ndata["feat"] = out
            record_state(result, self.name, state)
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
            frame["feat"] = normalize(frame["feat"], o.method)[0]
        return result
