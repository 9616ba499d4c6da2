"""Plugin "transforms": Graph transforms.

One module per transform; each is registered here under its TOML ``type``.
"""

from __future__ import annotations

from graphflow.plugin import hookimpl
from graphflow.registry import Register
from graphflow_plugins.transforms.bidirected import Bidirected
from graphflow_plugins.transforms.dedup import Dedup
from graphflow_plugins.transforms.degree_features import DegreeFeatures
from graphflow_plugins.transforms.hold_out_nodes import HoldOutNodes
from graphflow_plugins.transforms.largest_component import LargestComponent
from graphflow_plugins.transforms.link_split import LinkSplit
from graphflow_plugins.transforms.normalize_features import NormalizeFeatures
from graphflow_plugins.transforms.reorder import Reorder
from graphflow_plugins.transforms.self_loops import SelfLoops
from graphflow_plugins.transforms.node_split import Split


@hookimpl
def graphflow_register_transforms(register: Register) -> None:
    """Register the built-in transforms."""
    for cls in (Bidirected, Dedup, LargestComponent, NormalizeFeatures, Reorder, SelfLoops,
                Split, LinkSplit, DegreeFeatures, HoldOutNodes):
        register(cls)
