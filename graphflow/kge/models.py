"""Shallow knowledge-graph embedding models behind one scoring contract.

A :class:`KgeModel` holds an entity table ``(E, width)`` and a relation table, both
``nn.Embedding(sparse=True)`` (a step with a sparse optimizer touches only the rows it
used), and scores with:

* ``score_hrt(h, r, t)``: broadcastable index tensors -> the triples' scores;
* ``score_t(h, r)``: ``(B,)`` heads and relations -> ``(B, E)`` scores of every tail (1-N),
  or with ``tails`` (k,) the ``(B, k)`` scores of those candidates (shared negatives);
* ``score_h(r, t)``: ``(B,)`` relations and tails -> ``(B, E)`` scores of every head (or of
  the candidate ``heads``).

Higher is truer. ``reciprocal``: the model holds ``2R`` relations, ``r + R`` the inverse of
``r``; a head query ``(?, r, t)`` is then scored as the tail query ``(t, r + R, ?)``
(Lacroix et al. 2018), and :meth:`KgeModel.triples_for_training` adds the inverse triples.
A third-party model subclasses :class:`KgeModel` and implements ``_hrt``, ``_tails`` and
``_heads``.

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


class DistMult(KgeModel):
    def _hrt(self, h, r, t):
        return (h * r * t).sum(-1)

    def _tails(self, h, r, ent):
        return (h * r) @ ent.T

    def _heads(self, r, t, ent):
        return (r * t) @ ent.T


def _complex(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return x.chunk(2, dim=-1)


class ComplEx(KgeModel):
    entity_factor = relation_factor = 2

    def _hrt(self, h, r, t):
        (hr, hi), (rr, ri), (tr, ti) = _complex(h), _complex(r), _complex(t)
        return ((hr * rr - hi * ri) * tr + (hr * ri + hi * rr) * ti).sum(-1)

    def _tails(self, h, r, ent):
        (hr, hi), (rr, ri) = _complex(h), _complex(r)
        return torch.cat([hr * rr - hi * ri, hr * ri + hi * rr], -1) @ ent.T

    def _heads(self, r, t, ent):
        (rr, ri), (tr, ti) = _complex(r), _complex(t)
        # Re(h * q) with q = r * conj(t) = h_re q_re - h_im q_im
        q_re, q_im = rr * tr + ri * ti, ri * tr - rr * ti
        return torch.cat([q_re, -q_im], -1) @ ent.T


class _Distance(KgeModel):
    """Models scored ``γ - distance``, initialised uniform in ``±(γ + ε) / d``."""

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


class TransE(_Distance):
    """``p``: the norm (1, as the RotatE code, or 2)."""

    p = 1

    def _dist(self, a, b):
        return torch.linalg.vector_norm(a - b, ord=self.p, dim=-1)

    def _hrt(self, h, r, t):
        return self.gamma - self._dist(h + r, t)

    def _tails(self, h, r, ent):
        return self.gamma - torch.cdist(h + r, ent, p=self.p)

    def _heads(self, r, t, ent):
        return self.gamma - torch.cdist(t - r, ent, p=self.p)


class RotatE(_Distance):
    entity_factor = 2

    def _phase(self, r):
        bound = (self.gamma + EPSILON) / self.dim
        theta = r / (bound / math.pi)
        return torch.cos(theta), torch.sin(theta)

    def _dist(self, a, b):  # complex L1: Σ_k |a_k - b_k|
        (ar, ai), (br, bi) = _complex(a), _complex(b)
        return torch.sqrt((ar - br) ** 2 + (ai - bi) ** 2 + 1e-18).sum(-1)

    def _rotate(self, x, r, conj: bool = False):
        (xr, xi), (c, s) = _complex(x), self._phase(r)
        if conj:
            s = -s
        return torch.cat([xr * c - xi * s, xr * s + xi * c], -1)

    def _hrt(self, h, r, t):
        return self.gamma - self._dist(self._rotate(h, r), t)

    def _tails(self, h, r, ent):
        return self._block(self._rotate(h, r), ent)

    def _heads(self, r, t, ent):  # |h r - t| = |h - t conj(r)| as |r| = 1
        return self._block(self._rotate(t, r, conj=True), ent)


MODELS: dict[str, type[KgeModel]] = {"transe": TransE, "distmult": DistMult,
                                     "complex": ComplEx, "rotate": RotatE}
