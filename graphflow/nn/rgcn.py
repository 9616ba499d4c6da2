r"""Relational graph convolution (R-GCN), Schlichtkrull et al., "Modeling Relational Data with
Graph Convolutional Networks", ESWC 2018 (https://arxiv.org/abs/1703.06103).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.nn.typed import Relation, TypedAdjacency
from graphflow.sparse import Adjacency, spmm

Regularizer = Literal["basis", "bdd", "none"]
RGCNNorm = Literal["right", "none"]


def relation_weights(weight: torch.Tensor, coeff: torch.Tensor | None, regularizer: str,
                     num_rels: int, num_bases: int, in_dim: int, out_dim: int) -> torch.Tensor:
    r"""The (R, F_in, F_out) relation weights :math:`W_r` of a decomposition.

    * ``"none"``: ``weight`` (R, F_in, F_out) itself;
    * ``"basis"``: :math:`W_r = \sum_b a_{rb} V_b`, ``weight`` = V (B, F_in, F_out), ``coeff`` =
      a (R, B);
    * ``"bdd"``: :math:`W_r = \oplus_b Q_{rb}`, ``weight`` (R, B * F_in/B * F_out/B) holds the
      B diagonal blocks (F_in/B, F_out/B) of each relation, laid out as DGL ``TypedLinear``;
      the block-diagonal matrix is assembled for the product (R * F_in * F_out values).
    """
    if regularizer == "none":
        return weight
    if regularizer == "basis":
        return (coeff @ weight.reshape(num_bases, in_dim * out_dim)).reshape(
            num_rels, in_dim, out_dim)
    return _block_diagonal(weight, num_rels, num_bases, in_dim, out_dim)


def _block_diagonal(weight: torch.Tensor, num_rels: int, bases: int, in_dim: int,
                    out_dim: int) -> torch.Tensor:
    """(R, B * si * so) blocks -> (R, F_in, F_out) block-diagonal matrices."""
    si, so = in_dim // bases, out_dim // bases
    blocks = weight.reshape(num_rels, bases, si, so)  # (R, B, si, so)
    eye = torch.eye(bases, dtype=weight.dtype, device=weight.device)  # (B, B)
    full = torch.einsum("rbio,bc->rbico", blocks, eye)  # (R, B, si, B, so)
    return full.reshape(num_rels, in_dim, out_dim)


def rgcn_conv(adj: TypedAdjacency, x: Mapping[str, torch.Tensor], relations: Sequence[Relation],
              weights: torch.Tensor, loop_weight: torch.Tensor | None = None,
              bias: torch.Tensor | None = None, norm: RGCNNorm = "right",
              edge_values: Mapping[Relation, torch.Tensor] | None = None
              ) -> dict[str, torch.Tensor]:
    r"""Functional R-GCN layer (see :class:`RGCNConv`), before activation and dropout.

    For each destination type the relations that end there run in the cheaper order: mean
    aggregation first, each aggregate's product with :math:`W_r` accumulated into one output,
    when that costs fewer multiply-adds than transforming every source first; the transform
    first otherwise.

    :param x: per node type, (num_src[t], F_in).
    :param relations: the relation of each row of ``weights``.
    :param weights: (R, F_in, F_out) relation weights (:func:`relation_weights`).
    :param loop_weight: (F_in, F_out) self-loop weight, or None.
    :param bias: (F_out,) or None.
    :param edge_values: optional (nnz_r,) edge values in CSR order, per relation.
    :returns: per destination type with ``num_dst[t] > 0``, (num_dst[t], F_out).
    """
    reduce = "mean" if norm == "right" else "sum"
    in_dim, out_dim = int(weights.shape[1]), int(weights.shape[2])
    by_dst: dict[str, list[int]] = {}
    for r, rel in enumerate(relations):
        if rel in adj.rels and rel[0] in x:
            by_dst.setdefault(rel[2], []).append(r)
    out: dict[str, torch.Tensor] = {}
    for t, n_dst in adj.num_dst.items():
        if n_dst == 0:
            continue
        h = None
        rs = by_dst.get(t, [])
        if rs:
            nnz = sum(adj.rels[relations[r]].nnz for r in rs)
            n_src = sum(adj.num_src[relations[r][0]] for r in rs)
            agg_first = nnz * in_dim + n_dst * len(rs) * in_dim * out_dim
            transform_first = n_src * in_dim * out_dim + nnz * out_dim
            values = edge_values or {}
            if agg_first <= transform_first:
                for r in rs:  # sum_r (A_r x_s) W_r, accumulated in place (no concatenation)
                    rel = relations[r]
                    agg = spmm(adj.rels[rel], x[rel[0]], values.get(rel), reduce)  # (n_dst, F_in)
                    # the product's backward needs its inputs only, so h may grow in place
                    # (under autocast h is in the autocast dtype: the in-place product's
                    # operands follow it, as autocast would cast them)
                    h = agg @ weights[r] if h is None else \
                        h.addmm_(agg.to(h.dtype), weights[r].to(h.dtype))
                owned = True  # h is this function's own product: later terms add in place
            else:
                for r in rs:
                    rel = relations[r]
                    part = spmm(adj.rels[rel], x[rel[0]] @ weights[r], values.get(rel),
                                reduce)  # (n_dst, F_out)
                    h = part if h is None else h + part
                owned = len(rs) > 1
        if h is None:
            first = next(iter(x.values()))
            h, owned = first.new_zeros(n_dst, out_dim), True
        if loop_weight is not None:
            if t not in x:
                raise DataError(f"node type {t!r} has destinations but no input rows")
            x_dst = x[t][:n_dst]  # (n_dst, F_in)
            h = h.addmm_(x_dst.to(h.dtype), loop_weight.to(h.dtype)) if owned else \
                torch.addmm(h, x_dst, loop_weight)
            owned = True
        if bias is not None:
            h = h.add_(bias) if owned else h + bias
        out[t] = h
    return out


class RGCNConv(nn.Module):
    r"""Relational graph convolution of Schlichtkrull et al. (2018), with DGL ``RelGraphConv``
    semantics.

    .. math::
        h_i' = \sigma\Big(\sum_{r \in \mathcal{R}} \sum_{j \in \mathcal{N}^r(i)}
        \frac{e_{ji}}{c_{i,r}} h_j W_r + h_i W_0 + b\Big)

    with :math:`c_{i,r} = |\mathcal{N}^r(i)|` (``norm="right"``, the mean over the node's
    in-neighbours by relation, as in the paper and DGL's entity-classification example) or 1
    (``norm="none"``), :math:`e_{ji}` the edge value (1 by default), :math:`W_0` the self-loop
    weight, then dropout. Relations are the canonical ``(src_type, relation, dst_type)``
    triples; :math:`h_j` comes from the source type's rows, :math:`h_i` from the destination
    type's.

    Weight decompositions (``regularizer``):

    * ``"basis"``: :math:`W_r = \sum_{b=1}^{B} a_{rb} V_b` (B = ``num_bases`` shared bases);
    * ``"bdd"``: :math:`W_r = \oplus_{b=1}^{B} Q_{rb}`, B blocks on the diagonal (``in_dim`` and
      ``out_dim`` divisible by ``num_bases``);
    * ``"none"``: one full :math:`W_r` per relation.

    Parameters follow DGL ``TypedLinear`` / ``RelGraphConv`` (``weight`` = ``linear_r.W``,
    ``coeff`` = ``linear_r.coeff``, ``loop_weight``, ``bias`` = ``h_bias``), relation ``r``
    being ``relations[r]``, so weights copy across one to one.

    Args:
        in_dim (int): input width ``F_in`` (the same for every node type).
        out_dim (int): output width ``F_out``.
        relations (list of (str, str, str)): the canonical relations, in weight order.
        regularizer (str, default ``"basis"``): ``"basis"``, ``"bdd"`` or ``"none"``.
        num_bases (int or None, default None): B; None or 0 means one per relation.
        norm (str, default ``"right"``): ``"right"`` or ``"none"``.
        self_loop (bool, default True): learn :math:`W_0`.
        bias (bool, default True): learn ``b``.
        activation (callable or None, default None): :math:`\sigma`.
        dropout (float, default 0): dropout on the output.

    Shapes:
        - input: ``adj`` a :class:`~graphflow.nn.typed.TypedAdjacency`, ``x[t]``
          (num_src[t], F_in) for each node type
        - output: ``out[t]`` (num_dst[t], F_out) for each type with destinations
    """

    def __init__(self, in_dim: int, out_dim: int, relations: Sequence[Relation],
                 regularizer: Regularizer = "basis", num_bases: int | None = None,
                 norm: RGCNNorm = "right", self_loop: bool = True, bias: bool = True,
                 activation: Callable[[torch.Tensor], torch.Tensor] | None = None,
                 dropout: float = 0.0):
        super().__init__()
        relations = [tuple(r) for r in relations]
        num_rels = len(relations)
        if num_rels == 0:
            raise ConfigError("RGCNConv needs at least one relation")
        if regularizer not in ("basis", "bdd", "none"):
            raise ConfigError(f'RGCN regularizer must be "basis", "bdd" or "none", got '
                              f'"{regularizer}"')
        if norm not in ("right", "none"):
            raise ConfigError(f'RGCN norm must be "right" or "none", got "{norm}"')
        bases = int(num_bases) if num_bases else num_rels
        if regularizer == "bdd" and (in_dim % bases or out_dim % bases):
            raise ConfigError(f"block-diagonal decomposition needs in_dim ({in_dim}) and "
                              f"out_dim ({out_dim}) divisible by num_bases ({bases}); choose a "
                              f"num_bases that divides both")
        self.in_dim, self.out_dim = in_dim, out_dim
        self.relations: list[Relation] = relations  # type: ignore[assignment]
        self.regularizer, self.num_bases, self.norm = regularizer, bases, norm
        self.coeff = None
        if regularizer == "none":
            self.weight = nn.Parameter(torch.empty(num_rels, in_dim, out_dim))
        elif regularizer == "basis":
            self.weight = nn.Parameter(torch.empty(bases, in_dim, out_dim))
            self.coeff = nn.Parameter(torch.empty(num_rels, bases))
        else:
            self.weight = nn.Parameter(torch.empty(
                num_rels, bases * (in_dim // bases) * (out_dim // bases)))
        self.loop_weight = nn.Parameter(torch.empty(in_dim, out_dim)) if self_loop else None
        self.bias = nn.Parameter(torch.empty(out_dim)) if bias else None
        self.activation = activation
        self.dropout = dropout
        self.reset_parameters()

    def reset_parameters(self) -> None:
        """DGL's initialisation: uniform ±1/sqrt(fan-in) relation weights, Xavier (ReLU gain)
        coefficients and self-loop weight, zero bias."""
        gain = nn.init.calculate_gain("relu")
        fan_in = self.in_dim // self.num_bases if self.regularizer == "bdd" else self.in_dim
        nn.init.uniform_(self.weight, -fan_in ** -0.5, fan_in ** -0.5)
        if self.coeff is not None:
            nn.init.xavier_uniform_(self.coeff, gain=gain)
        if self.loop_weight is not None:
            nn.init.xavier_uniform_(self.loop_weight, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def relation_weights(self) -> torch.Tensor:
        """(R, F_in, F_out): :math:`W_r` of every relation."""
        return relation_weights(self.weight, self.coeff, self.regularizer, len(self.relations),
                                self.num_bases, self.in_dim, self.out_dim)

    def forward(self, adj: TypedAdjacency, x: Mapping[str, torch.Tensor],
                edge_values: Mapping[Relation, torch.Tensor] | None = None
                ) -> dict[str, torch.Tensor]:
        out = rgcn_conv(adj, x, self.relations, self.relation_weights(), self.loop_weight,
                        self.bias, self.norm, edge_values)
        if self.activation is not None:
            out = {t: self.activation(h) for t, h in out.items()}
        if self.dropout > 0 and self.training:
            out = {t: F.dropout(h, self.dropout, True) for t, h in out.items()}
        return out

    def extra_repr(self) -> str:
        return (f"{self.in_dim}, {self.out_dim}, relations={len(self.relations)}, "
                f"regularizer={self.regularizer!r}, num_bases={self.num_bases}, "
                f"norm={self.norm!r}")


class RGCNInputConv(nn.Module):
    r"""The first R-GCN layer of the paper, on raw per-type inputs: featureless types enter as
    one-hot vectors (:math:`X = I`), so that :math:`x_j W_r` is row :math:`j` of a learned
    per-relation table.

    .. math::
        h_i' = \sum_{r = (s, \cdot, t)} \frac{1}{c_{i,r}} \sum_{j \in \mathcal{N}^r(i)}
        m_r(j) + m_0(i) + b, \qquad m_r(j) = \begin{cases} E_r[j] & s \text{ featureless}
        \\ x_j W_r & s \text{ has features} \end{cases}

    with :math:`E_r` (n_s, F_out) and :math:`W_r` (F_s, F_out) per relation (widths may differ
    by type), and the self-connection :math:`m_0` likewise per node type. No weight
    decomposition (the paper's AIFB and MUTAG setting); activation and dropout are the
    stack's.

    Args:
        schema (TypedSchema): types, relations, node counts and input widths.
        out_dim (int): ``F_out``.
        norm (str, default ``"right"``): ``"right"`` (mean per relation) or ``"none"``.
        self_loop (bool, default True), bias (bool, default True).

    Shapes:
        - input: ``x[t]`` float (num_src[t], F_t), or int64 (num_src[t],) node ids of a
          featureless type
        - output: ``out[t]`` (num_dst[t], F_out)
    """

    def __init__(self, schema, out_dim: int, norm: RGCNNorm = "right", self_loop: bool = True,
                 bias: bool = True):
        super().__init__()
        if norm not in ("right", "none"):
            raise ConfigError(f'RGCN norm must be "right" or "none", got "{norm}"')
        self.relations: list[Relation] = [tuple(r) for r in schema.relations]
        self.ntypes = list(schema.ntypes)
        self.out_dim, self.norm = out_dim, norm
        self.featureless = {t: schema.in_dims[t] is None for t in self.ntypes}
        sources = schema.sources or {}

        def rows(t: str, rel: Relation | None) -> int:
            d = schema.in_dims[t]
            if d is not None:
                return d
            if rel is not None and rel in sources:
                return int(sources[rel].shape[0])  # only the relation's sources
            return schema.num_nodes[t]

        # A featureless source type's table keeps a row for each node with an out-edge of the
        # relation only (compact[r] maps node id -> row, -1 elsewhere): the other rows would
        # never get a gradient.
        self.compact: list[torch.Tensor | None] = []
        for i, (s, _, _) in enumerate(self.relations):
            rel = self.relations[i]
            if self.featureless[s] and rel in sources:
                remap = torch.full((schema.num_nodes[s],), -1, dtype=torch.int64)
                remap[sources[rel]] = torch.arange(sources[rel].shape[0])
                self.register_buffer(f"compact_{i}", remap, persistent=False)
                self.compact.append(remap)
            else:
                self.compact.append(None)
        self.rel_weights = nn.ParameterList(
            nn.Parameter(torch.empty(rows(r[0], r), out_dim)) for r in self.relations)
        self.loop_weights = nn.ParameterList(
            nn.Parameter(torch.empty(rows(t, None), out_dim)) for t in self.ntypes) \
            if self_loop else None
        self.bias = nn.Parameter(torch.empty(out_dim)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = nn.init.calculate_gain("relu")
        for w in self.rel_weights:
            nn.init.xavier_uniform_(w, gain=gain)
        for w in self.loop_weights or ():
            nn.init.xavier_uniform_(w, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def _check_ids(self, t: str, x: torch.Tensor) -> None:
        if x.is_floating_point():
            raise DataError(f"node type {t!r} was featureless when the model was built but "
                            f"now has features; rebuild the model")

    def _message(self, i: int, adj: TypedAdjacency, x: torch.Tensor) -> torch.Tensor:
        """Relation ``i``'s aggregated messages (num_dst, F_out)."""
        rel = self.relations[i]
        a, w = adj.rels[rel], self.rel_weights[i]
        reduce = "mean" if self.norm == "right" else "sum"
        if not self.featureless[rel[0]]:
            return spmm(a, x @ w, None, reduce)
        self._check_ids(rel[0], x)
        remap = getattr(self, f"compact_{i}", None) if self.compact[i] is not None else None

        def build() -> Adjacency:  # the relation with table rows as its columns; cached
            cols = x.index_select(0, a.indices)  # (nnz,) node ids
            if remap is not None:
                cols = remap.index_select(0, cols)
            return Adjacency(a.indptr, cols, a.eids, w.shape[0], a.num_dst, a.values)

        rows = a.cached(("onehot", i, id(x), x.data_ptr()), build)
        return spmm(rows, w, None, reduce)  # (num_dst, F_out): one-hot x times the table

    def forward(self, adj: TypedAdjacency, x: Mapping[str, torch.Tensor]
                ) -> dict[str, torch.Tensor]:
        out: dict[str, torch.Tensor] = {}
        for i, (s, _, t) in enumerate(self.relations):
            rel = self.relations[i]
            if rel not in adj.rels or s not in x or adj.num_dst.get(t, 0) == 0:
                continue
            part = self._message(i, adj, x[s])  # (n_dst, F_out)
            out[t] = part if t not in out else out[t] + part
        for i, t in enumerate(self.ntypes):
            n_dst = adj.num_dst.get(t, 0)
            if n_dst == 0:
                continue
            h = out.get(t)
            if h is None:
                h = self.rel_weights[0].new_zeros(n_dst, self.out_dim)
            if self.loop_weights is not None:
                w, v = self.loop_weights[i], x[t][:n_dst]
                if self.featureless[t]:
                    self._check_ids(t, v)
                    h = h + w.index_select(0, v)
                else:
                    h = h + v @ w
            if self.bias is not None:
                h = h + self.bias
            out[t] = h
        return out

    def extra_repr(self) -> str:
        return f"out_dim={self.out_dim}, relations={len(self.relations)}, norm={self.norm!r}"
