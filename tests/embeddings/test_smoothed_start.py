"""The graph-smoothed start of skip-gram's input vectors: P^h R against a dense reference."""

from __future__ import annotations

import pytest
import torch

from graphflow.walks.csr import from_edges
from graphflow.embeddings.smoothed_start import smoothed
from graphflow.embeddings.skipgram import SkipGram, SkipGramSettings

CPU = torch.device("cpu")


def reference(vectors, src, dst, n, hops, weight=None):
    """Dense P = D_out^-1 A (fine for a handful of nodes), rows without out-edges kept."""
    a = torch.zeros(n, n, dtype=vectors.dtype)
    a.index_put_((src, dst), torch.ones(src.numel(), dtype=vectors.dtype)
                 if weight is None else weight.to(vectors.dtype), accumulate=True)
    out = a.sum(1, keepdim=True)
    p = a / out.clamp(min=1e-30)
    z = vectors
    for _ in range(hops):
        z = torch.where(out > 0, p @ z, z)
    z = z - z.mean(0, keepdim=True)
    return z * (vectors.std() / z.std())


def graph_edges():
    # a path 0-1-2-3 (both directions), a triangle 4-5-6 with one extra edge 4 -> 0, node 7
    # isolated and node 8 with in-edges only
    src = torch.tensor([0, 1, 1, 2, 2, 3, 4, 5, 5, 6, 6, 4, 4, 3])
    dst = torch.tensor([1, 0, 2, 1, 3, 2, 5, 4, 6, 5, 4, 6, 0, 8])
    return src, dst, 9


@pytest.mark.parametrize("hops", [1, 2, 5])
def test_smoothed_is_the_centred_rescaled_transition_power(hops):
    src, dst, n = graph_edges()
    r = torch.rand(n, 6, generator=torch.Generator().manual_seed(0), dtype=torch.float64) - 0.5
    got = smoothed(r, from_edges(src, dst, n), hops)
    assert torch.allclose(got, reference(r, src, dst, n, hops), atol=1e-12)
    assert got.std().item() == pytest.approx(r.std().item())
    assert torch.allclose(got.mean(0), torch.zeros(6, dtype=torch.float64), atol=1e-12)


def test_weighted_graph_steps_by_the_walk_s_transition_probabilities():
    src, dst, n = graph_edges()
    w = torch.arange(1, src.numel() + 1, dtype=torch.float64)
    r = torch.rand(n, 4, generator=torch.Generator().manual_seed(1), dtype=torch.float64) - 0.5
    got = smoothed(r, from_edges(src, dst, n, weight=w), 3)
    assert torch.allclose(got, reference(r, src, dst, n, 3, weight=w), atol=1e-12)


def test_float32_vectors_keep_small_weights_exact_past_2_24_total_weight():
    # The first edge in CSR order weighs 2^25: a float32 running sum past it is spaced 4
    # apart, so weights 1..13 taken as float32 differences would come out as 0 or 4.
    src, dst, n = graph_edges()
    w = torch.arange(1, src.numel() + 1, dtype=torch.float64)
    w[0] = 2.0**25
    assert w.sum() > 2**24
    r = torch.rand(n, 4, generator=torch.Generator().manual_seed(5)) - 0.5  # float32
    got = smoothed(r, from_edges(src, dst, n, weight=w), 3)
    want = reference(r.double(), src, dst, n, 3, weight=w)
    assert got.dtype == torch.float32
    assert torch.allclose(got.double(), want, atol=1e-5)


def test_zero_hops_and_a_graph_without_edges_leave_the_vectors_as_they_are():
    r = torch.rand(5, 3, generator=torch.Generator().manual_seed(2))
    empty = from_edges(torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64), 5)
    src, dst, n = graph_edges()
    for graph, hops in ((empty, 3), (from_edges(src[:0], dst[:0], 5), 0)):
        got = smoothed(r, graph, hops)
        assert torch.equal(got, r) and got is not r


def test_nodes_of_one_clique_start_closer_to_each_other_than_to_the_other_clique():
    k = 10
    idx = torch.arange(k)
    a, b = torch.meshgrid(idx, idx, indexing="ij")
    keep = a != b
    src = torch.cat([a[keep], a[keep] + k, torch.tensor([0, k])])
    dst = torch.cat([b[keep], b[keep] + k, torch.tensor([k, 0])])
    r = torch.rand(2 * k, 32, generator=torch.Generator().manual_seed(3)) - 0.5
    z = torch.nn.functional.normalize(smoothed(r, from_edges(src, dst, 2 * k), 4), dim=1)
    cos = z @ z.T
    same = torch.block_diag(torch.ones(k, k), torch.ones(k, k)).bool() & ~torch.eye(2 * k).bool()
    assert cos[same].mean() > 0.9 > cos[~same & ~torch.eye(2 * k).bool()].mean() + 1.0
    raw = torch.nn.functional.normalize(r, dim=1) @ torch.nn.functional.normalize(r, dim=1).T
    assert raw[same].mean().abs() < 0.2  # the random start has no such structure


def test_skipgram_starts_smoothed_only_when_asked_and_needs_the_graph_for_it():
    src, dst, n = graph_edges()
    graph = from_edges(src, dst, n)

    def model(hops, **kw):
        return SkipGram(n, SkipGramSettings(dim=8, init_hops=hops), graph.in_strength(), CPU,
                        torch.Generator().manual_seed(4), **kw)

    plain, warm = model(0), model(3, graph=graph)
    assert torch.equal(warm.emb[:n], smoothed(plain.emb[:n], graph, 3))
    assert torch.equal(warm.emb[n], plain.emb[n])  # the padding row is not a node
    assert torch.equal(warm.out_emb, plain.out_emb)  # output vectors start at 0 either way
    assert torch.equal(model(3, graph=graph).emb, warm.emb)  # same seed, same start
    with pytest.raises(ValueError, match="init_hops = 3 needs the walk graph"):
        model(3)
