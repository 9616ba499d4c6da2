"""Plugin "models": stacks of sparse message-passing layers (``[model] type = ...``).

Each model builds a :class:`graphflow.nn.stack.GNNStack` (one module per model).
"""

from graphflow.plugin import hookimpl
from graphflow_plugins.models.gat import GATModel
from graphflow_plugins.models.gcn import GCNModel
from graphflow_plugins.models.gin import GINModel
from graphflow_plugins.models.gine import GINEModel
from graphflow_plugins.models.hetero import HeteroModel
from graphflow_plugins.models.kge import KGE_MODELS
from graphflow_plugins.models.rgcn import RGCNModel
from graphflow_plugins.models.sage import SAGEModel
from graphflow_plugins.models.sgc import SGCModel

MODELS = (GCNModel, SAGEModel, GATModel, SGCModel, GINModel, GINEModel, RGCNModel, HeteroModel,
          *KGE_MODELS)


@hookimpl
def graphflow_register_models(register):
    for cls in MODELS:
        register(cls)
