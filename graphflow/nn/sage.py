"""GraphSAGE with the mean aggregator, Hamilton, Ying & Leskovec, "Inductive Representation
Learning on Large Graphs", NeurIPS 2017 (https://arxiv.org/abs/1706.02216).
"""

from __future__ import annotations

import torch
from torch import nn

from graphflow.sparse import Adjacency, spmm, spmm_cat
from graphflow.sparse.features import Features, SparseFeatures, dropout, linear
from graphflow.sparse.indexed_rows import IndexedRows


def sage_conv(adj: Adjacency, x: Features, w_self: torch.Tensor, w_neigh: torch.Tensor,
              bias: torch.Tensor | None = None,
              edge_weight: torch.Tensor | None = None) -> torch.Tensor:
    r"""Functional mean-aggregator SAGE layer (see :class:`SAGEConv`).

    :param x: (num_src, F_in); the destinations' own features are ``x[:num_dst]``.
    :param w_self: / :param w_neigh: (F_out, F_in), ``nn.Linear`` layout. :param bias: (F_out,).
    :returns: (num_dst, F_out).
    """
    # The mean runs as a sum scaled by 1/deg_in per destination row (spmm reduce="mean"),
    # not as an SpMM over (nnz,) normalised values: that array cost more than the SpMM.
    if isinstance(x, SparseFeatures) or x.shape[1] > w_neigh.shape[0]:
        # Project first (F_out < F_in): the SpMM then moves F_out columns, not F_in.
        h_neigh = spmm(adj, linear(x, w_neigh), edge_weight, reduce="mean")  # (num_dst, F_out)
        return linear(x[: adj.num_dst], w_self, bias).add_(h_neigh)
    # Aggregate first, then ONE product over [x_dst | mean]: (num_dst, 2 F_in) @
    # [W_self | W_neigh]^T. Same flops as two products and an add, but one GEMM with twice
    # the inner dimension runs closer to the CPU's peak, and its backward is one GEMM too.
    if bias is not None and _bias_column(x, edge_weight):
        # [x_dst | mean | 1] @ [W_self | W_neigh | b]^T: the product adds the bias, and the
        # weight gradient's product yields the bias's (no broadcast copy, no column sum).
        h = spmm_cat(adj, x, edge_weight, reduce="mean", ones=True)  # (num_dst, 2 F_in + 1)
        return linear(h, torch.cat([w_self, w_neigh, bias.unsqueeze(1)], 1))
    h = spmm_cat(adj, x, edge_weight, reduce="mean")  # (num_dst, 2 F_in) = [x_dst | mean]
    return linear(h, torch.cat([w_self, w_neigh], 1), bias)  # (num_dst, F_out)


def _bias_column(x: Features, edge_weight: torch.Tensor | None) -> bool:
    """Whether the bias rides in the product as a column of ones: on the CPU, for an input
    that needs no gradient (a first layer's features), where a product's input gradient,
    which the extra column would widen, is not computed. A first SAGE layer of a sampled
    batch, 15.9k x 200 -> 256, forward, weight and bias gradients (medians of 15 calls,
    three runs, Intel Xeon family 6 model 167, MKL): 26.5-27.9 against 22.9-25.4 ms on one
    thread, 16.4-18.0 against 13.7-15.6 on two; through oneDNN a tie (40.6-45.3 against
    39.7-45.4). ``benchmarks/sampling.py``'s GraphSAGE, forward and backward on six sampled
    batches, 30 alternating rounds in one process: 87.1 against 83.4 ms a batch on one
    thread, 44.5 against 41.3 on two (medians)."""
    grad = torch.is_grad_enabled() and (
        (x.table.requires_grad if isinstance(x, IndexedRows) else x.requires_grad)
        or (edge_weight is not None and edge_weight.requires_grad))
    return x.device.type == "cpu" and not grad


class SAGEConv(nn.Module):
    r"""GraphSAGE layer with the mean aggregator (Hamilton et al., 2017), as DGL
    ``SAGEConv(aggregator_type="mean")``.

    .. math::
        \mathbf{x}'_i = \mathbf{W}_1 \mathbf{x}_i + \mathbf{W}_2 \cdot
        \frac{1}{d^{in}_i} \sum_{j \in \mathcal{N}(i)} e_{ji} \mathbf{x}_j + \mathbf{b}

    A node without in-edges gets ``W_1 x_i + b``. :math:`e_{ji}` is the edge weight (1 by
    default). Dropout (``feat_drop``) is applied to the input features first.

    Args:
        in_dim (int): input feature size ``F_in``.
        out_dim (int): output feature size ``F_out``.
        bias (bool, default True): learn ``b`` (it lives in ``fc_self``, as in DGL).
        feat_drop (float, default 0.0): dropout on the input features.

    Shapes:
        - input: ``adj`` (num_dst x num_src), ``x`` (num_src, F_in) tensor or
          :class:`~graphflow.sparse.features.SparseFeatures`; destinations are ``x[:num_dst]``
        - output: (num_dst, F_out)
    """

    #: The output is a new tensor that no autograd node saved, so :class:`GNNStack` may apply
    #: its activation in place.
    fresh_output = True
    #: The input may be :class:`~graphflow.sparse.indexed_rows.IndexedRows`: the mean is read straight
    #: from the feature table (``spmm_cat``), only the destinations' own rows are gathered.
    accepts_rows = True

    def __init__(self, in_dim: int, out_dim: int, bias: bool = True, feat_drop: float = 0.0):
        super().__init__()
        self.in_dim, self.out_dim, self.feat_drop = in_dim, out_dim, feat_drop
        self.fc_self = nn.Linear(in_dim, out_dim, bias=bias)
        self.fc_neigh = nn.Linear(in_dim, out_dim, bias=False)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = nn.init.calculate_gain("relu")
        nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)
        if self.fc_self.bias is not None:
            nn.init.zeros_(self.fc_self.bias)

    def forward(self, adj: Adjacency, x: Features,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        x = dropout(x, self.feat_drop, self.training)
        return sage_conv(adj, x, self.fc_self.weight, self.fc_neigh.weight, self.fc_self.bias,
                         edge_weight)

    def extra_repr(self) -> str:
        return f"{self.in_dim}, {self.out_dim}, feat_drop={self.feat_drop}"
