"""Filtered ranking: exact agreement with a brute-force reference, ties included."""

from __future__ import annotations

import torch

from graphflow.kge.evaluate import Filter, filtered_ranks, ranking_figures


def brute_force(triples, known, scores):
    """The protocol by the definition: loop over triples and candidates."""
    known = {tuple(x) for x in known.tolist()}
    tails, heads = [], []
    for h, r, t in triples.tolist():
        s = scores[h, r, t]
        above = tied = 0
        for e in range(scores.shape[0]):
            if e != t and (h, r, e) in known:
                continue
            above += bool(scores[h, r, e] > s)
            tied += bool(scores[h, r, e] == s)
        tails.append(((above + 1) + (above + tied)) / 2)
        above = tied = 0
        for e in range(scores.shape[0]):
            if e != h and (e, r, t) in known:
                continue
            above += bool(scores[e, r, t] > s)
            tied += bool(scores[e, r, t] == s)
        heads.append(((above + 1) + (above + tied)) / 2)
    return torch.tensor(tails, dtype=torch.float64), torch.tensor(heads, dtype=torch.float64)


def test_matches_brute_force_with_ties():
    g = torch.Generator().manual_seed(0)
    E, R = 13, 3
    scores = torch.randint(0, 4, (E, R, E), generator=g).float()  # many ties
    known = torch.unique(torch.stack([torch.randint(0, E, (80,), generator=g),
                                      torch.randint(0, R, (80,), generator=g),
                                      torch.randint(0, E, (80,), generator=g)], 1), dim=0)
    test = known[torch.randperm(len(known), generator=g)[:30]]
    flt = Filter.build(known, E, R)
    tr, hr = filtered_ranks(test, lambda h, r: scores[h, r, :], lambda r, t: scores[:, r, t].T,
                            flt, batch_size=7)
    bt, bh = brute_force(test, known, scores)
    assert torch.equal(tr, bt) and torch.equal(hr, bh)
    assert (tr % 1 == 0.5).any()  # ties were met
    figs = ranking_figures(test, tr, hr, ["a", "b", "c"])
    ranks = torch.cat([bt, bh])
    assert abs(figs["test_mrr"] - float((1 / ranks).mean())) < 1e-12
    assert abs(figs["test_hits@3"] - float((ranks <= 3).double().mean())) < 1e-12
    sel = torch.cat([test[:, 1], test[:, 1]]) == 1
    assert abs(figs["test_mrr/b"] - float((1 / ranks[sel]).mean())) < 1e-12


def test_unfiltered_is_the_raw_rank():
    scores = torch.tensor([[3.0, 1.0, 3.0, 5.0]])  # target 0: one above, one tie
    tr, _ = filtered_ranks(torch.tensor([[0, 0, 0]]), lambda h, r: scores,
                           lambda r, t: scores, None)
    assert tr.tolist() == [2.5]
