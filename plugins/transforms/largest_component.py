"""The ``largest_component`` transform: keep the largest (weakly) connected component."""

from __future__ import annotations

import numpy as np
import torch
from scipy.sparse.csgraph import connected_components

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow_plugins.transforms.rebuild import adjacency, with_nodes


class LargestComponent(Transform):
    """Keep the nodes of the largest weakly connected component and the edges among them.

    Nodes keep their relative order; node data, edge data and original ids follow. Ties go
    to the component of the lowest node id.
    """

    name = "largest_component"
    summary = "Keep the largest weakly connected component (ids and data follow)"

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        count, component = connected_components(adjacency(data), directed=True,
                                                connection="weak")
        if count <= 1:
            return data
        sizes = np.bincount(component)
        keep = np.flatnonzero(component == np.argmax(sizes))
        ctx.info(f"largest_component: keeping {len(keep):,} of {data.num_nodes:,} nodes "
                 f"({count:,} components)")
        return with_nodes(data, torch.from_numpy(keep.astype(np.int64)))
