r"""Compiled CPU random walks (Numba): each thread walks groups of walkers, one step at a time.

The torch path (:func:`graphflow.walks.node2vec.random_walks` on other devices) advances all
walkers a step at a time in a few dozen vectorised passes, which a GPU runs well and a CPU
spends mostly in memory traffic between passes. Here each thread (``prange`` over groups of
:data:`GROUP` walkers) advances its group a step at a time, one walker after the other, with no
temporaries: the walkers' reads of random CSR rows are independent, so the CPU overlaps their
cache misses. The same law, drawn the same way.

- **First-order step** (DeepWalk, and Node2Vec's first step): an edge of ``v`` uniformly, or by
  weight through a binary search of the row's slice of ``cumweight``.
- **Second-order step** (Node2Vec): the rejection sampler of the torch path (module docstring
  of :mod:`graphflow.walks.node2vec`): envelope :math:`h = \max(1, 1/q)`, the return edge's
  part above it as an outlier of area :math:`(1/p - h)\,w_{vt}`, heights below
  :math:`\min(1, 1/q)` accepted unseen, and in the band between the question "is ``(t, x)`` an
  edge?" answered by a binary search of ``t``'s sorted row (no hash set is built).

Draws are counter-based, as in :mod:`graphflow.sampling.native`: walker ``i``'s ``c``-th
uniform is a SplitMix64 hash of the call's seed, ``i`` and ``c``, so the walks are fixed by the
seed alone and are the same with any number of threads.

Which path runs is decided by :func:`supports` (a CPU graph); the thread count is the calling
thread's :func:`graphflow.sampling.native.threads`.
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit, prange

from graphflow.sampling.native import _GOLDEN, _mix, parallel
from graphflow.walks.csr import WalkGraph

_UNIT = 2.0 ** -53


def supports(graph: WalkGraph) -> bool:
    """Whether the compiled walks serve ``graph`` (on the CPU)."""
    return graph.device.type == "cpu"


@njit(inline="always")
def _draw(base, c):
    """Uniform float64 in ``[0, 1)``: the ``c``-th (uint64) draw of the walker keyed ``base``."""
    return np.float64(_mix(base + c) >> np.uint64(11)) * _UNIT


@njit(inline="always")
def _lower(indices, lo, hi, x):
    """First position in ``[lo, hi)`` of the sorted ``indices`` holding a value ``>= x``."""
    while lo < hi:
        mid = (lo + hi) >> 1
        if indices[mid] < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


@njit(inline="always")
def _by_weight(cumweight, lo, hi, target):
    """The edge of ``[lo, hi)`` whose weight interval holds ``target`` (as the torch path's
    ``searchsorted(right=True) - 1``, clamped into the row)."""
    a, b = lo, hi
    while a < b:
        mid = (a + b) >> 1
        if cumweight[mid] <= target:
            a = mid + 1
        else:
            b = mid
    return min(max(a - 1, lo), hi - 1)


@njit(inline="always")
def _step(indptr, indices, cumweight, weighted, biased, cur, prev, height, ret_in, ret_out, sure,
          q_above_one, base, c):
    """One step from ``cur`` (having come from ``prev``, -1 at the start): ``(next, c)``, the
    next node (-1 at a dead end) and the walker's draw counter after the step's draws."""
    one = np.uint64(1)
    lo = indptr[cur]
    hi = indptr[cur + 1]
    total = cumweight[hi] - cumweight[lo] if weighted else np.float64(hi - lo)
    if not total > 0:
        return -1, c  # a dead end
    if prev < 0 or not biased:
        u = _draw(base, c)
        c += one
        if weighted:
            pos = _by_weight(cumweight, lo, hi, cumweight[lo] + u * total)
        else:
            pos = lo + min(np.int64(u * (hi - lo)), hi - lo - 1)
        return indices[pos], c
    outlier = 0.0
    if ret_out > 0:  # the weight of the edges cur -> prev (their multiplicity)
        a = _lower(indices, lo, hi, prev)
        b = _lower(indices, a, hi, prev + 1)
        back = cumweight[b] - cumweight[a] if weighted else np.float64(b - a)
        outlier = ret_out * back
    area = height * total + outlier
    while True:
        u = _draw(base, c) * area
        c += one
        if u < outlier:  # landed in the outlier: return to prev
            return prev, c
        v = (u - outlier) / height  # uniform on [0, total)
        if weighted:
            pos = _by_weight(cumweight, lo, hi, cumweight[lo] + v)
            y = _draw(base, c) * height
            c += one
        else:
            offset = np.int64(v)
            y = (v - offset) * height
            pos = lo + min(offset, hi - lo - 1)
        cand = indices[pos]
        if cand == prev:
            accept = y < ret_in
        elif y < sure:
            accept = True
        else:  # the band [sure, height): adjacency of prev and cand decides
            p_lo = indptr[prev]
            p_hi = indptr[prev + 1]
            at = _lower(indices, p_lo, p_hi, cand)
            adjacent = at < p_hi and indices[at] == cand
            accept = adjacent if q_above_one else not adjacent
        if accept:
            return cand, c


GROUP = 16
"""Walkers advanced in turn, a step each, by one thread: their memory reads (a random CSR row
per step) are independent, so the CPU overlaps them instead of waiting on each in turn."""


@njit(inline="always")
def _walk_group(indptr, indices, cumweight, weighted, biased, starts, first, last, length,
                height, ret_in, ret_out, sure, q_above_one, seed, out):
    """Walk ``starts[first:last]`` into the rows ``out[first:last]`` (pre-filled with -1),
    step by step across the group; each walker draws from its own counter, so its walk is
    the same as alone."""
    g = last - first
    cur = np.empty(g, np.int64)
    prev = np.full(g, -1, np.int64)
    base = np.empty(g, np.uint64)
    count = np.zeros(g, np.uint64)
    for k in range(g):
        base[k] = _mix(seed ^ (np.uint64(first + k) * _GOLDEN))
        cur[k] = starts[first + k]
        out[first + k, 0] = cur[k]
    for s in range(1, length + 1):
        moving = 0
        for k in range(g):
            if cur[k] < 0:
                continue
            nxt, count[k] = _step(indptr, indices, cumweight, weighted, biased, cur[k], prev[k],
                                  height, ret_in, ret_out, sure, q_above_one, base[k], count[k])
            if nxt >= 0:
                out[first + k, s] = nxt
                moving += 1
            prev[k] = cur[k]
            cur[k] = nxt
        if moving == 0:
            return


@njit(parallel=True, nogil=True, cache=True)
def _walks_parallel(indptr, indices, cumweight, weighted, biased, starts, length, height, ret_in,
                    ret_out, sure, q_above_one, seed):
    n = starts.shape[0]
    out = np.full((n, length + 1), -1, np.int64)
    for group in prange((n + GROUP - 1) // GROUP):
        _walk_group(indptr, indices, cumweight, weighted, biased, starts, group * GROUP,
                    min(n, (group + 1) * GROUP), length, height, ret_in, ret_out, sure,
                    q_above_one, seed, out)
    return out


# The same loop without prange, compiled on its own (one function compiled both ways would
# share one entry of Numba's on-disk cache).
@njit(nogil=True, cache=True)
def _walks_serial(indptr, indices, cumweight, weighted, biased, starts, length, height, ret_in,
                  ret_out, sure, q_above_one, seed):
    n = starts.shape[0]
    out = np.full((n, length + 1), -1, np.int64)
    for group in range((n + GROUP - 1) // GROUP):
        _walk_group(indptr, indices, cumweight, weighted, biased, starts, group * GROUP,
                    min(n, (group + 1) * GROUP), length, height, ret_in, ret_out, sure,
                    q_above_one, seed, out)
    return out


_NO_WEIGHTS = np.zeros(1, np.float64)


def random_walks(graph: WalkGraph, starts: torch.Tensor, length: int, p: float, q: float,
                 generator: torch.Generator | None) -> torch.Tensor:
    """Walks from ``starts`` (int64 (B,)) on a CPU graph: int64 (B, length + 1), -1 after a
    dead end. One 63-bit seed is drawn from ``generator``."""
    seed = np.uint64(int(torch.randint(2**63 - 1, (1,), generator=generator)))
    height = max(1.0, 1.0 / q)
    weighted = graph.cumweight is not None
    args = (graph.indptr.numpy(), graph.indices.numpy(),
            graph.cumweight.numpy() if weighted else _NO_WEIGHTS, weighted,
            not (p == 1.0 and q == 1.0), starts.to(torch.int64).contiguous().numpy(),
            np.int64(length), height, min(1.0 / p, height), max(1.0 / p - height, 0.0),
            min(1.0, 1.0 / q), q > 1.0, seed)
    with parallel(starts.numel()) as run_parallel:
        out = _walks_parallel(*args) if run_parallel else _walks_serial(*args)
    return torch.from_numpy(out)
