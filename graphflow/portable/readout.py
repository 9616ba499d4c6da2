r"""Portable twin of a graph-level model (:class:`graphflow.graphs.model.GraphModel`) in eval
mode: a collection of graphs in, one score vector per graph out.

:class:`GraphLevelModel` takes ``forward(x, src, dst, weight, graph, num_graphs)``: the
collection's nodes ``x`` (N, F) float32 and raw edges as :class:`~graphflow.portable.stack.
FullGraphModel` takes them (edges never join two graphs), ``graph`` (N,) int64 the graph
position of every node (``0..num_graphs - 1``, in any order) and ``num_graphs`` a 0-d int64
tensor. It returns (num_graphs, C) scores: the node encoder's layers, the readout of every
read-out layer's node vectors (sum, mean, max, gated attention or set2set per graph), and the linear
head :math:`[W_0 \cdots W_L]\,[r_0 \cdots r_L] + \sum_l c_l`.

The per-graph reductions are ``scatter_add`` (ONNX ScatterElements with ``reduction="add"``,
opset 16) and, for max, attention and set2set, ``scatter_reduce`` with ``amax``
(``reduction="max"``, opset 18); set2set's LSTM is ONNX's LSTM.
"""

from __future__ import annotations

from typing import List

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphflow.portable.graph import Edges, full_graph, gather
from graphflow.portable.stack import FullGraphModel


def graph_rows(graph: Tensor, num_graphs: Tensor, width: int, like: Tensor,
               fill: float) -> Tensor:
    """(num_graphs, width) filled with ``fill``, the row count taken from the 0-d tensor
    ``num_graphs`` (so that it stays an input of the exported graph)."""
    rows = torch.arange(num_graphs, dtype=torch.int64, device=graph.device)  # (G,)
    return torch.full_like(rows, fill, dtype=like.dtype).unsqueeze(1).repeat(1, width)


def segment_sum(h: Tensor, graph: Tensor, num_graphs: Tensor) -> Tensor:
    """(N, D) -> (G, D): the sum of each graph's rows."""
    index = graph.unsqueeze(1).expand(-1, h.shape[1])
    return graph_rows(graph, num_graphs, h.shape[1], h, 0.0).scatter_add(0, index, h)


def segment_max(h: Tensor, graph: Tensor, num_graphs: Tensor) -> Tensor:
    """(N, D) -> (G, D): the feature-wise max of each graph's rows (-inf for a graph without
    nodes, as ``torch.segment_reduce``)."""
    index = graph.unsqueeze(1).expand(-1, h.shape[1])
    return graph_rows(graph, num_graphs, h.shape[1], h, float("-inf")).scatter_reduce(
        0, index, h, "amax")


class PortableReadout(nn.Module):
    """One read-out layer: ``pooling`` of (N, D) node vectors into (G, D) graph vectors;
    ``gate`` the attention's ``Linear(D, 1)`` (None for the others)."""

    def __init__(self, pooling: str, gate: nn.Module | None):
        super().__init__()
        self.pooling = pooling
        self.has_gate = gate is not None
        self.gate = gate if gate is not None else nn.Identity()

    def forward(self, h: Tensor, graph: Tensor, num_graphs: Tensor) -> Tensor:
        if self.pooling == "sum":
            return segment_sum(h, graph, num_graphs)
        if self.pooling == "mean":
            ones = torch.ones_like(h[:, :1])  # (N, 1)
            sizes = segment_sum(ones, graph, num_graphs).clamp(min=1.0)  # (G, 1)
            return segment_sum(h, graph, num_graphs) / sizes
        if self.pooling == "max":
            return segment_max(h, graph, num_graphs)
        score = self.gate(h)  # (N, 1)
        top = segment_max(score, graph, num_graphs)  # (G, 1)
        e = torch.exp(score - gather(top, graph))  # (N, 1)
        total = segment_sum(e, graph, num_graphs)  # (G, 1)
        return segment_sum(e / gather(total, graph) * h, graph, num_graphs)


class PortableSet2Set(PortableReadout):
    """The set2set read-out (:func:`graphflow.graphs.readout.set2set`): ``steps`` rounds of
    ``lstm`` (input 2D, hidden D) from zero states, each attending over every graph's rows by
    a per-graph softmax; (N, D) node vectors in, (G, 2D) graph vectors out."""

    def __init__(self, lstm: nn.LSTM, steps: int):
        super().__init__("set2set", None)
        self.lstm = lstm
        self.steps = steps

    def forward(self, h: Tensor, graph: Tensor, num_graphs: Tensor) -> Tensor:
        d = h.shape[1]
        zeros = graph_rows(graph, num_graphs, d, h, 0.0).unsqueeze(0)  # (1, G, D)
        state = (zeros, zeros)
        q_star = graph_rows(graph, num_graphs, 2 * d, h, 0.0)  # (G, 2D)
        for _ in range(self.steps):
            q, state = self.lstm(q_star.unsqueeze(0), state)
            q = q.squeeze(0)  # (G, D)
            score = (h * gather(q, graph)).sum(1, keepdim=True)  # (N, 1)
            top = segment_max(score, graph, num_graphs)  # (G, 1)
            e = torch.exp(score - gather(top, graph))  # (N, 1)
            total = segment_sum(e, graph, num_graphs)  # (G, 1)
            r = segment_sum(e / gather(total, graph) * h, graph, num_graphs)  # (G, D)
            q_star = torch.cat([q, r], dim=1)
        return q_star


class GraphLevelModel(nn.Module):
    """A collection of graphs in, per-graph scores out:
    ``(x, src, dst, weight, graph, num_graphs) -> (num_graphs, C)``."""

    def __init__(self, encoder: FullGraphModel, readouts: list[PortableReadout],
                 read_all: bool, weight: Tensor, bias: Tensor):
        super().__init__()
        self.layers, self.posts = encoder.layers, encoder.posts  # the encoder's twin's parts
        self.readouts = nn.ModuleList(readouts)
        self.read_all = read_all
        self.self_loops = encoder.self_loops
        self.register_buffer("weight", weight.detach().float().clone())  # (C, sum(widths))
        self.register_buffer("bias", bias.detach().float().sum(0))  # (C,)

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, weight: Tensor, graph: Tensor,
                num_graphs: Tensor) -> Tensor:
        return self.scores(x, full_graph(x, src, dst, weight, self.self_loops), graph,
                           num_graphs)

    def scores(self, x: Tensor, g: Edges, graph: Tensor, num_graphs: Tensor) -> Tensor:
        """(num_graphs, C): the layers on ``g``, the read-outs and the head."""
        graph = graph.to(torch.int64)
        outs: List[Tensor] = [x] if self.read_all else []
        h = x
        for layer, post in zip(self.layers, self.posts):
            h = post(layer(h, g), h)  # (N, d_{l+1})
            if self.read_all:
                outs.append(h)
        if not self.read_all:
            outs = [h]
        pooled: List[Tensor] = []
        i = 0
        for readout in self.readouts:
            pooled.append(readout(outs[i], graph, num_graphs))
            i += 1
        return F.linear(torch.cat(pooled, dim=1), self.weight, self.bias)  # (G, C)


class EdgeGraphLevelModel(GraphLevelModel):
    """:class:`GraphLevelModel` of a stack that reads edge features (``gine``), which arrive
    as one more input: ``(x, src, dst, weight, edge_feat, graph, num_graphs) -> (G, C)``,
    ``edge_feat`` (E, D) float32, one row per edge in the order of ``src`` and ``dst``."""

    def __init__(self, encoder: FullGraphModel, readouts: list[PortableReadout],
                 read_all: bool, weight: Tensor, bias: Tensor, *, edge_dim: int):
        super().__init__(encoder, readouts, read_all, weight, bias)
        self.edge_dim = edge_dim  # D, the width of edge_feat

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, weight: Tensor,  # type: ignore[override]
                edge_feat: Tensor, graph: Tensor, num_graphs: Tensor) -> Tensor:
        g = full_graph(x, src, dst, weight, self.self_loops, edge_feat)
        return self.scores(x, g, graph, num_graphs)
