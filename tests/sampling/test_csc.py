"""The in-neighbor CSC built from a DGL graph, with and without weights."""

from __future__ import annotations

import threading

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.sampling.csc import CSCGraph


def graph() -> dgl.DGLGraph:
    g = dgl.graph((torch.tensor([0, 1, 2, 2, 3]), torch.tensor([1, 0, 1, 3, 1])), num_nodes=5)
    g.edata["w"] = torch.tensor([1.0, 2.0, 0.5, 4.0, 0.0])
    return g


def test_rows_hold_the_in_edges():
    g = graph()
    csc = CSCGraph.from_dgl(g)
    assert csc.num_nodes == 5 and csc.num_edges == 5 and not csc.weighted
    assert csc.in_degrees().tolist() == [1, 3, 0, 1, 0]
    src, dst = g.edges()
    for v in range(5):
        lo, hi = int(csc.indptr[v]), int(csc.indptr[v + 1])
        e = csc.eids[lo:hi]
        assert (dst[e] == v).all() and torch.equal(src[e], csc.indices[lo:hi])


def test_weights_follow_csc_order_with_running_sum():
    csc = CSCGraph.from_dgl(graph(), weight="w")
    assert torch.equal(csc.weights, graph().edata["w"][csc.eids])
    assert torch.allclose(csc.cumw[1:], torch.cumsum(csc.weights.double(), 0))
    assert csc.cumw[0] == 0


@pytest.mark.parametrize("value,message", [
    (float("nan"), "edge 2 has weight nan"),
    (-1.0, "edge 2 has weight -1.0; sampling weights must be finite and >= 0"),
])
def test_bad_weights(value, message):
    g = graph()
    g.edata["w"][2] = value
    with pytest.raises(DataError, match=message):
        CSCGraph.from_dgl(g, weight="w")


def test_missing_weight_names_the_edge_data():
    with pytest.raises(DataError, match='weight = "score": the graph has no edge data "score" '
                                       r'\(edge data: w\)'):
        CSCGraph.from_dgl(graph(), weight="score")


def test_weight_of_the_wrong_shape():
    g = graph()
    g.edata["v"] = torch.ones(5, 3)
    with pytest.raises(DataError,
                       match=r"one real number per edge, got float32 of shape \(5, 3\)"):
        CSCGraph.from_dgl(g, weight="v")


def test_scratch_buffers_belong_to_the_calling_thread():
    # Prefetch workers relabel different batches at once: each needs its own flags.
    csc = CSCGraph.from_dgl(graph())
    mine = csc.scratch("flags", torch.bool, 0)
    assert csc.scratch("flags", torch.bool, 0) is mine and mine.shape == (5,)
    theirs = []
    worker = threading.Thread(target=lambda: theirs.append(csc.scratch("flags", torch.bool, 0)))
    worker.start()
    worker.join()
    assert theirs[0] is not mine and not theirs[0].any()


@pytest.mark.parametrize("eid_base", [0, 2**31 + 7])  # 8-byte int32 rows / 16-byte int64 rows
def test_gather_reads_source_and_edge_id_together(eid_base):
    indptr = torch.tensor([0, 2, 3, 5])
    indices = torch.tensor([2, 1, 0, 0, 2])
    eids = torch.tensor([4, 0, 1, 3, 2]) + eid_base
    csc = CSCGraph(indptr, indices, eids)
    assert csc._pairs.element_size() == (8 if eid_base == 0 else 16)
    pos = torch.tensor([4, 0, 0, 3])
    nbr, got = csc.gather(pos)
    assert nbr.dtype == got.dtype == torch.int64 and nbr.is_contiguous() and got.is_contiguous()
    assert nbr.tolist() == [2, 2, 2, 0]
    assert got.tolist() == [eid_base + e for e in (2, 4, 4, 3)]
    assert torch.equal(csc.indices, indices) and torch.equal(csc.eids, eids)
