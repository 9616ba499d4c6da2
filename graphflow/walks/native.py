r"""Compiled CPU random walks (Numba): each walker runs its ``length`` steps in one loop.

The torch path (:func:`graphflow.walks.node2vec.random_walks` on other devices) advances all
walkers a step at a time in a few dozen vectorised passes, which a GPU runs well and a CPU
spends mostly in memory traffic between passes. Here every walker is one loop over its steps,
over ``prange`` of the walkers, with no temporaries: the same law, drawn the same way.

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
def _walk(indptr, indices, cumweight, weighted, biased, start, length, height, ret_in, ret_out,
          sure, q_above_one, base, row):
    """Walk ``length`` steps from ``start`` into ``row`` (pre-filled with -1)."""
    c = np.uint64(0)
    one = np.uint64(1)
    row[0] = start
    cur = start
    prev = -1
    for s in range(1, length + 1):
        lo = indptr[cur]
        hi = indptr[cur + 1]
        total = cumweight[hi] - cumweight[lo] if weighted else np.float64(hi - lo)
        if not total > 0:
            return  # a dead end: the rest of the row stays -1
        if prev < 0 or not biased:
            u = _draw(base, c)
            c += one
            if weighted:
                pos = _by_weight(cumweight, lo, hi, cumweight[lo] + u * total)
            else:
                pos = lo + min(np.int64(u * (hi - lo)), hi - lo - 1)
            nxt = indices[pos]
        else:
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
                    nxt = prev
                    break
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
                    nxt = cand
                    break
        row[s] = nxt
        prev = cur
        cur = nxt


@njit(parallel=True, nogil=True, cache=True)
def _walks_parallel(indptr, indices, cumweight, weighted, biased, starts, length, height, ret_in,
                    ret_out, sure, q_above_one, seed):
    out = np.full((starts.shape[0], length + 1), -1, np.int64)
    for i in prange(starts.shape[0]):
        base = _mix(seed ^ (np.uint64(i) * _GOLDEN))
        _walk(indptr, indices, cumweight, weighted, biased, starts[i], length, height, ret_in,
              ret_out, sure, q_above_one, base, out[i])
    return out


# The same loop without prange, compiled on its own (one function compiled both ways would
# share one entry of Numba's on-disk cache).
@njit(nogil=True, cache=True)
def _walks_serial(indptr, indices, cumweight, weighted, biased, starts, length, height, ret_in,
                  ret_out, sure, q_above_one, seed):
    out = np.full((starts.shape[0], length + 1), -1, np.int64)
    for i in range(starts.shape[0]):
        base = _mix(seed ^ (np.uint64(i) * _GOLDEN))
        _walk(indptr, indices, cumweight, weighted, biased, starts[i], length, height, ret_in,
              ret_out, sure, q_above_one, base, out[i])
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
