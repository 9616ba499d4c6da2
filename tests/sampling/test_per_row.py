"""Per-row neighbor selection: validity, distinctness, fanouts, and the sampling law."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy.stats import chisquare

from graphflow.compat.dgl import dgl
from graphflow.sampling import per_row
from graphflow.sampling.csc import CSCGraph


def star_rows(num_rows: int, degree: int, weights: torch.Tensor | None = None) -> CSCGraph:
    """``num_rows`` destinations (ids ``degree..``), each with in-edges from nodes 0..degree-1."""
    src = torch.arange(degree).repeat(num_rows)
    dst = torch.arange(num_rows).repeat_interleave(degree) + degree
    g = dgl.graph((src, dst), num_nodes=degree + num_rows)
    if weights is not None:
        g.edata["w"] = weights.repeat(num_rows)
        return CSCGraph.from_dgl(g, weight="w")
    return CSCGraph.from_dgl(g)


def mixed_graph() -> tuple[CSCGraph, torch.Tensor]:
    """Rows of in-degree 0, 1, 3, 5, 6, 40 and 3000 (a hub), as destinations 0..6."""
    degrees = [0, 1, 3, 5, 6, 40, 3000]
    gen = torch.Generator().manual_seed(1)
    src, dst = [], []
    for v, d in enumerate(degrees):
        src.append(torch.randperm(5000, generator=gen)[:d] + 7)
        dst.append(torch.full((d,), v))
    g = dgl.graph((torch.cat(src), torch.cat(dst)), num_nodes=5007)
    return CSCGraph.from_dgl(g), torch.tensor(degrees)


def split(indptr: torch.Tensor, values: torch.Tensor) -> list[torch.Tensor]:
    return list(torch.split(values, (indptr[1:] - indptr[:-1]).tolist()))


@pytest.mark.parametrize("fanout", [1, 5, 6, 39])
def test_without_replacement_distinct_valid_and_fanout_respected(fanout):
    csc, degrees = mixed_graph()
    dst = torch.arange(7)
    gen = torch.Generator().manual_seed(0)
    for _ in range(20):
        indptr, pos = per_row.sample_rows(csc, dst, fanout, replace=False, generator=gen)
        for v, p in enumerate(split(indptr, pos)):
            lo, hi = int(csc.indptr[v]), int(csc.indptr[v + 1])
            assert ((p >= lo) & (p < hi)).all(), "sampled an edge outside the row"
            assert p.unique().numel() == p.numel(), "duplicate neighbor without replacement"
            assert p.numel() == min(int(degrees[v]), fanout)
            if degrees[v] <= fanout:
                assert sorted(p.tolist()) == list(range(lo, hi)), "low degree: all neighbors"


def test_with_replacement_takes_fanout_draws_from_nonempty_rows():
    csc, degrees = mixed_graph()
    indptr, pos = per_row.sample_rows(csc, torch.arange(7), 4, replace=True,
                                   generator=torch.Generator().manual_seed(0))
    counts = indptr[1:] - indptr[:-1]
    assert counts.tolist() == [0, 4, 4, 4, 4, 4, 4]
    for v, p in enumerate(split(indptr, pos)):
        assert ((p >= csc.indptr[v]) & (p < csc.indptr[v + 1])).all()


def test_fanout_minus_one_takes_every_in_edge():
    csc, degrees = mixed_graph()
    dst = torch.tensor([6, 0, 3])
    indptr, pos = per_row.sample_rows(csc, dst, -1, replace=False, generator=None)
    expected = torch.cat([torch.arange(csc.indptr[v], csc.indptr[v + 1]) for v in dst.tolist()])
    assert torch.equal(pos, expected)
    assert (indptr[1:] - indptr[:-1]).tolist() == [3000, 0, 5]


@pytest.mark.parametrize("degree,fanout", [(6, 5), (20, 5), (500, 10)])
def test_uniform_without_replacement_is_uniform(degree, fanout):
    csc = star_rows(4000, degree)
    dst = torch.arange(4000) + degree
    indptr, pos = per_row.sample_rows(csc, dst, fanout, replace=False,
                                   generator=torch.Generator().manual_seed(3))
    picked = csc.indices[pos]  # source ids 0..degree-1
    freq = torch.bincount(picked, minlength=degree).double()
    assert freq.sum() == 4000 * fanout
    assert chisquare(freq.numpy()).pvalue > 0.001  # each neighbor with p = fanout / degree


def test_floyd_hub_rows_are_uniform_and_distinct():
    deg = torch.full((3000,), 50_000)
    sel = per_row.floyd(deg, 8, torch.Generator().manual_seed(5))  # (8, 3000)
    assert sel.min() >= 0 and sel.max() < 50_000
    srt = sel.sort(dim=0).values
    assert not (srt[1:] == srt[:-1]).any()
    buckets = torch.bincount(sel.reshape(-1) // 5000, minlength=10).double()
    assert chisquare(buckets.numpy()).pvalue > 0.001


def test_floyd_int32_matches_int64():
    deg = torch.randint(10, 400, (5000,), generator=torch.Generator().manual_seed(0))
    a = per_row.floyd(deg, 9, torch.Generator().manual_seed(1), dtype=torch.int64)
    b = per_row.floyd(deg, 9, torch.Generator().manual_seed(1), dtype=torch.int32)
    assert torch.equal(a, b.long())


def test_cpu_floyd_draws_from_pcg64_seeded_by_the_generator():
    # The CPU path: one 64-bit seed from the torch generator, u from NumPy's PCG64.
    deg = torch.randint(6, 50, (300,), generator=torch.Generator().manual_seed(0))
    seed = int(torch.randint(2**63 - 1, (1,), generator=torch.Generator().manual_seed(9)))
    u = np.random.default_rng(seed).random((6, 300))
    expected = per_row.floyd_numpy(u, deg.numpy(), dtype=np.int64)
    assert torch.equal(per_row.floyd(deg, 6, torch.Generator().manual_seed(9)),
                       torch.from_numpy(expected))


@pytest.mark.parametrize("num_rows", [50, per_row.PAIRWISE_ROWS + 100])
def test_floyd_torch_and_numpy_agree_with_textbook_floyd(num_rows):
    # torch's steps (the GPU path; one (i, R) compare per step below PAIRWISE_ROWS rows,
    # pairwise above) and NumPy's (the CPU path) against Floyd written out row by row.
    k = 8
    gen = torch.Generator().manual_seed(2)
    deg = torch.randint(k, 30, (num_rows,), generator=gen)
    u = torch.rand((k, num_rows), generator=gen, dtype=torch.float64)
    by_torch = per_row.floyd_torch(u, deg, dtype=torch.int64)
    for np_type in (np.int32, np.int64):
        by_numpy = per_row.floyd_numpy(u.numpy(), deg.numpy(), dtype=np_type)
        assert torch.equal(by_torch, torch.from_numpy(by_numpy).long())
    for col in (0, 17, num_rows - 1):
        d, chosen = int(deg[col]), []
        for i in range(k):
            j = d - k + i
            t = int(float(u[i, col]) * (j + 1))
            chosen.append(j if t in chosen else t)
        assert by_torch[:, col].tolist() == chosen


def test_weighted_with_replacement_is_weight_proportional():
    w = torch.tensor([1.0, 2.0, 3.0, 0.0, 4.0])
    csc = star_rows(3000, 5, w)
    indptr, pos = per_row.sample_rows(csc, torch.arange(3000) + 5, 4, replace=True,
                                   generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(csc.indices[pos], minlength=5).double()
    assert freq[3] == 0, "a zero-weight edge was sampled"
    keep = w > 0
    expected = w[keep].double() / w.sum().double() * freq.sum()
    assert chisquare(freq[keep].numpy(), expected.numpy()).pvalue > 0.001


def test_weighted_single_draw_without_replacement_is_weight_proportional():
    w = torch.tensor([1.0, 2.0, 3.0, 0.0, 4.0])
    csc = star_rows(4000, 5, w)
    indptr, pos = per_row.sample_rows(csc, torch.arange(4000) + 5, 1, replace=False,
                                   generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(csc.indices[pos], minlength=5).double()
    keep = w > 0
    assert freq[3] == 0
    expected = w[keep].double() / w.sum().double() * freq.sum()
    assert chisquare(freq[keep].numpy(), expected.numpy()).pvalue > 0.001


def test_weighted_without_replacement_distinct_and_skips_zero_weights():
    w = torch.tensor([1.0, 0.0, 3.0, 0.0, 4.0, 2.0])
    csc = star_rows(500, 6, w)
    dst = torch.arange(500) + 6
    for fanout in (2, 4, 6, -1):
        indptr, pos = per_row.sample_rows(csc, dst, fanout, replace=False,
                                       generator=torch.Generator().manual_seed(fanout + 9))
        counts = indptr[1:] - indptr[:-1]
        assert (counts == (4 if fanout < 0 else min(fanout, 4))).all()
        picked = csc.indices[pos]
        assert not ((picked == 1) | (picked == 3)).any()
        for p in split(indptr, pos)[:50]:
            assert p.unique().numel() == p.numel()
    # Heavier neighbors are picked first: with fanout 2, weight 4 beats weight 1.
    indptr, pos = per_row.sample_rows(csc, dst, 2, replace=False,
                                   generator=torch.Generator().manual_seed(0))
    freq = torch.bincount(csc.indices[pos], minlength=6)
    assert freq[4] > freq[5] > freq[0]


def test_cpu_positions_match_the_torch_formula():
    # The CPU reads the masked (n, k) offsets with NumPy; the device path with masked_select.
    csc, degrees = mixed_graph()
    dst = torch.tensor([6, 0, 3, 5, 1, 4, 2])
    indptr, pos = per_row.sample_rows(csc, dst, 5, replace=False,
                                   generator=torch.Generator().manual_seed(4))
    deg = degrees[dst]
    off = per_row.floyd(deg.clamp(min=5), 5, torch.Generator().manual_seed(4),
                     dtype=torch.int32).t()
    want = torch.masked_select(csc.indptr[dst].unsqueeze(1) + off, off < deg.unsqueeze(1))
    assert torch.equal(pos, want)
    assert torch.equal(indptr, per_row.pointers(deg.clamp(max=5)))


def test_large_fanouts_use_random_keys_and_stay_uniform():
    fanout = per_row.FLOYD_MAX_FANOUT + 8
    csc = star_rows(1500, fanout + 20)
    dst = torch.arange(1500) + fanout + 20
    indptr, pos = per_row.sample_rows(csc, dst, fanout, replace=False,
                                   generator=torch.Generator().manual_seed(6))
    assert ((indptr[1:] - indptr[:-1]) == fanout).all()
    for p in split(indptr, pos)[:100]:
        assert p.unique().numel() == fanout
    freq = torch.bincount(csc.indices[pos], minlength=fanout + 20).double()
    assert chisquare(freq.numpy()).pvalue > 0.001
    csc_mixed, degrees = mixed_graph()
    indptr, pos = per_row.sample_rows(csc_mixed, torch.arange(7), fanout, replace=False,
                                   generator=torch.Generator().manual_seed(0))
    assert (indptr[1:] - indptr[:-1]).tolist() == degrees.clamp(max=fanout).tolist()
