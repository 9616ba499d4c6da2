"""The ``self_loops`` transform: give every node one self-loop, or remove them all."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow_plugins.transforms.rebuild import with_edges, with_typed_edges


@dataclass
class SelfLoopsOptions:
    mode: Literal["add", "remove"] = option("add", "add: a loop on every node that has none; "
                                                   "remove: drop every loop.")
    fill: float = option(1.0, "Weight of added loops (other edge data: 0).")
    relations: list[str] = option(
        [], "Typed graphs: the relations to change (names), each joining a node type to "
            "itself; empty: every such relation.")


def loops(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, mode: str
          ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """New edges ``(src, dst, source)`` of one relation (see ``rebuild.with_edges``): with a
    loop added on every node that has none, or with every loop removed."""
    loop = src == dst
    if mode == "remove":
        keep = torch.nonzero(~loop).squeeze(1)
        return src[keep], dst[keep], keep
    has = torch.zeros(num_nodes, dtype=torch.bool)
    has[src[loop]] = True
    nodes = torch.nonzero(~has).squeeze(1)
    source = torch.cat([torch.arange(len(src)), torch.full((len(nodes),), -1)])
    return torch.cat([src, nodes]), torch.cat([dst, nodes]), source


class SelfLoops(Transform):
    """Add a self-loop to each node that lacks one (existing loops keep their data), or
    remove all self-loops. Added loops come after the existing edges. On a typed graph: in
    each relation whose two ends are one node type (or those named in ``relations``)."""

    name = "self_loops"
    summary = "Add one self-loop per node (keeping existing ones) or remove them all"
    Options = SelfLoopsOptions
    typed = True

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        if data.is_typed:
            return self._typed(data)
        if o.relations:
            raise DataError("self_loops: relations is for typed graphs; this graph has one "
                            "relation: leave relations out")
        if o.mode == "remove":
            return data.with_graph(dgl.remove_self_loop(data.graph))  # data follow the edges
        src, dst = data.graph.edges()
        s, d, source = loops(src, dst, data.num_nodes, "add")
        return with_edges(data, s, d, source, fill={"weight": o.fill})

    def _typed(self, data: GraphData) -> GraphData:
        o = self.options
        g = data.graph
        same = [c for c in g.canonical_etypes if c[0] == c[2]]
        chosen = same
        if o.relations:
            names = {c[1] for c in g.canonical_etypes}
            for rel in o.relations:
                if rel not in names:
                    raise DataError(f'self_loops: relation "{rel}" is not in the graph; '
                                    f"relations: {', '.join(sorted(names))}")
                if not any(c[1] == rel for c in same):
                    ends = next(c for c in g.canonical_etypes if c[1] == rel)
                    raise DataError(f'self_loops: relation "{rel}" joins {ends[0]} to '
                                    f"{ends[2]}; a self-loop needs both ends of one type")
            chosen = [c for c in same if c[1] in o.relations]
        if not chosen:
            raise DataError("self_loops: no relation of the graph joins a node type to itself; "
                            "remove the transform")
        changes = {}
        for c in chosen:  # over relations
            src, dst = g.edges(etype=c)
            changes[c] = loops(src, dst, g.num_nodes(c[0]), o.mode)
        return with_typed_edges(data, changes, fill={"weight": o.fill})
