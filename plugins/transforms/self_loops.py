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
    fill: float = option(1.0, "Weight of added loops.")
    edge_data: Literal["zeros", "mean"] = option(
        "zeros", "Other edge data of added loops (edge features): zeros, or mean: the mean "
                 "of the node's incoming edges (zeros for a node without any), as PyG's "
                 "fill_value='mean'.")
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
        out = with_edges(data, s, d, source, fill={"weight": o.fill})
        if o.edge_data == "mean":
            incoming_means(out.graph.edata, dst, d[len(dst):], data.num_nodes)
        return out

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
        out = with_typed_edges(data, changes, fill={"weight": o.fill})
        if o.edge_data == "mean" and o.mode == "add":
            for c in chosen:  # over relations
                dst, new_dst = g.edges(etype=c)[1], changes[c][1]
                incoming_means(out.graph.edges[c].data, dst, new_dst[len(dst):],
                               g.num_nodes(c[0]))
        return out


def incoming_means(frame, dst: torch.Tensor, nodes: torch.Tensor, num_nodes: int) -> None:
    """Set the data of the loops added on ``nodes`` (the frame's last ``len(nodes)`` edges,
    after the ``len(dst)`` old ones) to the mean over each node's old incoming edges, for every
    floating-point edge data but ``weight`` (which takes ``fill``)."""
    if not len(nodes):
        return
    count = torch.bincount(dst, minlength=num_nodes).clamp(min=1)[nodes]  # (L,)
    for name in list(frame.keys()):  # over edge data keys
        values = frame[name]
        if name == "weight" or not values.is_floating_point():
            continue
        old = values[: len(dst)]
        total = old.new_zeros((num_nodes, *old.shape[1:])).index_add_(0, dst, old)
        mean = total[nodes] / count.view(-1, *[1] * (old.dim() - 1)).to(old.dtype)
        frame[name] = torch.cat([old, mean])
