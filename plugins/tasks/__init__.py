"""Plugin "tasks": training tasks (``[train] type = ...``)."""

from graphflow.plugin import hookimpl
from graphflow_plugins.tasks.graph_classification import GraphClassification
from graphflow_plugins.tasks.graph_regression import GraphRegression
from graphflow_plugins.tasks.kg_completion import KgCompletion
from graphflow_plugins.tasks.link_prediction import LinkPrediction
from graphflow_plugins.tasks.node_classification import NodeClassification
from graphflow_plugins.tasks.predict import Predict, replay_fitted_state
from graphflow_plugins.tasks.sparsify import Sparsify


@hookimpl
def graphflow_register_tasks(register):
    register(NodeClassification)
    register(Sparsify)
    register(LinkPrediction)
    register(GraphClassification)
    register(GraphRegression)
    register(Predict)
    register(KgCompletion)


@hookimpl
def graphflow_stage_end(ctx, stage, seconds):
    """After [load]: a pipeline that predicts with a bundle gets its fitted transform
    state, which the transforms apply instead of refitting."""
    if stage.kind == "loader":
        replay_fitted_state(ctx)
