"""The ``normalize_features`` transform: row (L1) or standard (z-score) normalisation."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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


class NormalizeFeatures(Transform):
    """Normalise ``ndata["feat"]``: rows to unit L1 norm, or columns to zero mean and unit
    variance. All-zero rows and constant columns are left at zero instead of dividing by 0.

    ``standard`` fits per-column statistics. They are recorded with the graph
    (:mod:`graphflow.bundle.fitted`) and saved in the trained model's bundle; when a
    pipeline predicts with a bundle (``graphflow predict``, ``[train] type = "predict"``),
    the transform applies the training statistics to the new data instead of refitting."""

    name = "normalize_features"
    summary = "Row (L1) or standard (z-score) normalisation of node features"
    Options = NormalizeFeaturesOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        feat = data.graph.ndata.get("feat")
        if feat is None:
            raise DataError("the graph has no node features (ndata['feat']) to normalise")
        x = feat.float()
        method = self.options.method
        frozen = frozen_state(data, self.name)  # the training statistics, when predicting
        if frozen is not None and frozen.get("method") != method:
            raise DataError(f'method = "{method}", but the model was trained with method = '
                            f'"{frozen.get("method")}"; use the training pipeline\'s setting')
        state: dict[str, object] = {"method": method}
        if method == "row":
            norm = x.abs().sum(dim=1, keepdim=True)
            out = x / torch.where(norm > 0, norm, torch.ones_like(norm))
        else:
            if frozen is not None:
                mean = torch.tensor(frozen["mean"], dtype=torch.float32).reshape(1, -1)
                std = torch.tensor(frozen["std"], dtype=torch.float32).reshape(1, -1)
                if mean.shape[1] != x.shape[1]:
                    raise DataError(f"the features have {x.shape[1]} columns, but the model "
                                    f"was trained on {mean.shape[1]}; load the columns the "
                                    f"training data had, in the same order")
            else:
                mean = x.mean(dim=0, keepdim=True)  # (1, F)
                std = x.std(dim=0, unbiased=False, keepdim=True)  # (1, F)
            state.update(mean=mean.reshape(-1).tolist(), std=std.reshape(-1).tolist())
            out = (x - mean) / torch.where(std > 0, std, torch.ones_like(std))
        result = data.with_graph(data.graph.clone())
        result.graph.ndata["feat"] = out
        record_state(result, self.name, state)
        return result
