"""``[train] type = "graph_classification"``: predict one class (or several 0/1 targets) per
graph of a collection."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

from graphflow.graphs.collection import GraphCollection
from graphflow.graphs.model import GraphModel
from graphflow.graphs.objective import GraphObjective, TargetKind
from graphflow.graphs.task import GraphTask, GraphTaskOptions
from graphflow.options import option
from graphflow.train.balance import CLASS_WEIGHTS_HELP, ClassWeights, balanced


@dataclass
class GraphClassificationOptions(GraphTaskOptions):
    class_weights: ClassWeights = option("none", CLASS_WEIGHTS_HELP)


class GraphClassification(GraphTask):
    """Graph classification: the ``[model]`` encodes the nodes, a readout pools each graph,
    a linear head scores it (:mod:`graphflow.graphs.task` has the protocols).

    Class labels (int64, one per graph) train with cross-entropy and report ``acc``,
    ``f1_macro`` and, for two classes, ``roc_auc``. Float 0/1 targets (G, T), NaN = missing
    (multi-task molecule sets), train with binary cross-entropy over the present entries and
    report the mean ``roc_auc`` over tasks. ``class_weights = "balanced"`` weighs rare classes
    (or each task's positives) up, from each training split's labels. Results: ``train_*``,
    ``val_*``, ``test_*`` (one split) or ``cv_gin_*`` and ``cv_strict_*`` with each fold in
    run.json's reports (folds); per-graph ``predictions``, ``logits`` and ``embeddings`` (the
    read-out vectors) as artifacts, exported with the graph ids.
    """

    name = "graph_classification"
    summary = "Train the [model] + a readout to classify whole graphs (folds, GIN protocol)"
    Options = GraphClassificationOptions
    options: GraphClassificationOptions

    def _kind(self, graphs: GraphCollection) -> TargetKind:
        return "binary" if graphs.regression else "classes"

    def _fold_objective(self, objective: GraphObjective, train_labels: torch.Tensor,
                        model: GraphModel) -> GraphObjective:
        if self.options.class_weights == "none":
            return objective
        return replace(objective, weight=balanced(train_labels, objective.out_dim))
