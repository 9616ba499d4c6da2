"""The filtered ranking protocol of knowledge-graph completion.

Bordes et al. 2013: every evaluation triple ``(h, r, t)`` is ranked twice, its tail against
``(h, r, e)`` for every entity ``e`` and its head against ``(e, r, t)``, leaving out the
candidates that form another known true triple (train, valid and test: the *filtered*
setting). Ties are counted *realistically*, as PyKEEN reports by default: the rank is the mean
of the optimistic rank ``1 + #{score > s}`` and the pessimistic rank ``#{score >= s}`` (the
true candidate included), i.e. the expected rank under a random order of the ties.

Figures over both sides (``2n`` ranks): ``MRR = mean(1 / rank)``, ``MR = mean(rank)``,
``Hits@k = mean(rank <= k)``; per relation the same over the ranks of that relation's
triples.

The filter is a CSR lookup: the known triples sorted by the key ``h * R + r`` give, for each
``(h, r)``, the slice of its known tails (and by ``r * E + t`` the known heads). A batch
gathers its slices with index arithmetic and masks those scores (NaN: neither above nor
tied); no dense ``E x E`` and no Python loop over triples.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

HITS = (1, 3, 10)


@dataclass
class KnownIndex:
    """For keys ``a * n_b + b``, the sorted unique keys and, per key, a slice of values."""

    keys: torch.Tensor     # (K,) sorted unique keys
    indptr: torch.Tensor   # (K + 1,)
    values: torch.Tensor   # (nnz,)
    n_b: int

    @classmethod
    def build(cls, a: torch.Tensor, b: torch.Tensor, v: torch.Tensor, n_b: int) -> KnownIndex:
        key = a.long() * n_b + b.long()
        order = torch.argsort(key * (int(v.max()) + 1 if len(v) else 1) + v, stable=True)
        key, v = key[order], v[order].long()
        keys, counts = torch.unique_consecutive(key, return_counts=True)
        indptr = torch.zeros(len(keys) + 1, dtype=torch.long)
        indptr[1:] = torch.cumsum(counts, 0)
        return cls(keys, indptr, v, n_b)

    def lookup(self, a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``(row, value)`` pairs: for each query row ``i``, every known value of
        ``(a[i], b[i])``."""
        key = a.long() * self.n_b + b.long()
        pos = torch.searchsorted(self.keys, key).clamp(max=max(len(self.keys) - 1, 0))
        hit = self.keys[pos] == key if len(self.keys) else torch.zeros_like(key, dtype=torch.bool)
        start = torch.where(hit, self.indptr[pos], 0)
        count = torch.where(hit, self.indptr[pos + 1] - self.indptr[pos], 0)
        rows = torch.repeat_interleave(torch.arange(len(key)), count)  # (nnz_batch,)
        offset = torch.arange(len(rows)) - torch.repeat_interleave(
            torch.cumsum(count, 0) - count, count)
        return rows, self.values[torch.repeat_interleave(start, count) + offset]


@dataclass
class Filter:
    """Known ``(h, r) -> tails`` and ``(r, t) -> heads`` of a set of true triples."""

    tails: KnownIndex
    heads: KnownIndex

    @classmethod
    def build(cls, known: torch.Tensor, num_entities: int, num_relations: int) -> Filter:
        h, r, t = known[:, 0], known[:, 1], known[:, 2]
        return cls(tails=KnownIndex.build(h, r, t, num_relations),
                   heads=KnownIndex.build(r, t, h, num_entities))


def realistic_ranks(scores: torch.Tensor, target: torch.Tensor,
                    rows: torch.Tensor | None = None, cols: torch.Tensor | None = None
                    ) -> torch.Tensor:
    """Realistic ranks of ``scores[i, target[i]]`` in each row of ``scores`` (B, E), with the
    ``(rows, cols)`` candidates filtered out (the target itself never is). ``scores`` is
    overwritten (the filtered entries become NaN)."""
    scores = scores.float()
    b = torch.arange(len(target))
    true = scores[b, target].clone()  # (B,)
    if rows is not None:
        scores[rows, cols] = float("nan")
        scores[b, target] = true
    above = (scores > true[:, None]).sum(1)
    tied = (scores == true[:, None]).sum(1)  # the target included
    return (2 * above + tied + 1).double() / 2  # ((above + 1) + (above + tied)) / 2


Scorer = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


@torch.no_grad()
def filtered_ranks(triples: torch.Tensor, score_t: Scorer, score_h: Scorer, flt: Filter | None,
                   *, batch_size: int = 256) -> tuple[torch.Tensor, torch.Tensor]:
    """Realistic (filtered when ``flt`` is given) ranks of each triple's tail and head.

    :param score_t: ``(h, r) -> (B, E)`` scores of every tail; ``score_h``: ``(r, t) -> (B,
        E)`` of every head.
    :returns: ``(tail_ranks, head_ranks)``, each ``(n,)`` float64.
    """
    tails, heads = [], []
    for start in range(0, len(triples), batch_size):  # over batches
        h, r, t = triples[start:start + batch_size].unbind(1)
        rows, cols = flt.tails.lookup(h, r) if flt is not None else (None, None)
        tails.append(realistic_ranks(score_t(h, r), t, rows, cols))
        rows, cols = flt.heads.lookup(r, t) if flt is not None else (None, None)
        heads.append(realistic_ranks(score_h(r, t), h, rows, cols))
    return torch.cat(tails), torch.cat(heads)


def rank_figures(ranks: torch.Tensor, prefix: str = "") -> dict[str, float]:
    """MRR, MR and Hits@1/3/10 of ``ranks``."""
    if not len(ranks):
        return {}
    out = {f"{prefix}mrr": float((1.0 / ranks).mean()), f"{prefix}mr": float(ranks.mean())}
    for k in HITS:
        out[f"{prefix}hits@{k}"] = float((ranks <= k).double().mean())
    return out


def ranking_figures(triples: torch.Tensor, tail_ranks: torch.Tensor, head_ranks: torch.Tensor,
                    relations=None, prefix: str = "test_") -> dict[str, float]:
    """Overall figures (both sides) and, with ``relations`` (names by index), per relation:
    ``<prefix>mrr``, ``<prefix>mrr/<relation>``..."""
    ranks = torch.cat([tail_ranks, head_ranks])
    out = rank_figures(ranks, prefix)
    out |= rank_figures(tail_ranks, f"{prefix}tail_")
    out |= rank_figures(head_ranks, f"{prefix}head_")
    if relations is not None:
        rel = torch.cat([triples[:, 1], triples[:, 1]])
        n = len(relations)
        count = torch.bincount(rel, minlength=n).double()
        recip = torch.bincount(rel, weights=1.0 / ranks, minlength=n)
        h10 = torch.bincount(rel, weights=(ranks <= 10).double(), minlength=n)
        for i in torch.nonzero(count).flatten().tolist():  # over relations
            out[f"{prefix}mrr/{relations[i]}"] = float(recip[i] / count[i])
            out[f"{prefix}hits@10/{relations[i]}"] = float(h10[i] / count[i])
    return out


def evaluate(model, triples: torch.Tensor, flt: Filter | None, *, relations=None,
             batch_size: int = 256, prefix: str = "test_") -> dict[str, float]:
    """The filtered figures of a model with the scoring contract
    (:class:`graphflow.kge.models.KgeModel`) on ``triples``."""
    was = model.training
    model.eval()
    try:
        tr, hr = filtered_ranks(triples, model.score_t, model.score_h, flt,
                                batch_size=batch_size)
    finally:
        model.train(was)
    return ranking_figures(triples, tr, hr, relations, prefix)
