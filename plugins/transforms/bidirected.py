"""The ``bidirected`` transform: add the missing reverse of every edge."""

from __future__ import annotations

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.io.edge_keys import first_occurrences
from graphflow_plugins.transforms.rebuild import with_edges


class Bidirected(Transform):
    """For every edge ``u -> v`` whose reverse ``v -> u`` is absent, add ``v -> u`` with the
    same edge data (weight). Existing edges, their order and duplicates are kept; run
    ``dedup`` first for a simple graph."""

    name = "bidirected"
    summary = "Add the reverse of each edge that lacks one (copying its weight)"

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        src, dst = data.graph.edges()
        n = data.num_nodes
        forward = src * n + dst
        missing = ~torch.isin(dst * n + src, forward)  # (E,) reverse absent
        reverse = torch.nonzero(missing).squeeze(1)
        # two edges u->v (duplicates) both lacking v->u: add the reverse once, for the first
        reverse = reverse[first_occurrences(dst[reverse] * n + src[reverse])]
        source = torch.cat([torch.arange(len(src)), reverse])
        return with_edges(data, torch.cat([src, dst[reverse]]), torch.cat([dst, src[reverse]]),
                          source)
