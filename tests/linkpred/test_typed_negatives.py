"""Typed negatives: tails of the relation's destination type, fixed ones never edges."""

import pytest
import torch

from graphflow.linkpred.edge_split import reverse_relations, typed_random_split
from graphflow.linkpred.negatives import corrupt_tails, typed_samplers
from graphflow.testing import make_typed_graph

WRITES = ("author", "writes", "paper")
CITES = ("paper", "cites", "paper")
IN = ("paper", "in", "venue")


def test_fixed_negatives_corrupt_the_tail_within_the_destination_type():
    g = make_typed_graph().graph
    k = 3
    _, sp = typed_random_split(g, targets=[WRITES, CITES, IN],
                               reverse=reverse_relations(g, None), val=0.1, test=0.2,
                               negatives=k, generator=torch.Generator().manual_seed(0))
    for rel in (WRITES, CITES, IN):
        src, dst = g.edges(etype=rel)
        n_d = g.num_nodes(rel[2])
        edges = set((src * n_d + dst).tolist())
        for part in (sp.rels[rel].val, sp.rels[rel].test):
            assert part.num_neg == k * part.num_pos
            assert torch.equal(part.neg[0], part.pos[0].repeat_interleave(k))  # same heads
            tails = part.neg[1]
            assert int(tails.min()) >= 0 and int(tails.max()) < n_d
            assert not set((part.neg[0] * n_d + tails).tolist()) & edges  # never an edge
            if rel[0] == rel[2]:
                assert not bool((part.neg[0] == tails).any())  # nor a self-pair
    # venues: 6 of them, so tails cover only venue ids although papers number 60
    assert int(sp.rels[IN].test.neg[1].max()) < 6 < g.num_nodes("paper")


def test_corrupt_tails_redraws_forbidden_pairs_and_gives_up_in_one_line():
    heads = torch.tensor([0, 1])
    forbidden = torch.tensor([0 * 4 + 0, 0 * 4 + 1, 0 * 4 + 2, 1 * 4 + 3])  # u * 4 + w
    w = corrupt_tails(heads, 4, 50, torch.Generator().manual_seed(0), forbidden=forbidden)
    assert set(w[:50].tolist()) == {3} and set(w[50:].tolist()) <= {0, 1, 2}
    with pytest.raises(ValueError, match="no destination that is not joined to source 0"):
        corrupt_tails(heads, 4, 2, torch.Generator().manual_seed(0),
                      forbidden=torch.tensor([0, 1, 2, 3]), max_rounds=5)


def test_training_samplers_draw_among_each_relations_destination_type():
    g = make_typed_graph().graph
    gen = torch.Generator().manual_seed(0)
    for kind in ("uniform", "degree"):
        samplers = typed_samplers(g, [WRITES, IN], kind)
        heads = g.edges(etype=IN)[0]
        venues = samplers[IN](heads, 4, gen)
        papers = samplers[WRITES](g.edges(etype=WRITES)[0], 2, gen)
        assert venues.shape == (4 * heads.numel(),) and int(venues.max()) < g.num_nodes("venue")
        assert int(papers.max()) < g.num_nodes("paper")
        assert torch.unique(venues).numel() == g.num_nodes("venue")  # every venue drawn
