"""The public plugin API in one import: what a plugin author needs, and nothing else.

    from graphflow.api import GraphData, Transform, hookimpl, option

    @dataclass
    class MyOptions:
        factor: float = option(1.0, "What the factor does.")

    class MyTransform(Transform):
        name = "my_transform"
        Options = MyOptions

        def apply(self, data: GraphData, ctx) -> GraphData: ...

    @hookimpl
    def graphflow_register_transforms(register):
        register(MyTransform)

Everything here keeps its name and meaning across minor versions; the modules it comes from
(:mod:`graphflow.components`, :mod:`graphflow.options`, ...) are the implementation. See
docs/plugins.md for the hooks and the contract of each component kind.
"""

from __future__ import annotations

from graphflow.capabilities import Refusal, refuses
from graphflow.components import (Component, Exporter, Loader, Model, Sampler, Task, Tracker,
                                  Transform, What)
from graphflow.context import Artifacts, RunContext
from graphflow.errors import (ConfigError, DataError, DeviceError, GraphflowError, NumericalError,
                              PluginError)
from graphflow.graph import GraphData, NodeIds
from graphflow.graphs.collection import GraphCollection
from graphflow.io.atomic import atomic_path, write_text
from graphflow.nn.stack import add_self_loops
from graphflow.options import NoOptions, option
from graphflow.plugin import NAME, hookimpl
from graphflow.sampling.block import Block, MiniBatch
from graphflow.sparse import Adjacency, SparseFeatures, sddmm, spmm, spmm_cat
from graphflow.train.inputs import node_features
from graphflow.train.task import SupervisedOptions, SupervisedTask

__all__ = [
    # hooks
    "NAME", "hookimpl",
    # components and their options
    "Component", "Loader", "Transform", "Sampler", "Model", "Task", "Exporter", "Tracker", "What",
    "SupervisedTask", "SupervisedOptions",
    "Refusal", "refuses",
    "option", "NoOptions",
    # data
    "GraphData", "NodeIds", "GraphCollection", "Block", "MiniBatch", "node_features",
    # the run
    "RunContext", "Artifacts",
    # errors (one readable line each)
    "GraphflowError", "ConfigError", "DataError", "DeviceError", "PluginError",
    "NumericalError",
    # sparse message passing
    "Adjacency", "SparseFeatures", "spmm", "spmm_cat", "sddmm", "add_self_loops",
    # writing outputs
    "atomic_path", "write_text",
]
