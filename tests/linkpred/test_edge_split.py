"""link_split: pairs held out both ways, negatives are non-edges, seeded, split files, errors."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.io.synthetic import sbm
from graphflow.linkpred.edge_split import file_split, is_symmetric, random_split, sample_non_edges
from graphflow_plugins.transforms.link_split import LinkSplitOptions


def ring_graph(n: int = 40, chords: int = 30, seed: int = 0) -> dgl.DGLGraph:
    """An undirected graph (both directions of each pair) with a parallel edge and a loop."""
    gen = torch.Generator().manual_seed(seed)
    u = torch.cat([torch.arange(n), torch.randint(n, (chords,), generator=gen)])
    v = torch.cat([(torch.arange(n) + 1) % n, torch.randint(n, (chords,), generator=gen)])
    u, v = torch.cat([u, torch.tensor([3, 5])]), torch.cat([v, torch.tensor([4, 5])])
    g = dgl.graph((torch.cat([u, v]), torch.cat([v, u])), num_nodes=n)
    g.ndata["feat"] = torch.randn(n, 3, generator=gen)
    return g


def keys(src, dst, n):
    return set((src * n + dst).tolist())


def test_held_out_pairs_leave_both_directions_and_negatives_are_non_edges():
    g = ring_graph()
    n = g.num_nodes()
    full = keys(*g.edges(), n)
    assert is_symmetric(*g.edges(), n)
    train, split = random_split(g, val=0.1, test=0.2, negatives=2, undirected=True,
                                generator=torch.Generator().manual_seed(0))
    kept = keys(*train.edges(), n)
    for part in (split.val, split.test):
        assert part.num_pos > 0 and part.num_neg == 2 * part.num_pos
        u, v = part.pos
        # No held-out edge is in the training graph, in either direction.
        assert not (keys(u, v, n) | keys(v, u, n)) & kept
        assert keys(u, v, n) <= full or keys(v, u, n) <= full  # they were edges
        a, b = part.neg
        assert not (keys(a, b, n) | keys(b, a, n)) & full  # negatives: never an edge
        assert bool((a != b).all())
    assert train.ndata["feat"].shape == g.ndata["feat"].shape
    # Everything not held out stays (the parallel copies of a held-out pair leave too).
    held = keys(*split.positives(), n) | keys(*split.positives().flip(0), n)
    assert kept == full - held


def test_split_is_deterministic_with_a_seed():
    g = ring_graph()
    runs = [random_split(g, val=5, test=7, negatives=1, undirected=True,
                         generator=torch.Generator().manual_seed(s)) for s in (3, 3, 4)]
    (_, a), (_, b), (_, c) = runs
    assert torch.equal(a.test.pos, b.test.pos) and torch.equal(a.val.neg, b.val.neg)
    assert a.test.num_pos == 7 and a.val.num_pos == 5
    assert not torch.equal(a.test.pos, c.test.pos)


def test_directed_graph_holds_out_single_directions():
    g = dgl.graph((torch.tensor([0, 1, 2, 3, 1]), torch.tensor([1, 2, 3, 0, 0])), num_nodes=5)
    assert not is_symmetric(*g.edges(), 5)
    train, split = random_split(g, val=1, test=1, negatives=1, undirected=False,
                                generator=torch.Generator().manual_seed(0))
    assert train.num_edges() == 3
    assert not keys(*split.positives(), 5) & keys(*train.edges(), 5)


def test_fractions_summing_to_one_or_more_are_refused():
    with pytest.raises(ValueError, match=r"val \(0.5\) \+ test \(0.5\) add up to 1"):
        LinkSplitOptions(val=0.5, test=0.5)
    with pytest.raises(ValueError, match="negatives = 0: must be >= 1"):
        LinkSplitOptions(negatives=0)


def test_a_split_that_leaves_no_training_edges_is_refused():
    g = ring_graph(n=6, chords=0)
    with pytest.raises(DataError, match=r"leave no training edges: the graph has 6 distinct "
                                        r"undirected pairs"):
        random_split(g, val=3, test=4, negatives=1, undirected=True,
                     generator=torch.Generator().manual_seed(0))


def string_graph() -> GraphData:
    g = dgl.graph((torch.tensor([0, 1, 1, 2, 2, 3, 3, 0]), torch.tensor([1, 0, 2, 1, 3, 2, 0, 3])),
                  num_nodes=5)
    return GraphData(g, NodeIds(5, pa.array(["a", "b", "c", "d", "e"])), name="letters")


def test_split_file_in_original_ids(tmp_path):
    data = string_graph()
    path = tmp_path / "split.parquet"
    pq.write_table(pa.table({"src": ["a", "c", "b", "a"], "dst": ["b", "d", "c", "e"],
                             "split": ["val", "test", "train", "test"],
                             "label": [1, 1, 1, 0]}), path)
    train, split = file_split(data.graph, data.ids, path, negatives=1, undirected=True,
                              generator=torch.Generator().manual_seed(0))
    assert split.val.pos.tolist() == [[0], [1]] and split.test.pos.tolist() == [[2], [3]]
    assert split.test.neg.tolist() == [[0], [4]]  # the file's own negative is kept
    assert split.val.num_neg == 1  # drawn: the file lists none for val
    assert keys(*train.edges(), 5) == {1 * 5 + 2, 2 * 5 + 1, 3 * 5 + 0, 0 * 5 + 3}


def test_split_file_errors_name_file_row_and_value(tmp_path):
    data = string_graph()
    csv = tmp_path / "split.csv"
    csv.write_text("src,dst,split\na,b,val\nc,zz,test\n")
    with pytest.raises(DataError, match=r"split.csv:3: dst node id 'zz' is not a node of the "
                                        r"graph"):
        file_split(data.graph, data.ids, csv, negatives=1, undirected=True,
                   generator=torch.Generator())
    csv.write_text("src,dst,split\na,b,val\nc,d,testing\n")
    with pytest.raises(DataError, match=r"split.csv:3: split 'testing' is not one of train, "
                                        r"val, test"):
        file_split(data.graph, data.ids, csv, negatives=1, undirected=True,
                   generator=torch.Generator())
    pq.write_table(pa.table({"src": ["a"], "dst": ["b"], "split": ["val"], "label": [2]}),
                   tmp_path / "s.parquet")
    with pytest.raises(DataError, match=r"s.parquet, row 0: label 2 must be 1"):
        file_split(data.graph, data.ids, tmp_path / "s.parquet", negatives=1,
                   undirected=True, generator=torch.Generator())


def test_non_edges_are_distinct_and_not_edges():
    g = sbm(100, 2, 0, p_in=0.1, p_out=0.01, seed=1)
    neg = sample_non_edges(g.src, g.dst, 100, 500, torch.Generator().manual_seed(0))
    assert neg.shape == (2, 500)
    pairs = [tuple(p) for p in neg.t().tolist()]
    edges = set(zip(g.src.tolist(), g.dst.tolist()))
    assert len(set(pairs)) == 500 and all(u < v for u, v in pairs)
    assert not any((u, v) in edges for u, v in pairs)


def test_too_many_non_edges_is_an_error():
    src, dst = torch.tensor([0, 1, 1, 2, 0, 2]), torch.tensor([1, 0, 2, 1, 2, 0])
    with pytest.raises(ValueError, match="only 0"):
        sample_non_edges(src, dst, 3, 1)
