"""The typed link split: per-relation hold-out, reverse edges out too, no leakage."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.linkpred.edge_split import (pair_keys, relation_names, reverse_relations,
                                           target_relations, typed_random_split)
from graphflow.testing import make_typed_graph

WRITES = ("author", "writes", "paper")
REV_WRITES = ("paper", "rev-writes", "author")
CITES = ("paper", "cites", "paper")
IN = ("paper", "in", "venue")


def split(g, targets, val=0.1, test=0.2, negatives=2, seed=0, pairs=None):
    reverse = reverse_relations(g, pairs)
    return typed_random_split(g, targets=targets, reverse=reverse, val=val, test=test,
                              negatives=negatives, generator=torch.Generator().manual_seed(seed))


def keys(g, rel, flip=False):
    s, d = g.edges(etype=rel)
    if flip:
        s, d = d, s
    return set(pair_keys(s, d, g.num_nodes(rel[0] if flip else rel[2]), False).tolist())


def test_held_out_edges_leave_the_relation_and_their_reverse_edges_leave_rev():
    g = make_typed_graph().graph
    train, sp = split(g, [WRITES, CITES])
    assert sp.relations == [WRITES, CITES]
    assert sp.reverse == {WRITES: REV_WRITES, CITES: None}
    for rel in (WRITES, CITES):
        s = sp.rels[rel]
        held = torch.cat([s.val.pos, s.test.pos], dim=1)
        n_d = g.num_nodes(rel[2])
        held_keys = set(pair_keys(held[0], held[1], n_d, False).tolist())
        assert held_keys <= keys(g, rel)  # they were edges
        assert not held_keys & keys(train, rel)  # and are no longer
    w = sp.rels[WRITES]
    held = torch.cat([w.val.pos, w.test.pos], dim=1)
    rev_keys = keys(train, REV_WRITES, flip=True)  # (author, paper) keys of rev-writes
    assert not set(pair_keys(held[0], held[1], g.num_nodes("paper"), False).tolist()) & rev_keys
    # every other edge stays: the relation loses exactly its held-out edges (no repeats here
    # beyond the parallel copies of a held-out pair)
    assert train.num_edges(IN) == g.num_edges(IN)
    rev_in = ("venue", "rev-in", "paper")
    assert train.num_edges(rev_in) == g.num_edges(rev_in)
    lost = g.num_edges(WRITES) - train.num_edges(WRITES)
    assert lost == g.num_edges(REV_WRITES) - train.num_edges(REV_WRITES) >= held.shape[1]
    assert torch.equal(train.nodes["paper"].data["feat"], g.nodes["paper"].data["feat"])


def test_fractions_are_per_relation_and_the_split_is_seeded():
    g = make_typed_graph().graph
    _, a = split(g, [WRITES, IN], val=0.1, test=0.2)
    _, b = split(g, [WRITES, IN], val=0.1, test=0.2)
    for rel in (WRITES, IN):
        s, d = g.edges(etype=rel)
        distinct = torch.unique(s * g.num_nodes(rel[2]) + d).numel()
        assert a.rels[rel].val.num_pos == round(0.1 * distinct)
        assert a.rels[rel].test.num_pos == round(0.2 * distinct)
        assert torch.equal(a.rels[rel].test.pos, b.rels[rel].test.pos)
        assert torch.equal(a.rels[rel].test.neg, b.rels[rel].test.neg)
    _, c = split(g, [WRITES, IN], seed=1)
    assert not torch.equal(a.rels[WRITES].test.pos, c.rels[WRITES].test.pos)


def test_a_symmetric_relation_within_one_type_is_held_out_both_ways():
    u = torch.tensor([0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 0, 2])
    v = torch.tensor([1, 0, 2, 1, 3, 2, 4, 3, 5, 4, 2, 0])
    g = dgl.heterograph({("a", "knows", "a"): (u, v),
                         ("a", "likes", "b"): (torch.arange(6), torch.arange(6) % 2)},
                        num_nodes_dict={"a": 6, "b": 2})
    train, sp = split(g, [("a", "knows", "a")], val=1, test=1, negatives=1)
    s = sp.rels[("a", "knows", "a")]
    assert s.undirected
    held = torch.cat([s.val.pos, s.test.pos], dim=1)
    tu, tv = train.edges(etype="knows")
    left = set(zip(tu.tolist(), tv.tolist()))
    for a, b in held.t().tolist():
        assert (a, b) not in left and (b, a) not in left
    assert train.num_edges("knows") == g.num_edges("knows") - 2 * held.shape[1]


def test_target_all_leaves_out_reverse_relations_and_names_resolve():
    g = make_typed_graph().graph
    reverse = reverse_relations(g, None)
    assert set(target_relations(g, "all", reverse)) == {WRITES, CITES, IN}
    assert target_relations(g, "writes", reverse) == [WRITES]
    named = ["paper:cites:paper", "writes", "writes"]
    assert target_relations(g, named, reverse) == [CITES, WRITES]
    with pytest.raises(ConfigError, match='target "buys" is not a relation.*writes'):
        target_relations(g, "buys", reverse)
    assert relation_names(g)[WRITES] == "writes"


def test_a_relation_name_shared_by_two_canonical_relations_needs_the_canonical_form():
    g = dgl.heterograph({("a", "to", "b"): ([0, 1], [1, 0]), ("b", "to", "a"): ([0, 1], [0, 1])},
                        num_nodes_dict={"a": 2, "b": 2})
    with pytest.raises(ConfigError, match='names 2 relations.*"src_type:relation:dst_type"'):
        target_relations(g, "to", reverse_relations(g, None))
    assert relation_names(g)[("a", "to", "b")] == "a:to:b"


def test_named_reverse_pairs_replace_the_rev_naming():
    g = dgl.heterograph({("u", "buys", "i"): ([0, 1, 2, 3, 0, 1], [0, 1, 2, 0, 1, 2]),
                         ("i", "bought_by", "u"): ([0, 1, 2, 0, 1, 2], [0, 1, 2, 3, 0, 1])},
                        num_nodes_dict={"u": 4, "i": 3})
    reverse = reverse_relations(g, {"buys": "bought_by"})
    assert reverse[("u", "buys", "i")] == ("i", "bought_by", "u")
    assert target_relations(g, "all", reverse, {"buys": "bought_by"}) == [("u", "buys", "i")]
    train, sp = split(g, [("u", "buys", "i")], val=1, test=1, negatives=1,
                      pairs={"buys": "bought_by"})
    held = torch.cat([sp.rels[("u", "buys", "i")].val.pos, sp.rels[("u", "buys", "i")].test.pos], 1)
    bu, bi = train.edges(etype="bought_by")
    left = set(zip(bi.tolist(), bu.tolist()))  # as (user, item)
    assert not {tuple(p) for p in held.t().tolist()} & left
    assert train.num_edges("bought_by") == 4
    with pytest.raises(ConfigError, match="a reverse relation runs from"):
        reverse_relations(g, {"buys": "buys"})


def test_too_large_a_hold_out_names_the_relation():
    g = make_typed_graph().graph
    with pytest.raises(DataError, match=r"relation paper:in:venue: val \(30\) \+ test \(30\)"):
        split(g, [IN], val=30, test=30)


def test_reverse_none_keeps_reverse_edges_and_unknown_names_are_refused():
    g = make_typed_graph().graph
    reverse = reverse_relations(g, {})
    assert set(reverse.values()) == {None}
    assert REV_WRITES in target_relations(g, "all", reverse, {})  # no pairs: every relation
    train, sp = split(g, [WRITES], pairs={})
    assert train.num_edges(REV_WRITES) == g.num_edges(REV_WRITES)
    assert train.num_edges(WRITES) < g.num_edges(WRITES)
    with pytest.raises(ConfigError, match='reverse "wrote" is not a relation of the graph'):
        reverse_relations(g, {"writes": "wrote"})
