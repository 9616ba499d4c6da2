"""Skip-gram context from walk tensors: explicit pairs, and the blocked form training uses.

A walk ``w`` of int64 ``(B, L)`` (``-1`` = padding) gives the positive pairs
``(w[b, i], w[b, j])`` with ``1 <= |i - j| <= r_{b,i}``, where ``r`` is the window radius of the
center ``i`` (``window`` itself, or word2vec's *dynamic window*: ``r ~ U{1..window}`` per
center). Pairs touching padding are never produced.

:func:`context_pairs` lists them (one column offset at a time), for tests and small use.
Training uses :func:`context_blocks`: each walk is cut into chunks of ``C`` centers, and each
chunk sees the ``C + 2 * window`` nodes around it, so that all its pair scores are one small
matrix product ``(C, D) x (D, C + 2w)`` and every node row is gathered once per chunk, not once
per pair. The block's boolean mask selects exactly the pairs of :func:`context_pairs`.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

PAD = -1


def context_pairs(walks: torch.Tensor, window: int,
                  radius: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    """All positive ``(center, context)`` pairs of ``walks``.

    :param walks: int64 (B, L), ``-1`` for padding.
    :param window: the largest offset.
    :param radius: int64 (B, L) per-center radius in ``1..window`` (dynamic window), or None.
    :returns: ``(center, context)``, int64 (P,) each, never ``-1``.
    """
    centers, contexts = [], []
    length = walks.shape[1]
    for offset in range(1, min(window, length - 1) + 1):
        for a, b in ((slice(None, -offset), slice(offset, None)),
                     (slice(offset, None), slice(None, -offset))):
            c, x = walks[:, a], walks[:, b]  # (B, L - offset) centers and their contexts
            keep = (c >= 0) & (x >= 0)
            if radius is not None:
                keep &= radius[:, a] >= offset
            centers.append(c[keep])
            contexts.append(x[keep])
    if not centers:
        empty = walks.new_zeros(0)
        return empty, empty
    return torch.cat(centers), torch.cat(contexts)


@dataclass
class ContextBlocks:
    """Walks cut into chunks of centers with the context around each chunk.

    :ivar centers: int64 (G, C) center nodes, ``-1`` for padding.
    :ivar context: int64 (G, S) the nodes at walk positions ``[kC - w, kC + C + w)``
        (``S = C + 2w``), or the walk itself (``S = L``) when one chunk covers it.
    :ivar positive: bool (G, C, S): ``positive[g, i, j]`` marks the pair
        ``(centers[g, i], context[g, j])`` (offset within the radius, not 0, neither end
        padding).
    """

    centers: torch.Tensor
    context: torch.Tensor
    positive: torch.Tensor


def context_blocks(walks: torch.Tensor, window: int, chunk: int,
                   radius: torch.Tensor | None = None) -> ContextBlocks:
    """Cut ``walks`` (int64 (B, L)) into :class:`ContextBlocks` of ``chunk`` centers.

    With ``chunk >= L`` every walk is one block whose context is the walk itself
    (``G = B``, ``C = S = L``).

    :param radius: int64 (B, L) per-center radius (dynamic window), or None for ``window``.
    """
    b, length = walks.shape
    device = walks.device
    if chunk >= length:  # one chunk per walk: the walk is its own context, no padding needed
        centers = context = walks  # (B, L)
        offset = (torch.arange(length, device=device)[None, :]
                  - torch.arange(length, device=device)[:, None]).abs()  # (L, L)
        r = radius
    else:
        n_chunks = -(-length // chunk)
        tail = n_chunks * chunk - length
        padded = torch.nn.functional.pad(walks, (window, tail + window), value=PAD)
        span = chunk + 2 * window
        context = padded.unfold(1, span, chunk).reshape(b * n_chunks, span)  # (G, C + 2w)
        centers = padded[:, window:window + n_chunks * chunk].reshape(b * n_chunks, chunk)
        offset = (torch.arange(span, device=device)[None, :]
                  - torch.arange(chunk, device=device)[:, None] - window).abs()  # (C, C + 2w)
        r = None if radius is None else torch.nn.functional.pad(
            radius, (0, tail), value=0).reshape(b * n_chunks, chunk)
    if r is None:
        near = ((offset >= 1) & (offset <= window))[None]  # (1, C, S)
    else:
        near = (offset[None] >= 1) & (offset[None] <= r[:, :, None])  # (G, C, S)
    positive = near & (centers >= 0)[:, :, None] & (context >= 0)[:, None, :]
    return ContextBlocks(centers=centers, context=context, positive=positive)


def subsample(walks: torch.Tensor, keep_prob: torch.Tensor,
              generator: torch.Generator | None = None) -> torch.Tensor:
    """Drop node occurrences at random (word2vec's frequent-word subsampling), closing the gaps.

    :param walks: int64 (B, L), ``-1`` padding at the end of rows.
    :param keep_prob: float (N,) probability of keeping an occurrence of each node.
    :returns: int64 (B, L): the kept nodes of each row, in order, then ``-1``.
    """
    valid = walks >= 0
    prob = keep_prob.index_select(0, walks.clamp(min=0).reshape(-1)).reshape(walks.shape)
    draw = torch.rand(walks.shape, generator=generator, device=walks.device, dtype=prob.dtype)
    keep = valid & (draw < prob)  # (B, L)
    order = torch.sort((~keep).to(torch.int8), dim=1, stable=True).indices  # kept first
    out = walks.gather(1, order)
    return torch.where(keep.gather(1, order), out, torch.full_like(out, PAD))


def keep_probability(freq: torch.Tensor, threshold: float) -> torch.Tensor:
    """word2vec's keep probability :math:`\\min(1, (\\sqrt{f/t} + 1)\\, t / f)` per node.

    :param freq: float (N,) relative frequency of each node (sums to 1).
    :param threshold: ``t`` (e.g. ``1e-3``); ``0`` keeps everything.
    """
    if threshold <= 0:
        return torch.ones_like(freq)
    ratio = freq / threshold
    prob = (torch.sqrt(ratio) + 1) / ratio.clamp(min=1e-30)
    return prob.clamp(max=1.0)
