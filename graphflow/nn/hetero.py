r"""Per-relation wrapper: any homogeneous layer on a typed graph, with DGL ``HeteroGraphConv``
semantics.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.nn.typed import Relation, TypedAdjacency

Aggregate = Literal["sum", "mean", "max", "min", "stack"]
AGGREGATES: tuple[str, ...] = ("sum", "mean", "max", "min", "stack")


def aggregate(parts: Sequence[torch.Tensor], how: str) -> torch.Tensor:
    """Combine the per-relation outputs (n, F) of one destination type, as DGL
    ``HeteroGraphConv`` does: ``sum``, ``mean``, ``max``, ``min`` over the relations, or
    ``stack`` them to (n, R_t, F)."""
    if len(parts) == 1 and how != "stack":
        return parts[0]
    if how == "sum":
        out = parts[0]
        for p in parts[1:]:
            out = out + p
        return out
    stacked = torch.stack(list(parts), 1)  # (n, R_t, F)
    if how == "stack":
        return stacked
    if how == "mean":
        return stacked.mean(1)
    if how == "max":
        return stacked.max(1).values
    return stacked.min(1).values


class HeteroConv(nn.Module):
    r"""One homogeneous module per relation, their outputs aggregated by destination type.

    .. math::
        h_i' = \mathop{\mathrm{AGG}}_{r = (s, \cdot, t)} f_r(A_r, h_s)_i \qquad
        \text{for each node } i \text{ of type } t

    with :math:`f_r` any graphflow message-passing module, ``forward(adj, x) -> (num_dst, F)``
    (the contract of :mod:`graphflow.nn.stack`: destinations are the first ``num_dst`` rows of
    ``x``). A relation between two types hands :math:`f_r` the destination type's rows
    followed by the source type's (see :meth:`TypedAdjacency.prefixed`), so that layers that
    read the destinations' own features (SAGE, GAT) see the right rows; a relation within one
    type hands it that type's rows. This is DGL's ``HeteroGraphConv`` passing ``(h_src,
    h_dst)`` pairs, for layers written against a homogeneous contract.

    Relations whose source type has no input rows are skipped, and a destination type that no
    relation reaches is left out of the output (as in DGL).

    Args:
        mods (dict): canonical relation -> module.
        aggregate (str, default ``"sum"``): ``sum``, ``mean``, ``max``, ``min`` or ``stack``.

    Shapes:
        - input: ``adj`` a :class:`~graphflow.nn.typed.TypedAdjacency`, ``x[t]``
          (num_src[t], F) (the same width for a relation's two types)
        - output: ``out[t]`` (num_dst[t], F') per reached type; (num_dst[t], R_t, F') with
          ``stack``
    """

    def __init__(self, mods: Mapping[Relation, nn.Module], aggregate: Aggregate = "sum"):
        super().__init__()
        if aggregate not in AGGREGATES:
            raise ConfigError(f'aggregate must be one of {", ".join(AGGREGATES)}, got '
                              f'"{aggregate}"')
        self.relations: list[Relation] = [tuple(r) for r in mods]  # type: ignore[misc]
        # Indexed, not keyed by name: relation names (RDF IRIs...) may hold any character.
        self.mods = nn.ModuleList(mods.values())
        self.aggregate = aggregate

    def forward(self, adj: TypedAdjacency, x: Mapping[str, torch.Tensor]
                ) -> dict[str, torch.Tensor]:
        outs: dict[str, list[torch.Tensor]] = {}
        for rel, mod in zip(self.relations, self.mods):
            src, _, dst = rel
            if rel not in adj.rels or src not in x or adj.num_dst.get(dst, 0) == 0:
                continue
            if src == dst:
                h = x[src]  # (num_src[t], F)
            else:
                if dst not in x:
                    continue
                h = torch.cat([x[dst][: adj.num_dst[dst]], x[src]])  # (num_dst + num_src, F)
            outs.setdefault(dst, []).append(mod(adj.prefixed(rel), h))  # (num_dst[t], F')
        return {t: aggregate(parts, self.aggregate) for t, parts in outs.items()}

    def extra_repr(self) -> str:
        return f"relations={len(self.relations)}, aggregate={self.aggregate!r}"
