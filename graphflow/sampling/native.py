r"""Native CPU kernels of the neighbor sampler: uniform picks and relabelling, compiled by Numba.

The torch and NumPy path (:mod:`graphflow.sampling.per_row`, :mod:`graphflow.sampling.relabel`)
drives dozens of small array operations per layer from Python; a second thread cannot speed it
up (two Python threads contend for the interpreter lock between operations of a few
microseconds). These kernels do the same work in compiled loops over rows and edges, run in
parallel over the calling thread's share of cores (``threads``), with no temporaries:

``pick(csc, dst, k, seed, threads)``
    Uniform sampling without replacement of ``min(deg_v, k)`` in-edges of every row ``v`` of
    ``dst`` (unweighted, ``0 < k <= MAX_FANOUT``), fused with the gather of their sources and
    edge ids: a row with ``deg <= k`` takes all its edges, in CSC order; a wider row runs
    Floyd's algorithm (Bentley & Floyd 1987) over ``[0, deg)``,

    .. math::
        \text{for } i = 0..k-1:\; j_i = d - k + i,\; t_i \sim U\{0..j_i\},\;
        S \leftarrow S \cup \{ t_i \text{ if } t_i \notin S \text{ else } j_i \},

    which takes exactly ``k`` steps whatever the degree. The draws are counter-based: ``t_i``
    comes from a 64-bit hash (SplitMix64's finaliser) of the layer's seed, the row's position
    and ``i``, so every row's sample is fixed by the seed alone and is the same with any
    number of threads, in any order. A row's ``k`` offsets are drawn first and its ``k`` edges
    read after, so that the reads, random accesses into the CSC, do not wait on each other.

``relabel_scan(flags, table, dst, nbr)`` / ``relabel_sorted(...)``
    The relabelling of :mod:`graphflow.sampling.relabel`, serial: mark the sampled sources in
    ``flags``, unmark the destinations, collect the marks in id order (a scan of all N flags),
    or, for few sampled edges, sort them, drop repeats and the destinations; then map global
    to local ids through ``table``; ``flags`` is left all-False again.

Both return the same structures as the torch path. Which path runs is decided per layer by
:func:`supports` (CPU, unweighted, without replacement, ``0 < k <= MAX_FANOUT``, node and edge
ids below 2**31); everything else keeps the torch path. Compiled code is cached on disk
(Numba's ``cache=True``: next to this module, or in the user's cache folder where that is
read-only), so a process compiles it once per machine and Numba version.

Threads: the kernels run with :func:`threads`'s count for the calling thread (Numba's setting
is per thread). The parallel versions run in one thread at a time (a lock; another thread that
finds it taken runs the serial versions, which give the same results), because Numba's
fallback threading layer (``workqueue``, where OpenMP is missing) aborts on concurrent
parallel calls; a process forked from this one runs the serial versions too.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numba
import numpy as np
import torch
from numba import njit, prange

MAX_FANOUT = 32
"""Fanouts up to this run Floyd's ``k`` steps per row; larger ones keep the torch path."""

PARALLEL_ROWS = 2048
"""Layers with fewer destination rows pick serially: waking the other threads costs more."""

_PARALLEL = threading.Lock()
_local = threading.local()
_PID = os.getpid()
"""The process that imported this module: a forked child runs the serial kernels (an OpenMP
thread pool does not survive ``fork``)."""

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)


def supports(csc, fanout: int, replace: bool) -> bool:
    """Whether :func:`pick` serves a layer of ``fanout`` on ``csc`` (see the module docstring)."""
    return (csc.device.type == "cpu" and not csc.weighted and not replace
            and 0 < fanout <= MAX_FANOUT and csc.pairs.dtype == torch.int64)


@contextmanager
def threads(count: int) -> Iterator[None]:
    """Run the kernels called inside with ``count`` threads (at most Numba's pool size)."""
    before = getattr(_local, "threads", None)
    _local.threads = max(1, min(int(count), numba.config.NUMBA_NUM_THREADS))
    try:
        yield
    finally:
        _local.threads = before


def current_threads() -> int:
    """The kernels' thread count for the calling thread (:func:`threads`; 1 when unset)."""
    count = getattr(_local, "threads", None)
    return 1 if count is None else count


@contextmanager
def parallel(rows: int) -> Iterator[bool]:
    """Yields whether the parallel kernel may run now on ``rows`` rows (with the caller's
    thread count)."""
    count = current_threads()
    if (count <= 1 or rows < PARALLEL_ROWS or os.getpid() != _PID
            or not _PARALLEL.acquire(blocking=False)):
        yield False
        return
    try:
        numba.set_num_threads(count)
        yield True
    finally:
        _PARALLEL.release()


# ------------------------------------------------------------------------------------ picks


@njit(inline="always")
def _mix(z):
    """SplitMix64's finaliser: a bijective 64-bit hash, well mixed in every bit."""
    z = (z ^ (z >> np.uint64(30))) * _M1
    z = (z ^ (z >> np.uint64(27))) * _M2
    return z ^ (z >> np.uint64(31))


@njit(inline="always")
def _pick_row(indptr, pairs, v, r, k, seed, o, nbr, eids):
    """Row ``r`` (node ``v``): its picks written at ``o`` of ``nbr`` / ``eids``."""
    start = indptr[v]
    d = indptr[v + 1] - start
    if d <= k:
        for i in range(d):
            nbr[o + i] = pairs[start + i, 0]
            eids[o + i] = pairs[start + i, 1]
        return
    base = _mix(seed ^ (np.uint64(r) * _GOLDEN))
    for i in range(k):  # the offsets first, kept in nbr: no load waits on another
        j = d - k + i
        t = np.int64((_mix(base + np.uint64(i)) >> np.uint64(11)) % np.uint64(j + 1))
        for q in range(i):
            if nbr[o + q] == t:  # t was picked before: take j, which never was
                t = j
                break
        nbr[o + i] = t
    for i in range(k):  # then the k edges, loads independent of each other
        at = start + nbr[o + i]
        nbr[o + i] = pairs[at, 0]
        eids[o + i] = pairs[at, 1]


@njit(inline="always")
def _outputs(indptr_out):
    """The (nnz,) source and edge-id arrays of a layer with row pointers ``indptr_out``."""
    total = indptr_out[indptr_out.shape[0] - 1]
    return np.empty(total, np.int64), np.empty(total, np.int64)


@njit(parallel=True, nogil=True, cache=True)
def _pick_parallel(indptr, pairs, dst, k, seed):
    n = dst.shape[0]
    indptr_out = np.zeros(n + 1, np.int64)
    for r in prange(n):
        v = dst[r]
        indptr_out[r + 1] = min(indptr[v + 1] - indptr[v], k)
    for r in range(n):
        indptr_out[r + 1] += indptr_out[r]
    nbr, eids = _outputs(indptr_out)
    for r in prange(n):
        _pick_row(indptr, pairs, dst[r], r, k, seed, indptr_out[r], nbr, eids)
    return indptr_out, nbr, eids


# _pick_parallel's loops without prange, as a function of its own: one function compiled
# both ways would share one entry of Numba's on-disk cache.
@njit(nogil=True, cache=True)
def _pick_serial(indptr, pairs, dst, k, seed):
    n = dst.shape[0]
    indptr_out = np.zeros(n + 1, np.int64)
    for r in range(n):
        v = dst[r]
        indptr_out[r + 1] = indptr_out[r] + min(indptr[v + 1] - indptr[v], k)
    nbr, eids = _outputs(indptr_out)
    for r in range(n):
        _pick_row(indptr, pairs, dst[r], r, k, seed, indptr_out[r], nbr, eids)
    return indptr_out, nbr, eids


def pick(csc, dst: torch.Tensor, fanout: int,
         generator: torch.Generator | None) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Uniform picks without replacement with their sources and edge ids (module docstring).

    :param csc: a :class:`~graphflow.sampling.csc.CSCGraph` that :func:`supports` the layer.
    :param dst: int64 (n,) destination ids.
    :param generator: the one 63-bit seed of the layer is drawn from it.
    :returns: ``indptr`` int64 (n + 1,), ``nbr`` and ``eids`` int64 (nnz,), rows in the order
        of ``dst``.
    """
    seed = np.uint64(int(torch.randint(2**63 - 1, (1,), generator=generator)))
    pairs = csc.pairs.numpy().view(np.int32).reshape(-1, 2)  # (E, 2): source, edge id
    args = (csc.indptr.numpy(), pairs, dst.contiguous().numpy(), np.int64(fanout), seed)
    with parallel(dst.shape[0]) as run_parallel:
        out = _pick_parallel(*args) if run_parallel else _pick_serial(*args)
    return tuple(torch.from_numpy(a) for a in out)  # type: ignore[return-value]


# ------------------------------------------------------------------------------- relabelling


@njit(inline="always")
def _local_ids(table, dst, new, nbr):
    """``table`` mapping ``dst`` to ``0..n-1`` and ``new`` to ``n..``; the local id of each
    ``nbr``."""
    n = dst.shape[0]
    for i in range(n):
        table[dst[i]] = i
    for j in range(new.shape[0]):
        table[new[j]] = n + j
    local = np.empty(nbr.shape[0], np.int64)
    for e in range(nbr.shape[0]):
        local[e] = table[nbr[e]]
    return local


@njit(nogil=True, cache=True)
def _relabel_scan(flags, table, dst, nbr):
    for e in range(nbr.shape[0]):
        flags[nbr[e]] = True
    for i in range(dst.shape[0]):
        flags[dst[i]] = False
    total = 0
    for u in range(flags.shape[0]):
        total += flags[u]
    new = np.empty(total, np.int64)
    at = 0
    for u in range(flags.shape[0]):
        if flags[u]:
            flags[u] = False
            new[at] = u
            at += 1
    return new, _local_ids(table, dst, new, nbr)


@njit(nogil=True, cache=True)
def _relabel_sorted(flags, table, dst, nbr):
    for i in range(dst.shape[0]):
        flags[dst[i]] = True
    ordered = np.sort(nbr)
    new = np.empty(nbr.shape[0], np.int64)
    count, last = 0, -1
    for u in ordered:
        if u != last:
            last = u
            if not flags[u]:
                new[count] = u
                count += 1
    for i in range(dst.shape[0]):
        flags[dst[i]] = False
    new = new[:count].copy()
    return new, _local_ids(table, dst, new, nbr)


def relabel_scan(flags: torch.Tensor, table: torch.Tensor, dst: torch.Tensor,
                 nbr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``new`` (sorted sampled sources that are not destinations) and ``local`` (nnz,).

    :param flags: bool (N,) all False (left so); :param table: int32 or int64 (N,) scratch.
    :param dst: int64 (n,) distinct destinations; :param nbr: int64 (nnz,) sampled sources.
    """
    return _relabelled(_relabel_scan, flags, table, dst, nbr)


def relabel_sorted(flags: torch.Tensor, table: torch.Tensor, dst: torch.Tensor,
                   nbr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """:func:`relabel_scan`'s result found by sorting ``nbr`` instead of scanning all N flags
    (for an ``nbr`` much smaller than N): the flags mark only the destinations, and are left
    all-False again."""
    return _relabelled(_relabel_sorted, flags, table, dst, nbr)


def _relabelled(kernel, flags: torch.Tensor, table: torch.Tensor, dst: torch.Tensor,
                nbr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    new, local = kernel(flags.numpy(), table.numpy(), dst.contiguous().numpy(),
                        nbr.contiguous().numpy())
    return torch.from_numpy(new), torch.from_numpy(local)
