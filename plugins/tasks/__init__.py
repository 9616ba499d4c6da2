"""Plugin "tasks": training tasks (``[train] type = ...``)."""

from graphflow.plugin import hookimpl
from graphflow_plugins.tasks.link_prediction import LinkPrediction
from graphflow_plugins.tasks.node_classification import NodeClassification
from graphflow_plugins.tasks.sparsify import Sparsify


@hookimpl
def graphflow_register_tasks(register):
    register(NodeClassification)
    register(Sparsify)
    register(LinkPrediction)
