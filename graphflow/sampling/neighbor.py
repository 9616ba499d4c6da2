"""Multi-layer neighbor sampling on a :class:`~graphflow.sampling.csc.CSCGraph`: seeds -> blocks.

Starting from the seeds, each layer samples in-edges of the current destination nodes
(:func:`~graphflow.sampling.per_row.sample_rows`), relabels their sources with the destinations
as a prefix (:func:`~graphflow.sampling.relabel.relabel`), and the block's source nodes become
the next layer's destinations. ``fanouts[l]`` is the fanout of ``blocks[l]``, input side first
(DGL's convention), so sampling runs through ``fanouts`` backwards.

Everything is a handful of torch ops per layer on the CSC's device; the only Python loop is
over layers. On the CPU, uniform layers without replacement (the default) pick and relabel in
compiled kernels (:mod:`graphflow.sampling.native`) that run on the calling thread's share of
cores.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from graphflow.sampling import native
from graphflow.sampling.block import Block
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.relabel import relabel
from graphflow.sampling.per_row import pointers, sample_rows


def sample_blocks(csc: CSCGraph, seeds: torch.Tensor, fanouts: Sequence[int], *,
                  replace: bool = False,
                  generator: torch.Generator | None = None,
                  exclude: torch.Tensor | None = None) -> list[Block]:
    """Sample one block per fanout around ``seeds``; blocks input side first.

    :param csc: the graph on the sampling device.
    :param seeds: int64 (B,) distinct node ids in ``[0, N)`` on ``csc.device``.
    :param fanouts: one fanout per layer, input side first; ``-1`` takes every in-edge.
    :param replace: sample with replacement.
    :param generator: random source on ``csc.device`` (None: torch's default one).
    :param exclude: int64 edge ids (original graph) that no block may contain, on
        ``csc.device`` (e.g. a link prediction batch's positives and their reverses). Rows
        are sampled first and the excluded edges then dropped, so a row that drew one has
        one edge fewer (DGL removes them before drawing); rows with at most ``fanout``
        in-edges get exactly DGL's result.
    :returns: ``blocks`` with ``blocks[-1].dst_nodes == seeds`` and
        ``blocks[l].dst_nodes == blocks[l + 1].src_nodes``.
    """
    blocks: list[Block] = []
    dst = seeds  # (n,)
    for fanout in reversed(fanouts):
        if native.supports(csc, fanout, replace):  # compiled picks, gathered as they go
            indptr, nbr, eids = native.pick(csc, dst, fanout, generator)
        else:
            indptr, pos = sample_rows(csc, dst, fanout, replace=replace,
                                      generator=generator)  # (n + 1,), (nnz,)
            nbr, eids = csc.gather(pos)  # (nnz,) global source ids, (nnz,) edge ids
        if exclude is not None and exclude.numel():
            indptr, nbr, eids = drop_edges(csc, indptr, nbr, eids, exclude)
        src_nodes, local = relabel(csc, dst, nbr)  # (n + n_new,), (nnz,)
        blocks.append(Block(src_nodes=src_nodes, num_dst=int(dst.shape[0]), indptr=indptr,
                            indices=local, eids=eids))
        dst = src_nodes
    blocks.reverse()
    return blocks


def drop_edges(csc: CSCGraph, indptr: torch.Tensor, nbr: torch.Tensor, eids: torch.Tensor,
               exclude: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Remove the sampled edges whose id is in ``exclude``; rows keep their order.

    One (E,) bool scratch mask per sampling thread, set at ``exclude`` and cleared again:
    O(|exclude| + nnz) per call, no sort. The few hits find their rows by a binary search of
    ``indptr`` (O(hits log n)), so only the kept edges' copy passes over all nnz (a
    per-edge row index, a scatter-add over nnz and boolean indexing took 1.7 ms a layer of a
    link prediction batch's ~10 ms of sampling, 1M nodes).

    :returns: the new ``indptr`` (n + 1,), ``nbr`` and ``eids`` (nnz',).
    """
    mask = csc.edge_scratch("exclude")  # (E,) all False between calls
    mask.index_fill_(0, exclude, True)
    hit = mask.index_select(0, eids)  # (nnz,)
    mask.index_fill_(0, exclude, False)
    at = hit.nonzero().squeeze(1)  # (hits,) positions of excluded edges
    if at.numel() == 0:
        return indptr, nbr, eids
    rows = torch.searchsorted(indptr, at, right=True) - 1  # (hits,) their rows
    counts = indptr[1:] - indptr[:-1]  # (n,)
    kept = counts.index_add(0, rows, torch.full_like(rows, -1, dtype=counts.dtype))
    keep = ~hit
    # masked_select: 0.24 ms for 200k int64 where boolean indexing took 0.66 ms (this CPU)
    return pointers(kept), torch.masked_select(nbr, keep), torch.masked_select(eids, keep)
