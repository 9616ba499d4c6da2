"""Shallow knowledge-graph embedding models behind one scoring contract.

A :class:`KgeModel` holds an entity table ``(E, width)`` and a relation table, both
``nn.Embedding(sparse=True)`` (a step with a sparse optimizer touches only the rows it
used), and scores with:

* ``score_hrt(h, r, t)``: broadcastable index tensors -> the triples' scores;
* ``score_t(h, r)``: ``(B,)`` heads and relations -> ``(B, E)`` scores of every tail (1-N),
  or with ``tails`` (k,) the ``(B, k)`` scores of those candidates (shared negatives);
* ``score_h(r, t)``: ``(B,)`` relations and tails -> ``(B, E)`` scores of every head (or of
  the candidate ``heads``);
* ``score_negatives(h, r, t, cand, head)``: a training batch: the ``(B,)`` scores of the
  triples and the ``(B, k)`` scores of each triple with its head (where ``head``) or its tail
  replaced by each of its own candidates ``cand`` ``(B, k)``.

Higher is truer. ``reciprocal``: the model holds ``2R`` relations, ``r + R`` the inverse of
``r``; a head query ``(?, r, t)`` is then scored as the tail query ``(t, r + R, ?)``
(Lacroix et al. 2018), and :meth:`KgeModel.triples_for_training` adds the inverse triples.
A third-party model subclasses :class:`KgeModel` and implements ``_hrt``, ``_tails`` and
``_heads``. The built-in models are also written as a *query* and a *match*
(:class:`QueryModel`): a tail query ``q(h, r)`` or a head query ``q(r, t)`` of width ``w``,
matched against candidate entity rows, so that a training batch gathers every entity row it
uses in one lookup (one sparse gradient a table, nothing to add up before the optimizer's
step) and scores each candidate against its triple's one query (a batched product for
DistMult and ComplEx) instead of gathering both ends of every corrupted triple.

Models (``d`` = ``dim``):

* TransE (Bordes et al. 2013): ``γ - ||h + r - t||_p``; uniform init in ``±(γ + ε) / d``
  (the RotatE code's form, ε = 2).
* DistMult (Yang et al. 2015): ``<h, r, t>``; Xavier normal init (as ConvE and PyKEEN).
* ComplEx (Trouillon et al. 2016): ``Re(<h, r, conj(t)>)`` in ``C^d`` (stored as ``2d``
  reals); Xavier normal init.
* RotatE (Sun et al. 2019): ``γ - Σ_k |h_k r_k - t_k|`` with ``r_k = e^{iθ_k}``, entities in
  ``C^d``, phases ``θ = w / ((γ + ε) / d / π)`` from a table initialised uniform in
  ``±(γ + ε) / d``, entities likewise.
"""

from __future__ import annotations

import math

import torch
from torch import nn

EPSILON = 2.0
"""ε of the RotatE code's initialisation range ``(γ + ε) / d``."""
CHUNK = 1 << 22
"""Elements of the ``(B, chunk, d)`` block a distance model scores all entities in."""


class KgeModel(nn.Module):
    """Entity and relation embeddings and the scoring contract (see the module docstring)."""

    entity_factor = 1
    relation_factor = 1

    def __init__(self, num_entities: int, num_relations: int, dim: int, *,
                 reciprocal: bool = False, gamma: float = 12.0, sparse: bool = True):
        super().__init__()
        self.num_entities, self.base_relations = int(num_entities), int(num_relations)
        self.num_relations = self.base_relations * (2 if reciprocal else 1)
        self.dim, self.reciprocal, self.gamma = int(dim), bool(reciprocal), float(gamma)
        self.entity = nn.Embedding(num_entities, dim * self.entity_factor, sparse=sparse)
        self.relation = nn.Embedding(self.num_relations, dim * self.relation_factor,
                                     sparse=sparse)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_normal_(self.entity.weight)
        nn.init.xavier_normal_(self.relation.weight)

    # -- the contract ----------------------------------------------------------------------
    def score_hrt(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        return self._hrt(self.entity(h), self.relation(r), self.entity(t))

    def candidates(self, index: torch.Tensor | None) -> torch.Tensor:
        """The entity rows of ``index`` (sparse gradient), or the whole table for None."""
        return self.entity.weight if index is None else self.entity(index)

    def score_t(self, h: torch.Tensor, r: torch.Tensor,
                tails: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, E)`` scores of every tail, or ``(B, k)`` of the candidate ``tails`` (k,)."""
        return self._tails(self.entity(h), self.relation(r), self.candidates(tails))

    def score_h(self, r: torch.Tensor, t: torch.Tensor,
                heads: torch.Tensor | None = None) -> torch.Tensor:
        """``(B, E)`` scores of every head, or ``(B, k)`` of the candidate ``heads``."""
        if self.reciprocal:
            return self.score_t(t, r + self.base_relations, heads)
        return self._heads(self.relation(r), self.entity(t), self.candidates(heads))

    def score_negatives(self, h: torch.Tensor, r: torch.Tensor, t: torch.Tensor,
                        cand: torch.Tensor, head: torch.Tensor
                        ) -> tuple[torch.Tensor, torch.Tensor]:
        """The triples' ``(B,)`` scores, and the ``(B, k)`` scores of triple ``b`` with its head
        (``head[b]``) or tail replaced by ``cand[b, j]``."""
        hn = torch.where(head[:, None], cand, h[:, None])
        tn = torch.where(head[:, None], t[:, None], cand)
        return self.score_hrt(h, r, t), self.score_hrt(hn, r[:, None], tn)

    def embeddings_of(self, *index: torch.Tensor) -> list[torch.Tensor]:
        """The entity rows of ``index`` (for a regulariser on the rows a batch used)."""
        return [self.entity(i) for i in index]

    def triples_for_training(self, triples: torch.Tensor) -> torch.Tensor:
        """``triples`` and, with ``reciprocal``, their inverses ``(t, r + R, h)``."""
        if not self.reciprocal:
            return triples
        inv = torch.stack([triples[:, 2], triples[:, 1] + self.base_relations,
                           triples[:, 0]], 1)
        return torch.cat([triples, inv])

    # -- what a model implements ---------------------------------------------------------
    def _hrt(self, h, r, t):  # (..., w) each -> (...)
        raise NotImplementedError

    def _tails(self, h, r, ent):  # (B, w), (B, w), (E, w) -> (B, E)
        raise NotImplementedError

    def _heads(self, r, t, ent):
        raise NotImplementedError


class QueryModel(KgeModel):
    """A model scored as ``match(query, entity row)``: it implements ``_tail_query(h, r)``,
    ``_head_query(r, t)`` (rows of width ``w`` -> queries of width ``w``), ``_match(q, ent)``
    (``(B, w)``, ``(E, w)`` -> ``(B, E)``) and ``_match_rows(q, cand)`` (``(B, w)``,
    ``(B, k, w)`` -> ``(B, k)``)."""

    def _tails(self, h, r, ent):
        return self._match(self._tail_query(h, r), ent)

    def _heads(self, r, t, ent):
        return self._match(self._head_query(r, t), ent)

    def score_negatives(self, h, r, t, cand, head):
        b, k = cand.shape
        eh, et, ec = self.entity(torch.cat([h, t, cand.reshape(-1)])).split([b, b, b * k])
        rel = self.relation(r)
        if self.reciprocal or not bool(head.any()):
            q = self._tail_query(eh, rel)
        elif bool(head.all()):
            q = self._head_query(rel, et)
        else:
            q = torch.where(head[:, None], self._head_query(rel, et), self._tail_query(eh, rel))
        return self._hrt(eh, rel, et), self._match_rows(q, ec.view(b, k, -1))


class _Product(QueryModel):
    """Models whose match is an inner product with the candidate's row."""

    def _hrt(self, h, r, t):
        return (self._tail_query(h, r) * t).sum(-1)

    def _match(self, q, ent):
        return q @ ent.T

    def _match_rows(self, q, cand):
        return torch.bmm(cand, q[:, :, None])[:, :, 0]


class DistMult(_Product):
    def _tail_query(self, h, r):
        return h * r

    def _head_query(self, r, t):
        return r * t


def _complex(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.chunk(2, dim=-1)


class ComplEx(_Product):
    entity_factor = relation_factor = 2

    def _tail_query(self, h, r):  # Re(<h r, conj(t)>) = <[Re hr, Im hr], [Re t, Im t]>
        (hr, hi), (rr, ri) = _complex(h), _complex(r)
        return torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], -1)

    def _head_query(self, r, t):
        (rr, ri), (tr, ti) = _complex(r), _complex(t)
        # Re(h * q) with q = r * conj(t) = h_re q_re - h_im q_im
        q_re, q_im = rr * tr + ri * ti, ri * tr - rr * ti
        return torch.cat([q_re, -q_im], -1)


class _Distance(QueryModel):
    """Models scored ``γ - distance(query, candidate)``, initialised uniform in
    ``±(γ + ε) / d``."""

    def reset_parameters(self) -> None:
        bound = (self.gamma + EPSILON) / self.dim
        nn.init.uniform_(self.entity.weight, -bound, bound)
        nn.init.uniform_(self.relation.weight, -bound, bound)

    def _block(self, q: torch.Tensor, ent: torch.Tensor) -> torch.Tensor:
        """``γ - dist(q[b], ent[e])`` for every pair, in entity chunks."""
        step = max(1, CHUNK // max(1, q.shape[0] * q.shape[1]))
        out = [self.gamma - self._dist(q[:, None, :], ent[None, s:s + step])
               for s in range(0, ent.shape[0], step)]  # over entity chunks
        return torch.cat(out, 1)

    def _match(self, q, ent):
        return self._block(q, ent)

    def _match_rows(self, q, cand):
        return self.gamma - self._dist(q[:, None, :], cand)

    def _hrt(self, h, r, t):
        return self.gamma - self._dist(self._tail_query(h, r), t)


class TransE(_Distance):
    """``p``: the norm (1, as the RotatE code, or 2)."""

    p = 1

    def _dist(self, a, b):
        return torch.linalg.vector_norm(a - b, ord=self.p, dim=-1)

    def _tail_query(self, h, r):  # ||h + r - t|| = ||(h + r) - t||
        return h + r

    def _head_query(self, r, t):  # ||h + r - t|| = ||h - (t - r)||
        return t - r

    def _match(self, q, ent):
        return self.gamma - torch.cdist(q, ent, p=self.p)


class RotatE(_Distance):
    entity_factor = 2

    def _phase(self, r):
        bound = (self.gamma + EPSILON) / self.dim
        theta = r / (bound / math.pi)
        return torch.cos(theta), torch.sin(theta)

    def _dist(self, a, b):  # complex L1: Σ_k |a_k - b_k|
        diff = a - b  # (..., 2d): real parts, then imaginary parts
        # the moduli in one pass (a zero difference gets a zero gradient), then their sum
        return torch.linalg.vector_norm(diff.unflatten(-1, (2, -1)), dim=-2).sum(-1)

    def _rotate(self, x, r, conj: bool = False):
        (xr, xi), (c, s) = _complex(x), self._phase(r)
        if conj:
            s = -s
        return torch.cat([xr * c - xi * s, xr * s + xi * c], -1)

    def _tail_query(self, h, r):
        return self._rotate(h, r)

    def _head_query(self, r, t):  # |h r - t| = |h - t conj(r)| as |r| = 1
        return self._rotate(t, r, conj=True)


MODELS: dict[str, type[KgeModel]] = {"transe": TransE, "distmult": DistMult,
                                     "complex": ComplEx, "rotate": RotatE}
