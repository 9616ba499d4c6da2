"""``[train] type = "graph_regression"``: predict one or more numbers per graph."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

import torch

from graphflow.errors import DataError
from graphflow.graphs.collection import GraphCollection
from graphflow.graphs.model import GraphModel
from graphflow.graphs.objective import GraphObjective, TargetKind, standard_units
from graphflow.graphs.task import GraphTask, GraphTaskOptions
from graphflow.options import option


@dataclass
class GraphRegressionOptions(GraphTaskOptions):
    loss: Literal["mse", "l1"] = option("mse", "Training loss: mse or l1 (mean absolute).")
    standardize: bool = option(
        False, "Fit each target in standard units (minus its mean, over its standard "
               "deviation, both from the training graphs; missing entries left out): for "
               "targets far from zero against their spread, or of very different scales. "
               "Scores, figures, exports and the saved model stay in the targets' own units; "
               "the logged loss is in standard units.")


class GraphRegression(GraphTask):
    """Graph regression: the ``[model]`` encodes the nodes, a readout pools each graph, a
    linear head estimates its (G, T) float targets (NaN = missing, left out of the loss and
    the figures), optionally fitted in standard units (``standardize``: the loss is taken on
    ``(s - y) / std``; the head maps back to the targets' units). Reports ``mae`` and
    ``rmse`` (``val_mae`` picks the best model by default); with folds, ``cv_gin_mae``
    (lowest mean test curve) and ``cv_strict_mae``.
    """

    name = "graph_regression"
    summary = "Train the [model] + a readout to predict numbers per graph (MAE, RMSE)"
    Options = GraphRegressionOptions
    options: GraphRegressionOptions

    def _kind(self, graphs: GraphCollection) -> TargetKind:
        if graphs.labels is not None and not graphs.labels.is_floating_point():
            raise DataError("graph_regression needs float targets, the collection has class "
                            "labels; use graph_classification, or a loader's targets = "
                            '"attributes"')
        return "regression"

    def _fold_objective(self, objective: GraphObjective, train_labels: torch.Tensor,
                        model: GraphModel) -> GraphObjective:
        if not self.options.standardize:
            return objective
        # the head fits the training graphs' targets in standard units; scores, figures and
        # the saved model stay in the targets' own units (the task base folds the map into
        # the head when training ends)
        shift, scale = standard_units(train_labels)
        model.scale_targets(shift, scale)
        return replace(objective, scale=scale)
