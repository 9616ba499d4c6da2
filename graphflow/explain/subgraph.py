"""What an explanation masks: the targets' computation subgraphs, as one disjoint union.

* :func:`computation_graphs`: node targets, each with its L-hop computation subgraph;
* :func:`member_graphs`: graph targets (members of a collection), each with its whole graph;
* :func:`pair_graphs`: node pairs of a link model, each with the union of both endpoints'
  L-hop computation subgraphs;
* :func:`make_units`: any of them, from the full graph and the targets.

Both give the same interface (``node``, ``node_target``, ``edge_ids``, ``edge_target``,
``edge_src`` / ``edge_dst``, ``adjacency(weight)`` and ``outputs(model, adj, x) -> (B, C)``),
so every method explains node and graph models with one code path.

For node targets:

Copy ``b`` of the union holds target ``b``'s L-hop in-neighbourhood: every in-edge of every
node within ``L - 1`` hops of it (all a depth-``L`` message-passing model reads to compute
the target's output). Each copy has its own edges, so a per-edge mask over the union is one
independent mask per target, optimised or differentiated together in one forward pass: the
model sees the edge weights as :class:`~graphflow.sparse.Adjacency` values, never a dense
matrix.

The union's adjacency carries the *full graph's* degrees of its nodes (and a self-looped
twin with the degrees of the self-looped full graph, where a layer stack adds self-loops),
so that a degree-normalised layer computes on the union exactly what it computes on the
whole graph: the target's output is bit-for-bit the full-graph output (up to summation
order).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from graphflow.nn.stack import add_self_loops
from graphflow.sparse import Adjacency


@dataclass
class ComputationGraphs:
    """The disjoint union of the targets' computation subgraphs.

    :ivar targets: int64 (B,) target nodes (graph ids).
    :ivar node: int64 (U,) graph node of each union node.
    :ivar node_target: int64 (U,) copy (target position) of each union node.
    :ivar target_node: int64 (B,) union id of each target.
    :ivar edge_ids: int64 (Eu,) graph edge id of each union edge.
    :ivar edge_target: int64 (Eu,) copy of each union edge.
    :ivar edge_value: float (Eu,) the graph's own edge value, or None.
    """

    targets: torch.Tensor
    node: torch.Tensor
    node_target: torch.Tensor
    target_node: torch.Tensor
    edge_ids: torch.Tensor
    edge_target: torch.Tensor
    edge_value: torch.Tensor | None
    _src: torch.Tensor
    _dst: torch.Tensor
    _in_deg: torch.Tensor
    _out_deg: torch.Tensor
    _loop_in_deg: torch.Tensor
    _loop_out_deg: torch.Tensor
    _loops: torch.Tensor  # union nodes that get a self-loop in the looped twin
    _templates: tuple[Adjacency, Adjacency] | None = None
    _loop_order: torch.Tensor | None = None

    @property
    def num_nodes(self) -> int:
        return int(self.node.numel())

    @property
    def num_edges(self) -> int:
        return int(self.edge_ids.numel())

    @property
    def edge_src(self) -> torch.Tensor:
        """int64 (Eu,) union source node of each union edge."""
        return self._src

    @property
    def edge_dst(self) -> torch.Tensor:
        """int64 (Eu,) union destination node of each union edge."""
        return self._dst

    def outputs(self, model: Any, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
        """(B, C) the node model's outputs at the targets, on the union ``adj`` with the
        union nodes' features ``x`` (U, F)."""
        return model(adj, x)[self.target_node]

    def adjacency(self, weight: torch.Tensor | None = None) -> Adjacency:
        """The union's adjacency with edge values ``weight`` (Eu,) in union edge order (times
        the graph's own values), full-graph degrees, and its self-looped twin (loops of
        value 1) ready for a stack that adds self-loops.

        The CSR structure, degrees and degree scales are built on the first call and shared
        by later ones: an optimisation loop pays only for permuting its weights."""
        values = weight
        if self.edge_value is not None:
            values = self.edge_value if weight is None else weight * self.edge_value
        if self._templates is None:
            self._templates = self._build_templates()
        plain, looped = self._templates
        adj = _with_values(plain, None if values is None else values[plain.eids])
        lvalues = None
        if values is not None:
            lvalues = torch.cat([values, values.new_ones(self._loops.numel())])[self._loop_order]
        twin = _with_values(looped, lvalues)
        twin._cache["self_loops"] = twin
        adj._cache["self_loops"] = twin
        return adj

    def _build_templates(self) -> tuple[Adjacency, Adjacency]:
        u, loops = self.num_nodes, self._loops
        plain = Adjacency.from_edges(self._src, self._dst, u, u)
        plain._cache["in_deg"], plain._cache["out_deg"] = self._in_deg, self._out_deg
        looped = Adjacency.from_edges(torch.cat([self._src, loops]),
                                      torch.cat([self._dst, loops]), u, u)
        self._loop_order = looped.eids  # CSR entry -> position in (union edges, loops)
        looped.eids = torch.cat([torch.arange(self.num_edges),
                                 torch.full_like(loops, -1)])[looped.eids]
        looped._cache["in_deg"] = self._loop_in_deg
        looped._cache["out_deg"] = self._loop_out_deg
        for a in (plain, looped):  # warm the structure every layer reads
            a.row_index
            a.transposed()
            a.norm("sym")
            a.norm("row")
        return plain, looped


_VALUE_KEYS = ("norm", "t_values", "self_loops", "ones")


def _with_values(template: Adjacency, values: torch.Tensor | None) -> Adjacency:
    """A new adjacency with ``template``'s structure, edge features and structural cache,
    and ``values`` (CSR order)."""
    out = Adjacency(template.indptr, template.indices, template.eids, template.num_src,
                    template.num_dst, values, template.edge_feat)
    for key, value in template._cache.items():
        head = key[0] if isinstance(key, tuple) else key
        if head not in _VALUE_KEYS:
            out._cache[key] = value
    return out


def _in_neighbourhoods(adj: Adjacency, seed_copy: torch.Tensor, seed_node: torch.Tensor,
                       hops: int) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """``(keys, pos, copy)``: the ``hops``-hop in-neighbourhood of each copy's seeds (copy
    ``seed_copy[i]`` holds seed ``seed_node[i]``; a copy may have several), as the sorted
    keys ``copy * N + node`` of its nodes, and the CSR positions and copies of its edges
    (every in-edge of every node within ``hops - 1`` hops of a seed). One pass per hop over
    every copy at once."""
    n = adj.num_dst
    seen = torch.unique(seed_copy * n + seed_node)  # (S,) keys copy * N + node
    f_b, f_node = seen // n, seen % n
    pos_parts, b_parts = [], []
    for _ in range(hops):  # one pass per layer, over all copies at once
        start, stop = adj.indptr[f_node], adj.indptr[f_node + 1]
        deg = stop - start  # (F,)
        eb = torch.repeat_interleave(f_b, deg)  # (Ef,)
        offset = torch.arange(int(deg.sum())) - torch.repeat_interleave(
            torch.cumsum(deg, 0) - deg, deg)
        pos = torch.repeat_interleave(start, deg) + offset  # (Ef,) CSR positions
        pos_parts.append(pos)
        b_parts.append(eb)
        key = torch.unique(eb * n + adj.indices[pos])
        new = key[~torch.isin(key, seen)]
        seen = torch.cat([seen, new])
        f_b, f_node = new // n, new % n
    keys = torch.sort(seen).values  # (U,) union nodes, grouped by copy
    pos = torch.cat(pos_parts) if pos_parts else torch.zeros(0, dtype=torch.int64)
    eb = torch.cat(b_parts) if b_parts else torch.zeros(0, dtype=torch.int64)
    return keys, pos, eb


def _union_fields(adj: Adjacency, keys: torch.Tensor, pos: torch.Tensor,
                  eb: torch.Tensor) -> dict[str, Any]:
    """The fields of :class:`ComputationGraphs` for the union of :func:`_in_neighbourhoods`
    (its nodes, edges, full-graph degrees and the nodes that get a self-loop)."""
    n = adj.num_dst
    rows = adj.row_index  # (nnz,) destination of each CSR entry
    src = torch.searchsorted(keys, eb * n + adj.indices[pos])
    dst = torch.searchsorted(keys, eb * n + rows[pos])
    node = keys % n
    looped_full = add_self_loops(adj)
    has_loop = torch.zeros(n, dtype=torch.bool)
    has_loop[rows[rows == adj.indices]] = True
    loops = (~has_loop[node]).nonzero().squeeze(1)
    return dict(node=node, node_target=keys // n, edge_ids=adj.eids[pos], edge_target=eb,
                edge_value=None if adj.values is None else adj.values[pos],
                _src=src, _dst=dst, _in_deg=adj.in_degrees()[node],
                _out_deg=adj.out_degrees()[node],
                _loop_in_deg=looped_full.in_degrees()[node],
                _loop_out_deg=looped_full.out_degrees()[node], _loops=loops)


def computation_graphs(adj: Adjacency, targets: torch.Tensor, hops: int) -> ComputationGraphs:
    """The union of the ``hops``-hop computation subgraphs of ``targets`` in the full graph
    ``adj`` (square, rows = destinations), vectorised over targets: one pass per hop."""
    n = adj.num_dst
    targets = targets.to(torch.int64)
    b_all = torch.arange(targets.numel())
    keys, pos, eb = _in_neighbourhoods(adj, b_all, targets, hops)
    return ComputationGraphs(targets=targets,
                             target_node=torch.searchsorted(keys, b_all * n + targets),
                             **_union_fields(adj, keys, pos, eb))


@dataclass
class PairGraphs(ComputationGraphs):
    """Node pairs scored by a link model, each with its computation subgraph: the union of
    both endpoints' L-hop in-neighbourhoods (what the encoder reads to embed the two
    endpoints), one copy per pair in a disjoint union.

    ``targets`` are the pairs' positions (in the ``pairs`` the union was cut for),
    ``src_node`` / ``dst_node`` (B,) the union ids of each pair's endpoints (``target_node``
    is ``src_node``). :meth:`outputs` is the pair's decoder score ``s`` as two-class logits
    ``(0, s)``: their softmax is ``(1 - σ(s), σ(s))``, so the cross-entropy of the predicted
    class (link when ``s > 0``) is the binary cross-entropy of ``σ(s)``, and every method
    that explains a class explains the link's probability. Gradient methods attribute the
    score itself (:attr:`score_class`).
    """

    src_node: torch.Tensor | None = None
    dst_node: torch.Tensor | None = None
    score_class: int = 1
    """The class whose logit gradient methods attribute: 1, the decoder's score."""

    def outputs(self, model: Any, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
        """(B, 2) ``(0, s)``: the link model's score ``s = decoder(h_src, h_dst)`` of each
        pair, ``h = model.encoder(adj, x)`` on the union (a
        :class:`~graphflow.linkpred.decoders.LinkModel`)."""
        h = model.encoder(adj, x)  # (U, D)
        s = model.decoder(h[self.src_node], h[self.dst_node])  # (B,)
        return torch.stack([torch.zeros_like(s), s], 1)


def pair_graphs(adj: Adjacency, pairs: torch.Tensor, targets: torch.Tensor,
                hops: int) -> PairGraphs:
    """The union of the computation subgraphs of the pairs ``pairs[:, targets]`` (``pairs``
    int64 (2, P) node ids, ``targets`` (B,) positions in it): copy ``b`` holds every in-edge
    of every node within ``hops - 1`` hops of either endpoint, vectorised over pairs."""
    n = adj.num_dst
    targets = targets.to(torch.int64)
    src, dst = pairs[0, targets].to(torch.int64), pairs[1, targets].to(torch.int64)
    b_all = torch.arange(targets.numel())
    keys, pos, eb = _in_neighbourhoods(adj, torch.cat([b_all, b_all]), torch.cat([src, dst]),
                                       hops)
    src_node = torch.searchsorted(keys, b_all * n + src)
    return PairGraphs(targets=targets, target_node=src_node, src_node=src_node,
                      dst_node=torch.searchsorted(keys, b_all * n + dst),
                      **_union_fields(adj, keys, pos, eb))


@dataclass
class MemberGraphs:
    """Whole graphs of a collection as one block-diagonal union: a graph model's output
    depends on its whole graph, so that is each target's computation subgraph.

    The union's edges are in its CSR order (the order of
    :meth:`graphflow.graphs.batch.GraphBatcher.batch`); the attributes mean what
    :class:`ComputationGraphs`' do, with ``targets`` the graphs' positions in the
    collection and ``ptr`` (B + 1,) the node offsets of the union's graphs.
    """

    targets: torch.Tensor
    node: torch.Tensor
    node_target: torch.Tensor
    edge_ids: torch.Tensor
    edge_target: torch.Tensor
    edge_value: torch.Tensor | None
    ptr: torch.Tensor
    _template: Adjacency
    target_node: None = None

    @property
    def num_nodes(self) -> int:
        return int(self.node.numel())

    @property
    def num_edges(self) -> int:
        return int(self.edge_ids.numel())

    @property
    def edge_src(self) -> torch.Tensor:
        return self._template.indices

    @property
    def edge_dst(self) -> torch.Tensor:
        return self._template.row_index

    def adjacency(self, weight: torch.Tensor | None = None) -> Adjacency:
        """The union's adjacency with edge values ``weight`` (Eu,) (times the collection's
        own values), sharing the structure and its cache between calls."""
        values = weight
        if self.edge_value is not None:
            values = self.edge_value if weight is None else weight * self.edge_value
        return _with_values(self._template, values)

    def outputs(self, model: Any, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
        """(B, C) the graph model's scores of the union's graphs (``model(batch)[0]``)."""
        from graphflow.graphs.batch import GraphBatch

        return model(GraphBatch(adj=adj, x=x, ptr=self.ptr, graphs=self.targets,
                                nodes=self.node))[0]


def member_graphs(adj: Adjacency, graph_ptr: torch.Tensor,
                  targets: torch.Tensor) -> MemberGraphs:
    """The union of the collection's graphs ``targets`` (positions, int64 (B,)), cut from
    the collection's adjacency ``adj`` with node offsets ``graph_ptr`` (G + 1,)."""
    from graphflow.graphs.batch import GraphBatcher

    targets = targets.to(torch.int64)
    batch = GraphBatcher(adj, graph_ptr, torch.zeros(adj.num_dst, 0)).batch(targets)
    template = batch.adj
    template.transposed()  # resolve the lazy transposed CSR once, for every copy
    seg = batch.segment()  # (U,) graph of each union node
    rows = template.row_index
    return MemberGraphs(targets=targets, node=batch.nodes, node_target=seg,
                        edge_ids=template.eids, edge_target=seg[rows],
                        edge_value=template.values, ptr=batch.ptr,
                        _template=_with_values(template, None))


def make_units(adj: Adjacency, targets: torch.Tensor, hops: int,
               graph_ptr: torch.Tensor | None = None,
               pairs: torch.Tensor | None = None) -> ComputationGraphs | MemberGraphs:
    """The targets' union: their ``hops``-hop computation subgraphs (node targets), or,
    with a collection's ``graph_ptr``, their whole graphs (graph targets), or, with node
    ``pairs`` (2, P), the pairs ``pairs[:, targets]``' subgraphs (:func:`pair_graphs`)."""
    if pairs is not None:
        return pair_graphs(adj, pairs, targets, hops)
    if graph_ptr is not None:
        return member_graphs(adj, graph_ptr, targets)
    return computation_graphs(adj, targets, hops)
