"""Graph attention (GAT), Veličković et al., "Graph Attention Networks", ICLR 2018
(https://arxiv.org/abs/1710.10903).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.sparse import Adjacency, spmm
from graphflow.sparse.features import Features, dropout, linear, to_dense
from graphflow.sparse.softmax import edge_softmax


def gat_attention(adj: Adjacency, feat_src: torch.Tensor, feat_dst: torch.Tensor,
                  attn_l: torch.Tensor, attn_r: torch.Tensor,
                  negative_slope: float = 0.2) -> torch.Tensor:
    r"""Attention coefficients :math:`\alpha_{ji}` in CSR order, (nnz, H).

    :param feat_src: (num_src, H, F) projected sources. :param feat_dst: (num_dst, H, F).
    :param attn_l: / :param attn_r: (1, H, F) attention vectors for sources / destinations.
    """
    el = (feat_src * attn_l).sum(-1)  # (num_src, H)
    er = (feat_dst * attn_r).sum(-1)  # (num_dst, H)
    scores = F.leaky_relu(el[adj.indices] + er[adj.row_index], negative_slope)  # (nnz, H)
    return edge_softmax(adj, scores)  # (nnz, H)


class GATConv(nn.Module):
    r"""Multi-head graph attention layer (Veličković et al., 2018), as DGL ``GATConv``.

    .. math::
        \mathbf{x}'_{i,h} = \sum_{j \in \mathcal{N}(i)} \alpha_{ji,h} \, e_{ji} \,
        \mathbf{W}_h \mathbf{x}_j \;(+\, \mathrm{res}_h(\mathbf{x}_i)) + \mathbf{b}_h,
        \qquad
        \alpha_{ji,h} = \operatorname{softmax}_{j \in \mathcal{N}(i)}\big(
        \operatorname{LeakyReLU}(\mathbf{a}_{l,h}^\top \mathbf{W}_h \mathbf{x}_j +
        \mathbf{a}_{r,h}^\top \mathbf{W}_h \mathbf{x}_i)\big)

    The softmax runs over each destination's in-edges (:func:`edge_softmax`); the weighted sum
    goes through :func:`~graphflow.sparse.spmm` with the attention as edge values, so the
    attention parameters get their gradients from its SDDMM. :math:`e_{ji}` is the edge weight
    (1 by default). A node without in-edges gets only its residual and bias.

    Args:
        in_dim (int): input feature size ``F_in``.
        out_dim (int): output size per head ``F_out``.
        heads (int): number of heads ``H``.
        feat_drop (float, default 0.0): dropout on the input features.
        attn_drop (float, default 0.0): dropout on the attention coefficients.
        negative_slope (float, default 0.2): LeakyReLU slope of the scores.
        residual (bool, default False): add ``x_i`` (when ``F_in == H * F_out``) or a linear
            projection of it (``res_fc``, which then carries the bias).
        bias (bool, default True): learn a bias (H * F_out,).

    Shapes:
        - input: ``adj`` (num_dst x num_src), ``x`` (num_src, F_in) tensor or
          :class:`~graphflow.sparse.features.SparseFeatures`; destinations are ``x[:num_dst]``
        - output: (num_dst, H, F_out)
    """

    #: The output is a new tensor that no autograd node saved, so :class:`GNNStack` may apply
    #: its activation in place.
    fresh_output = True

    def __init__(self, in_dim: int, out_dim: int, heads: int, feat_drop: float = 0.0,
                 attn_drop: float = 0.0, negative_slope: float = 0.2, residual: bool = False,
                 bias: bool = True):
        super().__init__()
        self.in_dim, self.out_dim, self.heads = in_dim, out_dim, heads
        self.feat_drop, self.attn_drop, self.negative_slope = feat_drop, attn_drop, negative_slope
        self.fc = nn.Linear(in_dim, heads * out_dim, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, heads, out_dim))
        self.attn_r = nn.Parameter(torch.empty(1, heads, out_dim))
        self.res_fc: nn.Module | None = None
        linear_res = residual and in_dim != heads * out_dim
        if residual:
            self.res_fc = nn.Linear(in_dim, heads * out_dim, bias=bias) if linear_res \
                else nn.Identity()
        self.bias = nn.Parameter(torch.empty(heads * out_dim)) if bias and not linear_res \
            else None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        gain = nn.init.calculate_gain("relu")
        nn.init.xavier_normal_(self.fc.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                nn.init.zeros_(self.res_fc.bias)

    def forward(self, adj: Adjacency, x: Features,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        h = dropout(x, self.feat_drop, self.training)
        feat_src = linear(h, self.fc.weight).view(-1, self.heads, self.out_dim)  # (num_src, H, F)
        feat_dst = feat_src[: adj.num_dst]  # (num_dst, H, F)
        alpha = gat_attention(adj, feat_src, feat_dst, self.attn_l, self.attn_r,
                              self.negative_slope)  # (nnz, H)
        alpha = dropout(alpha, self.attn_drop, self.training)
        weight = edge_weight if edge_weight is not None else adj.values
        if weight is not None:
            alpha = alpha * adj.norm("none", weight)[:, None]  # (nnz, H)
        out = spmm(adj, feat_src, alpha)  # (num_dst, H, F)
        if isinstance(self.res_fc, nn.Linear):
            res = linear(h[: adj.num_dst], self.res_fc.weight, self.res_fc.bias)
            out = out + res.view(-1, self.heads, self.out_dim)
        elif self.res_fc is not None:
            out = out + to_dense(h[: adj.num_dst]).view(-1, self.heads, self.out_dim)
        if self.bias is not None:
            out = out + self.bias.view(1, self.heads, self.out_dim)
        return out

    def extra_repr(self) -> str:
        return (f"{self.in_dim}, {self.out_dim}, heads={self.heads}, "
                f"residual={self.res_fc is not None}")
