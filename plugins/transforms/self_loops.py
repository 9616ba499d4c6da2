"""The ``self_loops`` transform: give every node one self-loop, or remove them all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow_plugins.transforms.rebuild import with_edges


@dataclass
class SelfLoopsOptions:
    mode: Literal["add", "remove"] = option("add", "add: a loop on every node that has none; "
                                                   "remove: drop every loop.")
    fill: float = option(1.0, "Weight of added loops (other edge data: 0).")


class SelfLoops(Transform):
    """Add a self-loop to each node that lacks one (existing loops keep their data), or
    remove all self-loops. Added loops come after the existing edges."""

    name = "self_loops"
    summary = "Add one self-loop per node (keeping existing ones) or remove them all"
    Options = SelfLoopsOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        if self.options.mode == "remove":
            return data.with_graph(dgl.remove_self_loop(data.graph))  # data follow the edges
        src, dst = data.graph.edges()
        loop = src == dst
        has = torch.zeros(data.num_nodes, dtype=torch.bool)
        has[src[loop]] = True
        nodes = torch.nonzero(~has).squeeze(1)
        source = torch.cat([torch.arange(len(src)), torch.full((len(nodes),), -1)])
        return with_edges(data, torch.cat([src, nodes]), torch.cat([dst, nodes]), source,
                          fill={"weight": self.options.fill})
