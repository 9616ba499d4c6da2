"""``[train] type = "graph_classification"``: predict one class (or several 0/1 targets) per
graph of a collection."""

from __future__ import annotations

from graphflow.graphs.collection import GraphCollection
from graphflow.graphs.objective import TargetKind
from graphflow.graphs.task import GraphTask


class GraphClassification(GraphTask):
    """Graph classification: the ``[model]`` encodes the nodes, a readout pools each graph,
    a linear head scores it (:mod:`graphflow.graphs.task` has the protocols).

    Class labels (int64, one per graph) train with cross-entropy and report ``acc``,
    ``f1_macro`` and, for two classes, ``roc_auc``. Float 0/1 targets (G, T), NaN = missing
    (multi-task molecule sets), train with binary cross-entropy over the present entries and
    report the mean ``roc_auc`` over tasks. Results: ``train_*``, ``val_*``, ``test_*`` (one
    split) or ``cv_gin_*`` and ``cv_strict_*`` with each fold in run.json's reports (folds);
    per-graph ``predictions``, ``logits`` and ``embeddings`` (the read-out vectors) as
    artifacts, exported with the graph ids.
    """

    name = "graph_classification"
    summary = "Train the [model] + a readout to classify whole graphs (folds, GIN protocol)"

    def _kind(self, graphs: GraphCollection) -> TargetKind:
        return "binary" if graphs.regression else "classes"
