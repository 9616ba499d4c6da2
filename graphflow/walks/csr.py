"""The graph as random walks read it: a sorted CSR over out-edges, on the walk device.

A walker at node ``v`` picks one of the out-edges ``indptr[v] .. indptr[v+1]`` (uniformly, or
in proportion to its weight), so the structure is the row-sorted CSR plus, for weighted graphs,
the global exclusive prefix sum of the weights (float64), from which a weighted pick is one
``searchsorted``. For Node2Vec's second-order bias it also holds an :class:`EdgeSet` of the
distinct edges, with the multiplicity (or summed weight) of each.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.sampling.per_row import pointers
from graphflow.walks.edgeset import EdgeSet


@dataclass
class WalkGraph:
    """CSR over out-edges with rows sorted by destination.

    :ivar indptr: int64 (N + 1,) row pointers.
    :ivar indices: int64 (E,) destination of each edge, sorted within each row.
    :ivar cumweight: float64 (E + 1,) exclusive prefix sum of the edge weights in CSR order
        (``cumweight[indptr[v+1]] - cumweight[indptr[v]]`` is ``v``'s out-strength), or None
        for an unweighted graph.
    :ivar edges: distinct edges ``src * N + dst`` with multiplicity (or summed weight), or None
        until :meth:`with_edge_set` builds it (only biased walks need it).
    """

    indptr: torch.Tensor
    indices: torch.Tensor
    cumweight: torch.Tensor | None
    num_nodes: int
    edges: EdgeSet | None = None

    @property
    def num_edges(self) -> int:
        return int(self.indices.numel())

    @property
    def device(self) -> torch.device:
        return self.indices.device

    def out_degrees(self) -> torch.Tensor:
        """int64 (N,) out-degree of each node."""
        return self.indptr[1:] - self.indptr[:-1]

    def in_strength(self) -> torch.Tensor:
        """float64 (N,) summed in-weight (the in-degree when unweighted)."""
        if self.cumweight is None:
            w = torch.ones(self.num_edges, dtype=torch.float64, device=self.device)
        else:
            w = self.cumweight[1:] - self.cumweight[:-1]
        out = torch.zeros(self.num_nodes, dtype=torch.float64, device=self.device)
        return out.index_add_(0, self.indices, w)

    def edge_list(self) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor | None]:
        """``(src, dst, weight)``: int64 (E,), int64 (E,), float64 (E,) or None, in CSR order."""
        src = torch.repeat_interleave(torch.arange(self.num_nodes, device=self.device),
                                      self.out_degrees(), output_size=self.num_edges)
        weight = None if self.cumweight is None else self.cumweight[1:] - self.cumweight[:-1]
        return src, self.indices, weight

    def with_edge_set(self) -> WalkGraph:
        """Build (once) the edge hash set that the biased step queries; returns ``self``."""
        if self.edges is None:
            src, dst, weight = self.edge_list()
            keys = src * self.num_nodes + dst  # (E,) sorted, duplicates adjacent
            uniq, inverse = torch.unique_consecutive(keys, return_inverse=True)
            values = torch.zeros(uniq.numel(), dtype=torch.float64, device=self.device)
            if weight is None:
                weight = torch.ones(keys.numel(), dtype=torch.float64, device=self.device)
            values.index_add_(0, inverse, weight)
            self.edges = EdgeSet(uniq, values.float())
        return self

    def to(self, device: torch.device | str) -> WalkGraph:
        return WalkGraph(
            indptr=self.indptr.to(device), indices=self.indices.to(device),
            cumweight=None if self.cumweight is None else self.cumweight.to(device),
            num_nodes=self.num_nodes,
            edges=None if self.edges is None else self.edges.to(device),
        )

    def to_dgl(self) -> dgl.DGLGraph:
        """The same edges as a CPU DGLGraph (weights in ``edata["weight"]``), for the DGL backend."""
        src, dst, weight = self.edge_list()
        g = dgl.graph((src.cpu(), dst.cpu()), num_nodes=self.num_nodes)
        if weight is not None:
            g.edata["weight"] = weight.float().cpu()
        return g


def from_edges(src: torch.Tensor, dst: torch.Tensor, num_nodes: int,
               weight: torch.Tensor | None = None) -> WalkGraph:
    """Build a :class:`WalkGraph` from COO edges (any order, duplicates kept as multi-edges).

    :param src: / :param dst: int (E,) node ids in ``[0, num_nodes)``.
    :param weight: float (E,) edge weights, already checked finite and >= 0 (as
        :func:`graphflow.sampling.csc.edge_weights` returns them), or None.
    :raises DataError: when a node id lies outside ``[0, num_nodes)``.
    """
    src, dst = src.to(torch.int64), dst.to(torch.int64)
    if src.numel():
        for name, ids in (("source", src), ("destination", dst)):
            lo, hi = int(ids.min()), int(ids.max())
            if lo < 0 or hi >= num_nodes:
                raise DataError(f"walk graph: edge {name} id {lo if lo < 0 else hi} is out of "
                                f"range for {num_nodes} nodes (ids must lie in [0, {num_nodes}))")
    if weight is not None and weight.shape != src.shape:
        raise ValueError(f"from_edges: expected one weight per edge, shape {tuple(src.shape)}, "
                         f"got {tuple(weight.shape)}")
    order = torch.argsort(src * num_nodes + dst)  # (E,) row-major
    src, dst = src[order], dst[order]
    indptr = pointers(torch.bincount(src, minlength=num_nodes))  # (N + 1,)
    cumweight = None
    if weight is not None:
        cumweight = torch.zeros(src.numel() + 1, dtype=torch.float64, device=src.device)
        torch.cumsum(weight.to(torch.float64)[order], 0, out=cumweight[1:])
    return WalkGraph(indptr=indptr, indices=dst, cumweight=cumweight, num_nodes=num_nodes)
