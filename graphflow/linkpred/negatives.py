r"""Training negatives: for each positive ``(u, v)``, ``k`` pairs ``(u, w)`` with drawn ``w``.

* ``uniform``: ``w`` uniform over all nodes (DGL's ``negative_sampler.Uniform``).
* ``degree``: :math:`P(w) \propto \deg(w)^{0.75}` (word2vec's smoothed unigram; DGL's
  ``GlobalUniform`` is uniform, GraphStorm's ``joint`` / PinSAGE use degree-based noise),
  drawn in O(1) from :class:`~graphflow.sampling.unigram.UnigramTable`.

Negatives are not checked against the graph: with sparse graphs a drawn pair is an edge with
probability about ``E / N^2``, the usual approximation of every peer.

On a typed graph each target relation ``(src_type, rel, dst_type)`` corrupts the tail with
nodes of ``dst_type`` (:func:`typed_samplers`: ``uniform`` or ``degree`` over that type's
nodes); :func:`corrupt_tails` draws the fixed validation / test negatives the same way,
rejecting pairs that are edges of the relation.
"""

from __future__ import annotations

from typing import Literal

import torch

from graphflow.sampling.unigram import UnigramTable

NegativeName = Literal["uniform", "degree"]


class NegativeSampler:
    """``sampler(src, k, generator) -> dst``: int64 (B * k,) destinations for sources (B,).

    :param kind: ``uniform`` or ``degree``.
    :param num_nodes: N.
    :param degree: float (N,) node degrees (for ``degree``).
    :param device: where draws are made (the generator's device).
    """

    def __init__(self, kind: NegativeName, num_nodes: int, degree: torch.Tensor | None = None,
                 device: torch.device | str = "cpu"):
        self.kind, self.num_nodes = kind, num_nodes
        self.table = None
        if kind == "degree":
            if degree is None:
                raise ValueError("degree negatives need the node degrees")
            self.table = UnigramTable(degree.to(device).float(), power=0.75)

    def __call__(self, src: torch.Tensor, k: int,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        count = src.shape[0] * k
        if self.table is not None:
            return self.table.sample(count, generator).to(src.device)
        return torch.randint(self.num_nodes, (count,), generator=generator, device=src.device)


def corrupt_tails(heads: torch.Tensor, num_dst: int, k: int,
                  generator: torch.Generator | None = None, *,
                  forbidden: torch.Tensor | None = None, undirected: bool = False,
                  no_self: bool = False, max_rounds: int = 64) -> torch.Tensor:
    """int64 (P * k,) tails for the heads (P,), head-major: ``k`` destinations ``w`` drawn
    uniformly among ``0..num_dst-1`` (the ids of the relation's destination type) for each
    head ``u``.

    With ``forbidden`` (sorted int64 pair keys ``u * num_dst + w``, or ``min * num_dst + max``
    when ``undirected``) a drawn ``(u, w)`` whose key is in it is drawn again, and with
    ``no_self`` so is ``w == u`` (a relation within one type): vectorised rounds that redraw
    only the rejected slots.

    :raises ValueError: when some head still has a rejected draw after ``max_rounds`` rounds
        (it is joined to nearly every destination).
    """
    if num_dst < 1:
        raise ValueError("the destination type has no nodes to draw")
    u = heads.repeat_interleave(k)  # (P k,)
    w = torch.randint(num_dst, (u.numel(),), generator=generator)
    if forbidden is None and not no_self:
        return w
    todo = torch.arange(u.numel())
    for _ in range(max_rounds):
        bad = _rejected(u[todo], w[todo], num_dst, forbidden, undirected, no_self)
        todo = todo[bad]
        if todo.numel() == 0:
            return w
        w[todo] = torch.randint(num_dst, (todo.numel(),), generator=generator)
    head = int(u[todo[0]])
    raise ValueError(f"no destination that is not joined to source {head} found in "
                     f"{max_rounds} draws")


def _rejected(u: torch.Tensor, w: torch.Tensor, num_dst: int, forbidden: torch.Tensor | None,
              undirected: bool, no_self: bool) -> torch.Tensor:
    bad = (u == w) if no_self else torch.zeros(u.numel(), dtype=torch.bool)
    if forbidden is not None and forbidden.numel():
        key = torch.minimum(u, w) * num_dst + torch.maximum(u, w) if undirected \
            else u * num_dst + w
        bad |= torch.isin(key, forbidden)
    return bad


def typed_samplers(graph, relations, kind: NegativeName) -> dict:
    """One :class:`NegativeSampler` per relation of ``relations``, over the nodes of the
    relation's destination type (``degree``: their degrees over every relation)."""
    out = {}
    degree: dict[str, torch.Tensor] = {}
    for rel in relations:  # over target relations
        t = rel[2]
        if kind == "degree" and t not in degree:
            deg = torch.zeros(graph.num_nodes(t))
            for c in graph.canonical_etypes:  # over relations: in- and out-degrees of t
                if c[2] == t:
                    deg += graph.in_degrees(etype=c).float()
                if c[0] == t:
                    deg += graph.out_degrees(etype=c).float()
            degree[t] = deg
        out[rel] = NegativeSampler(kind, graph.num_nodes(t), degree.get(t))
    return out
