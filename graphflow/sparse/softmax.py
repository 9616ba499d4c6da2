r"""Edge softmax: a softmax of edge scores over each destination's in-edges (CSR rows).

.. math::
    \alpha_{ji} = \frac{\exp(s_{ji} - m_i)}{\sum_{k \in \mathcal{N}(i)} \exp(s_{ki} - m_i)},
    \qquad m_i = \max_{k \in \mathcal{N}(i)} s_{ki}

One autograd Function with the closed-form backward
``ds = alpha * (dalpha - sum_row(dalpha * alpha))``, so no per-edge intermediate is kept
beyond ``alpha`` itself. Rows are segments of the CSR; the segment reductions are
``scatter_reduce`` / ``index_add`` over :attr:`Adjacency.row_index`, on any device.
"""

from __future__ import annotations

import torch

from graphflow.errors import DataError
from graphflow.sparse.adjacency import Adjacency


def edge_softmax(adj: Adjacency, scores: torch.Tensor) -> torch.Tensor:
    """Softmax of ``scores`` over the in-edges of each destination.

    :param scores: (nnz,) or (nnz, H) float scores in CSR order.
    :returns: same shape; the entries of each CSR row sum to 1 (per head).
    """
    if not isinstance(scores, torch.Tensor) or scores.shape[:1] != (adj.nnz,):
        raise DataError(f"edge_softmax needs ({adj.nnz}, ...) scores in CSR order, got "
                        f"{tuple(getattr(scores, 'shape', ()))}")
    return _EdgeSoftmax.apply(adj, scores)


def segment_sum(adj: Adjacency, per_edge: torch.Tensor) -> torch.Tensor:
    """(num_dst, *) sums of (nnz, *) edge data over each CSR row."""
    out = per_edge.new_zeros((adj.num_dst,) + tuple(per_edge.shape[1:]))
    return out.index_add_(0, adj.row_index, per_edge)


def segment_max(adj: Adjacency, per_edge: torch.Tensor) -> torch.Tensor:
    """(num_dst, *) maxima of (nnz, *) edge data over each CSR row (-inf for empty rows)."""
    out = per_edge.new_full((adj.num_dst,) + tuple(per_edge.shape[1:]), float("-inf"))
    index = adj.row_index.view((-1,) + (1,) * (per_edge.dim() - 1)).expand_as(per_edge)
    return out.scatter_reduce_(0, index, per_edge, "amax")


class _EdgeSoftmax(torch.autograd.Function):
    @staticmethod
    def forward(ctx, adj: Adjacency, scores: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        rows = adj.row_index
        shifted = scores - segment_max(adj, scores)[rows]  # (nnz, *)
        ex = shifted.exp_()
        out = ex.div_(segment_sum(adj, ex)[rows])  # (nnz, *)
        ctx.adj = adj
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        (out,) = ctx.saved_tensors
        adj: Adjacency = ctx.adj
        weighted = grad * out  # (nnz, *)
        return None, weighted - out * segment_sum(adj, weighted)[adj.row_index]
