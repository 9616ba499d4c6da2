"""Relabel sampled sources to block-local ids, destinations first (vectorised, no dict).

A block's source nodes are its destination nodes ``dst`` (n,) followed by the other sampled
sources, each once. With ``new = sorted(unique(nbr) \\ dst)``::

    src_nodes = cat(dst, new)                    # (n + n_new,)
    local[e]  = position of nbr[e] in src_nodes  # (nnz,)

Two persistent scratch buffers of the graph's size, on the graph's device (one pair per
sampling thread, see :meth:`~graphflow.sampling.csc.CSCGraph.scratch`), do this without a
sort of ``nbr`` and without a hash map: a bool ``flags`` (N,) marks the sampled sources, and
an int32 ``table`` (N,) maps global to local id (int64 from N = 2**31 on). ``flags`` is
restored to all-False before returning; ``table`` needs no reset, because every entry read is
written first.

The table is int32 because local ids are below N: 4 MB per sampling thread at 1M nodes
instead of 8, so more of its random writes and reads hit the cache.

For a small ``nbr`` relative to ``N`` the O(N) scan of ``flags`` would dominate, so
``new`` is found by ``torch.unique(nbr)`` instead; both paths give the same sorted ``new``.
On the CPU both paths run compiled (:func:`graphflow.sampling.native.relabel_scan`,
:func:`~graphflow.sampling.native.relabel_sorted`, the sort in place of ``unique``), with the
same result.
"""

from __future__ import annotations

import torch

from graphflow.sampling import native
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.per_row import flat_nonzero

# Below nnz < N / SCAN_RATIO a sort of the sampled ids is cheaper than a scan of all N flags
# (measured on the CPU: at nnz = N / 50 the scan is already twice as fast).
SCAN_RATIO = 64


def relabel(csc: CSCGraph, dst: torch.Tensor,
            nbr: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Local ids of ``nbr`` over ``src_nodes = cat(dst, new)``.

    :param csc: the graph whose scratch buffers are used (same device as ``dst``).
    :param dst: int64 (n,) distinct destination ids.
    :param nbr: int64 (nnz,) sampled source ids.
    :returns: ``src_nodes`` int64 (n + n_new,), ``local`` int64 (nnz,) in ``[0, n + n_new)``.
    """
    n = dst.shape[0]
    device = dst.device
    flags = csc.scratch("flags", torch.bool, 0)  # (N,) all False between calls
    table = csc.scratch("table", index_dtype(csc.num_nodes), -1)  # (N,) global -> local id
    if device.type == "cpu":  # the same steps, compiled
        small = nbr.shape[0] * SCAN_RATIO < csc.num_nodes
        new, local = (native.relabel_sorted if small else native.relabel_scan)(
            flags, table, dst, nbr)
        return torch.cat([dst, new]), local
    if nbr.shape[0] * SCAN_RATIO < csc.num_nodes:
        cand = torch.unique(nbr)  # (u,) sorted
        flags.index_fill_(0, dst, True)
        new = cand[~flags.index_select(0, cand)]  # (n_new,) sorted
        flags.index_fill_(0, dst, False)
    else:
        flags.index_fill_(0, nbr, True)
        flags.index_fill_(0, dst, False)
        new = flat_nonzero(flags)  # (n_new,) sorted
        flags.index_fill_(0, new, False)
    table.index_copy_(0, dst, torch.arange(n, dtype=table.dtype, device=device))
    table.index_copy_(0, new, torch.arange(n, n + new.shape[0], dtype=table.dtype,
                                           device=device))
    local = table.index_select(0, nbr).long()  # (nnz,)
    return torch.cat([dst, new]), local


def index_dtype(num_nodes: int) -> torch.dtype:
    """The smallest integer type that holds every local id of a graph of ``num_nodes``."""
    return torch.int32 if num_nodes < 2**31 else torch.int64
