r"""Readouts: one vector per graph from its nodes' vectors, by segment reductions.

Every function takes node vectors ``h`` (n, D) whose rows are grouped by graph (the rows of
graph ``b`` are ``ptr[b]..ptr[b+1]-1``, as a :class:`~graphflow.graphs.batch.GraphBatch`
lays them out) and returns (B, D). No loop over graphs: ``index_add`` and
``torch.segment_reduce``, on any device, with gradients.

* sum: :math:`r_b = \sum_{i \in b} h_i` (the GIN paper's choice: injective on multisets);
* mean: :math:`r_b = \frac{1}{|b|} \sum_{i \in b} h_i`;
* max: :math:`r_b = \max_{i \in b} h_i` per feature;
* gated attention (Li et al., "Gated Graph Sequence Neural Networks", ICLR 2016; DGL's
  ``GlobalAttentionPooling``): :math:`r_b = \sum_{i \in b} \operatorname{softmax}_b(w^\top h_i
  + c)\, h_i`, the softmax taken over the nodes of graph ``b``;
* set2set (Vinyals et al., "Order Matters", ICLR 2016, the read-out of Gilmer et al.'s MPNN;
  DGL's ``Set2Set``, PyG's ``Set2Set``): ``steps`` rounds of an LSTM query attending over the
  graph's nodes, :math:`q_t = \mathrm{LSTM}(q^*_{t-1})`, :math:`a_i = \operatorname{softmax}_b
  (h_i^\top q_{t,b})`, :math:`r_t = \sum_{i \in b} a_i h_i`, :math:`q^*_t = [q_t, r_t]`: a
  (B, 2D) vector per graph. The loop is over the rounds, never over graphs or nodes.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

Pooling = Literal["sum", "mean", "max", "attention", "set2set"]
POOLINGS: tuple[str, ...] = ("sum", "mean", "max", "attention", "set2set")
SET2SET_STEPS = 3
"""Rounds of the set2set read-out (DGL's and PyG's examples on molecules use 3 to 6)."""


def segment_sum(h: torch.Tensor, seg: torch.Tensor, num: int) -> torch.Tensor:
    """(n, D) -> (B, D): the sum of the rows of each segment (``seg`` (n,) its id, any order)."""
    return h.new_zeros((num, *h.shape[1:])).index_add(0, seg, h)


def segment_mean(h: torch.Tensor, seg: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """(n, D) -> (B, D): the mean of the rows of each segment (sizes from ``ptr``)."""
    sizes = (ptr[1:] - ptr[:-1]).clamp(min=1).to(h.dtype)  # (B,)
    return segment_sum(h, seg, sizes.shape[0]) / sizes.view((-1,) + (1,) * (h.dim() - 1))


def segment_max(h: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """(n, D) -> (B, D): the feature-wise max of each segment (rows contiguous per segment)."""
    return torch.segment_reduce(h, "max", lengths=ptr[1:] - ptr[:-1], axis=0, unsafe=True)


def segment_softmax(score: torch.Tensor, seg: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
    """(n,) -> (n,): the softmax of the scores within each segment (max subtracted first)."""
    top = segment_max(score.unsqueeze(1), ptr).squeeze(1)  # (B,)
    e = torch.exp(score - top[seg])  # (n,)
    total = segment_sum(e, seg, ptr.shape[0] - 1)  # (B,)
    return e / total[seg]


def set2set(h: torch.Tensor, seg: torch.Tensor, ptr: torch.Tensor, lstm: nn.LSTM,
            steps: int) -> torch.Tensor:
    """(n, D) -> (B, 2D): ``steps`` rounds of set2set (see the module docstring) with the
    one-layer ``lstm`` (input 2D, hidden D), from zero states, as DGL's ``Set2Set``."""
    b, d = ptr.shape[0] - 1, h.shape[1]
    state = (h.new_zeros(1, b, d), h.new_zeros(1, b, d))
    q_star = h.new_zeros(b, 2 * d)
    for _ in range(steps):
        q, state = lstm(q_star.unsqueeze(0), state)
        q = q.squeeze(0)  # (B, D)
        alpha = segment_softmax((h * q[seg]).sum(1), seg, ptr)  # (n,)
        q_star = torch.cat([q, segment_sum(alpha.unsqueeze(1) * h, seg, b)], dim=1)
    return q_star


class Readout(nn.Module):
    """Pool node vectors (n, D) into graph vectors (B, ``width``).

    :param pooling: ``sum`` | ``mean`` | ``max`` | ``attention`` | ``set2set``.
    :param dim: D, the node vectors' width (``attention`` learns a gate ``Linear(D, 1)``,
        ``set2set`` an ``LSTM(2D, D)`` and gives 2D).
    """

    def __init__(self, pooling: Pooling, dim: int, steps: int = SET2SET_STEPS):
        super().__init__()
        if pooling not in POOLINGS:
            raise ValueError(f'unknown readout "{pooling}"; choices: {", ".join(POOLINGS)}')
        self.pooling = pooling
        self.gate = nn.Linear(dim, 1) if pooling == "attention" else None
        self.lstm = nn.LSTM(2 * dim, dim) if pooling == "set2set" else None
        self.steps = steps
        self.width = 2 * dim if pooling == "set2set" else dim

    def forward(self, h: torch.Tensor, seg: torch.Tensor, ptr: torch.Tensor) -> torch.Tensor:
        """:param seg: int64 (n,) graph of each row; :param ptr: int64 (B + 1,) offsets."""
        b = ptr.shape[0] - 1
        if self.pooling == "sum":
            return segment_sum(h, seg, b)
        if self.pooling == "mean":
            return segment_mean(h, seg, ptr)
        if self.pooling == "max":
            return segment_max(h, ptr)
        if self.lstm is not None:
            return set2set(h, seg, ptr, self.lstm, self.steps)
        alpha = segment_softmax(self.gate(h).squeeze(1), seg, ptr)  # (n,)
        return segment_sum(alpha.unsqueeze(1) * h, seg, b)

    def extra_repr(self) -> str:
        return f"pooling={self.pooling!r}"
