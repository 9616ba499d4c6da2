"""Link evaluation with bounded memory: embeddings once, pairs scored in chunks.

The caller computes the embeddings ``h`` (N, D) of every node once per evaluation (a
full-graph forward, or layer-wise full-neighbor inference). Then

* :func:`score_pairs` scores any number of pairs ``chunk`` at a time on the device, so the
  extra memory is ``O(chunk * D)`` whatever the number of pairs;
* :func:`binary_figures`: ROC AUC and average precision of the fixed positive and negative
  pairs of a split (:func:`graphflow.train.metrics.roc_auc`, ``average_precision``);
* :func:`ranking_figures`: MRR and Hits@K, OGB's protocol (``ogbl-citation2``): each positive
  ``(u, v)`` is ranked against ``K`` destinations ``w`` drawn uniformly among all nodes for
  its own source, pairs ``(u, w)``; ties count half (:func:`graphflow.train.metrics.ranks`).
  Drawn destinations are not filtered against the graph (as OGB's fixed negatives). The
  draws come from a generator seeded by the caller, so every evaluation of a run ranks
  against the same destinations; positives go ``chunk // K`` at a time, so memory is
  ``O(chunk * D)`` for any number of positives.

On a typed graph a relation's sources and destinations are rows of two embedding matrices
(their node types'): every function takes the destinations' ``h_dst`` (default ``h``), and
ranked destinations are drawn among ``h_dst``'s rows, the nodes of the relation's
destination type. :func:`pair_ranks` returns the ranks themselves, so that ranks of several
relations pool into one MRR (:func:`rank_figures`).
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
from torch import nn

from graphflow.linkpred.held_out import HeldOutPairs
from graphflow.train.metrics import average_precision, hits_at, mrr, ranks, roc_auc

DEFAULT_CHUNK = 1 << 16
"""Pair scores computed at once (one chunk of ranked positives holds ``chunk // K`` of them)."""


@torch.no_grad()
def score_pairs(decoder: nn.Module, h: torch.Tensor, pairs: torch.Tensor, *,
                chunk: int = DEFAULT_CHUNK, device: torch.device | None = None,
                h_dst: torch.Tensor | None = None) -> torch.Tensor:
    """float32 (P,) CPU scores of ``pairs`` (2, P) from embeddings ``h`` (N, D) (the
    destinations' from ``h_dst``, default ``h``)."""
    device = device or h.device
    h_dst = h if h_dst is None else h_dst
    out = torch.empty(pairs.shape[1], dtype=torch.float32)
    for start in range(0, pairs.shape[1], chunk):
        u, v = pairs[:, start:start + chunk]
        hu = h[u.to(h.device)].to(device)  # (C, D)
        hv = h_dst[v.to(h_dst.device)].to(device)
        out[start:start + u.shape[0]] = decoder(hu, hv).float().cpu()
    return out


def binary_figures(decoder: nn.Module, h: torch.Tensor, pairs: HeldOutPairs, *,
                   chunk: int = DEFAULT_CHUNK, device: torch.device | None = None,
                   h_dst: torch.Tensor | None = None
                   ) -> tuple[dict[str, float], torch.Tensor, torch.Tensor]:
    """``({"auc", "ap"}, pos_scores (P,), neg_scores (Q,))`` of one split's fixed pairs."""
    pos = score_pairs(decoder, h, pairs.pos, chunk=chunk, device=device, h_dst=h_dst)
    neg = score_pairs(decoder, h, pairs.neg, chunk=chunk, device=device, h_dst=h_dst)
    if pos.numel() == 0 or neg.numel() == 0:
        return {}, pos, neg
    return {"auc": roc_auc(pos, neg), "ap": average_precision(pos, neg)}, pos, neg


@torch.no_grad()
def ranking_figures(decoder: nn.Module, h: torch.Tensor, pos: torch.Tensor, *,
                    negatives: int, hits: Sequence[int], generator: torch.Generator,
                    chunk: int = DEFAULT_CHUNK, device: torch.device | None = None,
                    h_dst: torch.Tensor | None = None) -> dict[str, float]:
    """``mrr`` and ``hits@k`` of the positives ``pos`` (2, P), each ranked against
    ``negatives`` destinations drawn for its source (see the module docstring).

    :param generator: a CPU generator (draws are made chunk by chunk, in order).
    """
    rank = pair_ranks(decoder, h, pos, negatives=negatives, generator=generator, chunk=chunk,
                      device=device, h_dst=h_dst)
    return rank_figures(rank, hits)


@torch.no_grad()
def pair_ranks(decoder: nn.Module, h: torch.Tensor, pos: torch.Tensor, *, negatives: int,
               generator: torch.Generator, chunk: int = DEFAULT_CHUNK,
               device: torch.device | None = None,
               h_dst: torch.Tensor | None = None) -> torch.Tensor:
    """float64 (P,) rank of each positive ``(u, v)`` of ``pos`` (2, P) among ``negatives``
    pairs ``(u, w)``, ``w`` drawn uniformly among the rows of ``h_dst`` (default ``h``), ties
    counting half (:func:`graphflow.train.metrics.ranks`)."""
    device = device or h.device
    h_dst = h if h_dst is None else h_dst
    n = h_dst.shape[0]
    per = max(1, chunk // max(negatives, 1))  # positives per chunk
    rank = torch.empty(pos.shape[1], dtype=torch.float64)
    for start in range(0, pos.shape[1], per):
        u, v = pos[:, start:start + per]  # (C,)
        w = torch.randint(n, (u.shape[0], negatives), generator=generator)  # (C, K)
        hu = h[u.to(h.device)].to(device)  # (C, D)
        p = decoder(hu, h_dst[v.to(h_dst.device)].to(device))  # (C,)
        q = decoder.many(hu, h_dst[w.to(h_dst.device)].to(device))  # (C, K)
        rank[start:start + u.shape[0]] = ranks(p.float(), q.float()).cpu()
    return rank


def rank_figures(rank: torch.Tensor, hits: Sequence[int]) -> dict[str, float]:
    """``mrr`` and ``hits@k`` of ranks (P,) from :func:`pair_ranks`."""
    figures = {"mrr": mrr(rank)}
    figures.update({f"hits@{k}": hits_at(rank, k) for k in hits})
    return figures
