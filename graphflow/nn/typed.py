r"""Typed (heterogeneous) graphs for message passing: one CSR per relation, and the inputs.

* :class:`TypedAdjacency`: a :class:`~graphflow.sparse.Adjacency` per canonical relation
  ``(src_type, relation, dst_type)``, rows = destinations of ``dst_type``, columns = sources of
  ``src_type``. It covers a full heterograph (every type's nodes are both sources and
  destinations) or one layer of sampled typed blocks (DGL ``to_block`` convention: per type,
  the destinations are the first ``num_dst[type]`` sources).
* :class:`TypedSchema`: what a typed model is built for (types, relations, node counts and the
  input width of each type, None for a featureless type).
* :class:`TypedInput`: the per-type input layer: a ``Linear`` per featured type (when widths
  differ, or when asked), an ``nn.Embedding`` per featureless type.

Typed models take ``(adj, x)`` with ``adj`` a :class:`TypedAdjacency` (full graph) or a list of
them (one per layer, input side first) and ``x: dict[str, Tensor]`` (per node type: float
features (n_src[t], F_t), or int64 node ids (n_src[t],) of a featureless type, looked up in its
embedding), and return ``dict[str, Tensor]`` per destination type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import torch
from torch import nn

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.sparse import Adjacency

Relation = tuple[str, str, str]


class TypedAdjacency:
    """Per-relation CSRs of a typed graph or of one layer of typed blocks.

    :ivar rels: canonical relation -> :class:`Adjacency` (num_dst[dst type] x num_src[src type]).
    :ivar num_src: node type -> source nodes of that type.
    :ivar num_dst: node type -> destination nodes of that type (the first ``num_dst[t]``
        sources of type ``t`` for blocks; all of them for a full graph).
    """

    def __init__(self, rels: Mapping[Relation, Adjacency], num_src: Mapping[str, int],
                 num_dst: Mapping[str, int]):
        self.rels = dict(rels)
        self.num_src = {t: int(n) for t, n in num_src.items()}
        self.num_dst = {t: int(n) for t, n in num_dst.items()}
        self._cache: dict[object, object] = {}

    @classmethod
    def from_graph(cls, g: dgl.DGLGraph, device: torch.device | str | None = None,
                   weight: str | None = None) -> TypedAdjacency:
        """The CSR of each canonical relation of heterograph ``g`` (any number of types).

        :param weight: an edge field holding (E_r,) values on every relation, or None.
        """
        rels = {}
        for rel in g.canonical_etypes:
            src, dst = g.edges(etype=rel)
            values = None
            if weight is not None:
                data = g.edges[rel].data
                if weight not in data:
                    raise DataError(f'edge field "{weight}" is missing on relation {rel}; '
                                    f"it has {sorted(data.keys()) or 'no fields'}")
                values = data[weight]
            rels[rel] = Adjacency.from_edges(src, dst, g.num_nodes(rel[0]), g.num_nodes(rel[2]),
                                             device, values)
        counts = {t: g.num_nodes(t) for t in g.ntypes}
        return cls(rels, counts, counts)

    @property
    def relations(self) -> list[Relation]:
        return list(self.rels)

    @property
    def ntypes(self) -> list[str]:
        return list(self.num_src)

    @property
    def device(self) -> torch.device:
        for adj in self.rels.values():
            return adj.device
        return torch.device("cpu")

    @property
    def nnz(self) -> int:
        return sum(a.nnz for a in self.rels.values())

    def to(self, device: torch.device | str) -> TypedAdjacency:
        """A copy on ``device`` (each relation's CSR moved with its caches)."""
        return TypedAdjacency({r: a.to(device) for r, a in self.rels.items()}, self.num_src,
                              self.num_dst)

    def prefixed(self, rel: Relation) -> Adjacency:
        """Relation ``rel`` as a homogeneous layer sees it: the sources are the destination
        type's ``num_dst`` rows followed by the source type's rows (column ids shifted by
        ``num_dst``), so that "destinations are the first sources" holds for a relation between
        two types; the relation's own CSR when source and destination types agree. Cached."""
        src, _, dst = rel
        adj = self.rels[rel]
        if src == dst:
            return adj
        key = ("prefixed", rel)
        out = self._cache.get(key)
        if out is None:
            shift = self.num_dst[dst]
            out = Adjacency(adj.indptr, adj.indices + shift, adj.eids, adj.num_src + shift,
                            adj.num_dst, adj.values)
            self._cache[key] = out
        return out  # type: ignore[return-value]

    def __repr__(self) -> str:
        return (f"TypedAdjacency({len(self.rels)} relations, nnz={self.nnz}, "
                f"num_dst={self.num_dst})")


def per_layer(adj: TypedAdjacency | Sequence[TypedAdjacency], layers: int) -> list[TypedAdjacency]:
    """One adjacency per layer: the full graph repeated, or the sampled blocks as given."""
    if isinstance(adj, TypedAdjacency):
        return [adj] * layers
    adjs = list(adj)
    if len(adjs) != layers:
        raise DataError(f"the model has {layers} layers but got {len(adjs)} typed blocks; use "
                        f"one fanout per layer")
    return adjs


@dataclass(frozen=True)
class TypedSchema:
    """What a typed model is built for.

    :ivar ntypes: node types, in the graph's order.
    :ivar relations: canonical relations ``(src_type, relation, dst_type)``.
    :ivar num_nodes: nodes of each type (sizes of the featureless types' embeddings).
    :ivar in_dims: input width of each type, None for a featureless type.
    :ivar sources: per relation, the sorted ids of the nodes with an out-edge of it (the rows a
        one-hot first layer needs), or None when unknown.
    """

    ntypes: tuple[str, ...]
    relations: tuple[Relation, ...]
    num_nodes: dict[str, int]
    in_dims: dict[str, int | None]
    sources: dict[Relation, torch.Tensor] | None = None

    @classmethod
    def of(cls, g: dgl.DGLGraph, feats: Mapping[str, torch.Tensor]) -> TypedSchema:
        """The schema of heterograph ``g`` with input features ``feats`` (types left out of
        ``feats`` are featureless)."""
        return cls(tuple(g.ntypes), tuple(g.canonical_etypes),
                   {t: g.num_nodes(t) for t in g.ntypes},
                   {t: (int(feats[t].shape[1]) if t in feats else None) for t in g.ntypes},
                   {r: torch.unique(g.edges(etype=r)[0]) for r in g.canonical_etypes})


class TypedInput(nn.Module):
    r"""The input layer of a typed model: every node type to one width ``dim``.

    .. math::
        h^{(0)}_v = \begin{cases} x_v W_t + b_t & \text{type } t \text{ has features
        (projected)} \\ x_v & \text{type } t \text{ has features of width dim (not projected)}
        \\ E_t[v] & \text{type } t \text{ is featureless} \end{cases}

    Args:
        schema (TypedSchema): the types, their node counts and input widths.
        dim (int): the common width.
        project (str, default ``"auto"``): ``"auto"`` projects a featured type when its width
            differs from ``dim``; ``"all"`` projects every featured type; ``"none"`` projects
            none (the widths must then all equal ``dim``, else a ``ConfigError``).
        sparse (bool, default False): embeddings with sparse gradients (``nn.Embedding
            (sparse=True)``: only the looked-up rows get a gradient; needs an optimizer that
            takes sparse gradients, e.g. SGD or SparseAdam).

    Shapes:
        - input: ``x[t]`` float (n_t, F_t) or, for a featureless type, int64 (n_t,) node ids
        - output: ``h[t]`` (n_t, dim)
    """

    def __init__(self, schema: TypedSchema, dim: int, project: str = "auto",
                 sparse: bool = False):
        super().__init__()
        if project not in ("auto", "all", "none"):
            raise ConfigError(f'project must be "auto", "all" or "none", got "{project}"')
        featured = {t: d for t, d in schema.in_dims.items() if d is not None}
        if project == "none":
            wrong = {t: d for t, d in featured.items() if d != dim}
            if wrong:
                raise ConfigError(
                    f"node types have input widths {wrong} but the model's width is {dim} and "
                    f'project = "none"; set project = "auto" (a Linear per type) or give every '
                    f"type {dim} features")
        self.dim = dim
        self.proj = nn.ModuleDict({
            t: nn.Linear(d, dim) for t, d in featured.items()
            if project == "all" or (project == "auto" and d != dim)})
        self.emb = nn.ModuleDict({
            t: nn.Embedding(schema.num_nodes[t], dim, sparse=sparse)
            for t, d in schema.in_dims.items() if d is None})
        for e in self.emb.values():
            nn.init.xavier_uniform_(e.weight)  # O(1/sqrt(dim)) rows, like a Linear's output

    def forward(self, x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        out = {}
        for t, v in x.items():
            if t in self.emb:
                if v.is_floating_point():
                    raise DataError(f"node type {t!r} was featureless when the model was built "
                                    f"but now has features; rebuild the model")
                out[t] = self.emb[t](v)  # (n_t, dim)
            elif not v.is_floating_point():
                raise DataError(f"node type {t!r} had features when the model was built but "
                                f"now comes as node ids (featureless)")
            elif t in self.proj:
                out[t] = self.proj[t](v)  # (n_t, dim)
            else:
                if v.shape[1] != self.dim:
                    raise DataError(f"node type {t!r} has {v.shape[1]} features but the model "
                                    f"expects {self.dim}")
                out[t] = v
        return out

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def full_input(g: dgl.DGLGraph, feats: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """The model input of a full graph: each type's features, or ``arange(n_t)`` ids for a
    featureless type."""
    return {t: feats[t] if t in feats else torch.arange(g.num_nodes(t)) for t in g.ntypes}
