"""Multi-layer neighbor sampling on a :class:`~graphflow.sampling.csc.CSCGraph`: seeds -> blocks.

Starting from the seeds, each layer samples in-edges of the current destination nodes
(:func:`~graphflow.sampling.rows.sample_rows`), relabels their sources with the destinations
as a prefix (:func:`~graphflow.sampling.relabel.relabel`), and the block's source nodes become
the next layer's destinations. ``fanouts[l]`` is the fanout of ``blocks[l]``, input side first
(DGL's convention), so sampling runs through ``fanouts`` backwards.

Everything is a handful of torch ops per layer on the CSC's device; the only Python loop is
over layers.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from graphflow.sampling.block import Block
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.relabel import relabel
from graphflow.sampling.rows import sample_rows


def sample_blocks(csc: CSCGraph, seeds: torch.Tensor, fanouts: Sequence[int], *,
                  replace: bool = False,
                  generator: torch.Generator | None = None) -> list[Block]:
    """Sample one block per fanout around ``seeds``; blocks input side first.

    :param csc: the graph on the sampling device.
    :param seeds: int64 (B,) distinct node ids in ``[0, N)`` on ``csc.device``.
    :param fanouts: one fanout per layer, input side first; ``-1`` takes every in-edge.
    :param replace: sample with replacement.
    :param generator: random source on ``csc.device`` (None: torch's default one).
    :returns: ``blocks`` with ``blocks[-1].dst_nodes == seeds`` and
        ``blocks[l].dst_nodes == blocks[l + 1].src_nodes``.
    """
    blocks: list[Block] = []
    dst = seeds  # (n,)
    for fanout in reversed(fanouts):
        indptr, pos = sample_rows(csc, dst, fanout, replace=replace,
                                  generator=generator)  # (n + 1,), (nnz,)
        nbr, eids = csc.gather(pos)  # (nnz,) global source ids, (nnz,) edge ids
        src_nodes, local = relabel(csc, dst, nbr)  # (n + n_new,), (nnz,)
        blocks.append(Block(src_nodes=src_nodes, num_dst=int(dst.shape[0]), indptr=indptr,
                            indices=local, eids=eids))
        dst = src_nodes
    blocks.reverse()
    return blocks
