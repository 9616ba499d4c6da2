"""Negative samples from word2vec's noise distribution, :math:`P_n(v) \\propto f_v^{0.75}`.

``f_v`` is the node's *in-strength* (in-degree, or summed in-weight): the rate at which a long
unbiased random walk on an undirected graph visits ``v`` (its stationary distribution), so it
stands in for the walk-corpus counts word2vec uses, without a pass over the walks before
training (walks are generated and consumed batch by batch).

Sampling is word2vec's table method, vectorised: a table of ``T`` node ids in which node ``v``
fills :math:`\\approx T P_n(v)` slots (largest-remainder rounding, so counts are exact to one
slot); a draw is one uniform slot, O(1) per sample on any device.
"""

from __future__ import annotations

import torch


class UnigramTable:
    """Draws node ids with probability proportional to ``weights ** power``.

    :param weights: float (N,) non-negative node frequencies (e.g. in-degrees).
    :param power: the smoothing exponent (0.75 in word2vec).
    :param size: table slots ``T``; default ``2^ceil(log2(16 N))`` within ``[2^16, 2^26]``.
    """

    def __init__(self, weights: torch.Tensor, power: float = 0.75, size: int | None = None):
        n = weights.numel()
        device = weights.device
        w = weights.double().clamp(min=0) ** power
        if n == 0:
            raise ValueError("cannot draw negatives from an empty graph")
        if float(w.sum()) <= 0:  # no edges at all: uniform
            w = torch.ones(n, dtype=torch.float64, device=device)
        if size is None:
            size = 1 << min(26, max(16, (16 * n - 1).bit_length()))
        exact = w / w.sum() * size
        counts = exact.floor().long()
        short = size - int(counts.sum())
        if short > 0:  # give the leftover slots to the largest remainders
            top = torch.topk(exact - counts, short).indices
            counts.index_add_(0, top, torch.ones_like(top))
        dtype = torch.int32 if n < 2**31 else torch.int64
        self.table = torch.repeat_interleave(torch.arange(n, device=device, dtype=dtype),
                                             counts)  # (T,)
        self.size = int(self.table.numel())

    def sample(self, count: int, generator: torch.Generator | None = None) -> torch.Tensor:
        """int64 (count,) node ids."""
        slot = torch.randint(self.size, (count,), generator=generator, device=self.table.device)
        return self.table.index_select(0, slot).long()
