r"""The CPU kernel that cuts a batch of graphs out of a collection's CSR, compiled by Numba.

:meth:`graphflow.graphs.batch.GraphBatcher.batch` computes, for graphs ``sel`` (B,) of a
collection whose nodes are contiguous per graph (``graph_ptr``) and whose CSR has no entry
between graphs::

    ptr[i + 1]  = ptr[i] + (graph_ptr[g_i + 1] - graph_ptr[g_i])        # the batch's graph_ptr
    eptr[i + 1] = eptr[i] + (indptr[graph_ptr[g_i + 1]] - indptr[graph_ptr[g_i]])
    nodes[r]    = r + graph_ptr[g_i] - ptr[i]                           # rows of graph i
    indptr'[r]  = indptr[nodes[r]] - (indptr[graph_ptr[g_i]] - eptr[i])
    pos[q]      = q + indptr[graph_ptr[g_i]] - eptr[i]                  # entries of graph i
    indices'[q] = indices[pos[q]] - (graph_ptr[g_i] - ptr[i])

With torch these are about twenty calls of a few microseconds each from Python (0.3-0.4 ms
a batch of 32 graphs, several percent of a GIN step on them); :func:`cut` runs them as one
compiled pass over the batch's rows and entries, with the same results (the tests compare
the two paths). Serial (a batch is a few thousand rows), it releases the interpreter lock,
so that background threads cut batches while the caller trains. Compiled code is cached on
disk as the sampler's kernels are (:mod:`graphflow.sampling.native`).
"""

from __future__ import annotations

import numpy as np
import torch
from numba import njit


@njit(cache=True, nogil=True)
def _cut(sel, graph_ptr, indptr, indices):  # pragma: no cover - compiled
    b = sel.shape[0]
    ptr = np.empty(b + 1, np.int64)
    eptr = np.empty(b + 1, np.int64)
    ptr[0] = 0
    eptr[0] = 0
    for i in range(b):
        g = sel[i]
        s = graph_ptr[g]
        e = graph_ptr[g + 1]
        ptr[i + 1] = ptr[i] + (e - s)
        eptr[i + 1] = eptr[i] + (indptr[e] - indptr[s])
    n = ptr[b]
    m = eptr[b]
    nodes = np.empty(n, np.int64)
    graph_of_node = np.empty(n, np.int64)
    out_indptr = np.empty(n + 1, np.int64)
    out_indices = np.empty(m, np.int64)
    pos = np.empty(m, np.int64)
    for i in range(b):
        s = graph_ptr[sel[i]]
        shift = s - ptr[i]  # collection node = batch row + shift
        eshift = indptr[s] - eptr[i]  # collection CSR position = batch position + eshift
        for r in range(ptr[i], ptr[i + 1]):
            v = r + shift
            nodes[r] = v
            graph_of_node[r] = i
            out_indptr[r] = indptr[v] - eshift
        for q in range(eptr[i], eptr[i + 1]):
            p = q + eshift
            pos[q] = p
            out_indices[q] = indices[p] - shift
    out_indptr[n] = m
    return ptr, nodes, graph_of_node, out_indptr, out_indices, pos


def supports(*tensors: torch.Tensor) -> bool:
    """Whether :func:`cut` serves these index tensors: on the CPU, 64- or 32-bit integers."""
    return all(t.device.type == "cpu" and t.dtype in (torch.int64, torch.int32)
               for t in tensors)


def cut(sel: torch.Tensor, graph_ptr: torch.Tensor, indptr: torch.Tensor,
        indices: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``(ptr (B+1,), nodes (n,), graph_of_node (n,), indptr (n+1,), indices (m,), pos (m,))``
    of the graphs ``sel`` (see the module docstring), all int64, on the CPU."""
    out = _cut(sel.contiguous().numpy(), graph_ptr.contiguous().numpy(),
               indptr.contiguous().numpy(), indices.contiguous().numpy())
    return tuple(torch.from_numpy(a) for a in out)
