"""The result of every explanation method: importances of edges and features per target."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import torch


@dataclass
class Explanation:
    """Importances for ``T`` explained targets (nodes, or a collection's graphs), over their
    computation subgraphs (a graph's: the whole graph).

    Edges are listed per target (an edge in the subgraphs of two targets appears twice, once
    with each target's importance):

    :ivar targets: int64 (T,) the explained nodes (internal ids), graphs (positions in the
        collection) or node pairs (positions in :attr:`GraphInputs.pairs`).
    :ivar target_class: int64 (T,) the class explained (the model's prediction by default).
    :ivar edge_target: int64 (M,) position in ``targets`` of each listed edge.
    :ivar edge_ids: int64 (M,) the graph's edge id (DGL edge id) of each listed edge.
    :ivar edge_mask: float32 (M,) importance of each listed edge (higher: more important).
    :ivar feature_mask: float32 (T, F) importance of each input feature for each target, or
        None when the method gives none.
    :ivar method: the method's name.
    :ivar extra: method-specific figures (e.g. integrated gradients' convergence delta).
    """

    targets: torch.Tensor
    target_class: torch.Tensor
    edge_target: torch.Tensor
    edge_ids: torch.Tensor
    edge_mask: torch.Tensor
    feature_mask: torch.Tensor | None
    method: str
    extra: dict[str, torch.Tensor] = field(default_factory=dict)

    def top_k(self, k: int) -> torch.Tensor:
        """bool (M,): each target's ``k`` most important edges (ties by edge order)."""
        m = self.edge_mask.numel()
        if m == 0:
            return torch.zeros(0, dtype=torch.bool)
        # sort by (target, -importance), then rank within each target
        order = torch.argsort(-self.edge_mask, stable=True)
        order = order[torch.argsort(self.edge_target[order], stable=True)]
        counts = torch.bincount(self.edge_target, minlength=self.targets.numel())
        starts = torch.cumsum(counts, 0) - counts
        rank = torch.empty(m, dtype=torch.int64)
        rank[order] = torch.arange(m) - starts[self.edge_target[order]]
        return rank < k


@dataclass
class GraphInputs:
    """What an explainer reads besides the model: the graph and features the model runs on.

    :ivar adj: the full graph's :class:`~graphflow.sparse.Adjacency` (as the model was
        trained on it: its own edge values, if any), or a collection's.
    :ivar x: float32 (N, F) input features.
    :ivar hops: the model's depth L (a node's computation subgraph spans L hops).
    :ivar graph_ptr: int64 (G + 1,) node offsets of a collection's graphs when the model
        is a graph model (its targets are graphs, each explained over its whole graph);
        None for a node model.
    :ivar embeddings: float32 (N, D) node embeddings computed on the unmasked graph, for
        methods that read them (PGExplainer): a node model's last hidden layer, a graph
        model's node vectors before the read-out; None when the model has no such layer.
    :ivar pairs: int64 (2, P) node pairs of a link model's targets, or None.
    :ivar categorical: ``x`` holds category codes that the model embeds (a molecule's atom
        features through an ``AtomEncoder``), not values: a mask cannot scale them, so
        methods explain the edges only.
    """

    adj: Any
    x: torch.Tensor
    hops: int
    graph_ptr: torch.Tensor | None = None
    embeddings: torch.Tensor | None = None
    pairs: torch.Tensor | None = None
    categorical: bool = False

    @property
    def level(self) -> str:
        """``"graph"`` for a graph model's inputs, ``"link"`` for a link model's (pairs),
        else ``"node"``."""
        if self.pairs is not None:
            return "link"
        return "node" if self.graph_ptr is None else "graph"

    def units(self, targets: torch.Tensor) -> Any:
        """The targets' union (:func:`graphflow.explain.subgraph.make_units`)."""
        from graphflow.explain.subgraph import make_units

        return make_units(self.adj, targets, self.hops, self.graph_ptr, self.pairs)
