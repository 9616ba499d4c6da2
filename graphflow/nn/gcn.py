"""Graph convolution (GCN), Kipf & Welling, "Semi-Supervised Classification with Graph
Convolutional Networks", ICLR 2017 (https://arxiv.org/abs/1609.02907).
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.sparse import Adjacency, gemm, spmm
from graphflow.sparse.features import Features, SparseFeatures, matmul

GCNNorm = Literal["both", "right", "none"]
_ADJ_NORM = {"both": "sym", "right": "row", "none": "none"}


def gcn_conv(adj: Adjacency, x: Features, weight: torch.Tensor | None = None,
             bias: torch.Tensor | None = None, norm: GCNNorm = "both",
             edge_weight: torch.Tensor | None = None) -> torch.Tensor:
    r"""Functional GCN layer: ``\hat{A} (x W) + b`` (see :class:`GCNConv`).

    The product runs in the cheaper order: ``x W`` first when it shrinks the features (or when
    ``x`` is sparse), the aggregation first otherwise.

    :param x: (num_src, F_in) tensor or :class:`SparseFeatures`.
    :param weight: (F_in, F_out) or None. :param bias: (F_out,) or None.
    :param edge_weight: (nnz,) in CSR order, or None for :attr:`Adjacency.values` / ones.
    :returns: (num_dst, F_out), or (num_dst, F_in) without a weight.
    """
    dtype = x.dtype
    values = adj.norm(_ADJ_NORM[norm], edge_weight, dtype=dtype)  # (nnz,)
    if weight is None:
        dense = x.to_dense() if isinstance(x, SparseFeatures) else x
        out = spmm(adj, dense, values)  # (num_dst, F_in)
    elif isinstance(x, SparseFeatures) or x.shape[1] > weight.shape[1]:
        out = spmm(adj, matmul(x, weight), values)  # (num_dst, F_out)
    else:
        agg = spmm(adj, x, values)  # (num_dst, F_in)
        return gemm.linear(agg, weight.t(), bias)  # (num_dst, F_out)
    # `out` is a fresh tensor that nothing saved for backward: add the bias in place.
    return out if bias is None else out.add_(bias)


class GCNConv(nn.Module):
    r"""Graph convolution of Kipf & Welling (2017), with DGL ``GraphConv`` semantics.

    .. math::
        \mathbf{x}'_i = \sum_{j \in \mathcal{N}(i)} \frac{e_{ji}}{\sqrt{d^{out}_j d^{in}_i}}
        \mathbf{x}_j \mathbf{W} + \mathbf{b}

    for ``norm="both"``; ``"right"`` divides by :math:`d^{in}_i` only (mean), ``"none"``
    does not normalise. Degrees count edges, zero degrees count as 1, and :math:`e_{ji}` is
    the edge weight (1 by default). Self-loops are the caller's choice (add them to the graph).

    Args:
        in_dim (int): input feature size ``F_in``.
        out_dim (int): output feature size ``F_out`` (must equal ``in_dim`` when
            ``weight=False``).
        norm (str, default ``"both"``): ``"both"``, ``"right"`` or ``"none"``.
        weight (bool, default True): learn ``W`` (F_in, F_out), Glorot-initialised.
        bias (bool, default True): learn ``b`` (F_out,), zero-initialised.

    Shapes:
        - input: ``adj`` (num_dst x num_src), ``x`` (num_src, F_in) tensor or
          :class:`~graphflow.sparse.features.SparseFeatures`, optional ``edge_weight``
          (nnz,) in CSR order (may require grad)
        - output: (num_dst, F_out)
    """

    #: The output is a new tensor that no autograd node saved, so :class:`GNNStack` may apply
    #: its activation in place.
    fresh_output = True

    def __init__(self, in_dim: int, out_dim: int, norm: GCNNorm = "both", weight: bool = True,
                 bias: bool = True):
        super().__init__()
        if norm not in _ADJ_NORM:
            raise ConfigError(f'GCNConv norm must be one of {sorted(_ADJ_NORM)}, got "{norm}"')
        if not weight and in_dim != out_dim:
            raise ConfigError(f"GCNConv without a weight keeps the feature size, but in_dim="
                              f"{in_dim} and out_dim={out_dim}")
        self.in_dim, self.out_dim, self.norm = in_dim, out_dim, norm
        self.weight = nn.Parameter(torch.empty(in_dim, out_dim)) if weight else None
        self.bias = nn.Parameter(torch.empty(out_dim)) if bias else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, adj: Adjacency, x: Features,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        return gcn_conv(adj, x, self.weight, self.bias, self.norm, edge_weight)

    def extra_repr(self) -> str:
        return f"{self.in_dim}, {self.out_dim}, norm={self.norm!r}"
