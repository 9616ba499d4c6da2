r"""Portable twins of graphflow's message-passing layers.

Each twin computes its layer's eval-mode output with the trained layer's own parameters
(copied, never retrained) and the same math, but its message passing is written with
:func:`graphflow.portable.graph.aggregate` (``index_select`` on source rows times per-edge
values, summed into destination rows) instead of graphflow's CSR kernels, so that
TorchScript and ONNX runtimes can run it. Every twin has one signature,
``forward(h, g) -> out``: ``h`` (num_src, F_in) and the layer's
:class:`~graphflow.portable.graph.Edges` to (num_dst, F_out).

Dropout is left out (eval mode). Parameters are plain tensors; a 2:4-pruned weight is copied
with its zeros (its ``weight_mask`` applied once more).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from graphflow.portable.graph import Edges, aggregate, edge_sum, gather


def _param(t: Tensor | None) -> nn.Parameter | None:
    return None if t is None else nn.Parameter(t.detach().clone().float(), requires_grad=False)


class PortableGCN(nn.Module):
    r"""Twin of :class:`graphflow.nn.gcn.GCNConv`: ``\hat{A} (h W) + b`` with ``norm``
    ``"both"`` (:math:`e_{ji} / \sqrt{d^{out}_j d^{in}_i}`), ``"right"`` (:math:`e_{ji} /
    d^{in}_i`) or ``"none"``."""

    def __init__(self, weight: Tensor | None, bias: Tensor | None, norm: str):
        super().__init__()
        self.weight = _param(weight)  # (F_in, F_out) or None
        self.bias = _param(bias)  # (F_out,) or None
        self.norm = norm
        # The messages carry the narrower of h and h W (the product is linear).
        self.project_first = weight is not None and weight.shape[1] <= weight.shape[0]

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        values = g.weight  # (E',)
        if self.norm == "both":
            values = values * g.in_deg.rsqrt()[g.dst] * g.out_deg.rsqrt()[g.src]
        elif self.norm == "right":
            values = values / g.in_deg[g.dst]
        weight = self.weight
        if weight is not None and self.project_first:
            h = h.matmul(weight)  # (num_src, F_out)
        out = aggregate(h, g, values)  # (num_dst, F_out or F_in)
        if weight is not None and not self.project_first:
            out = out.matmul(weight)  # (num_dst, F_out)
        bias = self.bias
        return out if bias is None else out + bias


class PortableSAGE(nn.Module):
    r"""Twin of :class:`graphflow.nn.sage.SAGEConv` (mean aggregator):
    :math:`W_1 h_i + W_2 \frac{1}{d^{in}_i} \sum_j e_{ji} h_j + b`. When ``W_2`` shrinks the
    features, the messages carry ``h_j W_2^T`` (the mean is linear), as graphflow's layer
    does."""

    def __init__(self, w_self: Tensor, w_neigh: Tensor, bias: Tensor | None):
        super().__init__()
        self.w_self = _param(w_self)  # (F_out, F_in)
        self.w_neigh = _param(w_neigh)  # (F_out, F_in)
        self.bias = _param(bias)
        self.project_first = w_neigh.shape[0] < w_neigh.shape[1]

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        own = F.linear(gather(h, g.dst_rows), self.w_self, self.bias)  # (num_dst, F_out)
        if self.project_first:
            return own + aggregate(F.linear(h, self.w_neigh), g, g.weight) \
                / g.in_deg.unsqueeze(1)
        mean = aggregate(h, g, g.weight) / g.in_deg.unsqueeze(1)  # (num_dst, F_in)
        return own + F.linear(mean, self.w_neigh)  # (num_dst, F_out)


class PortableGIN(nn.Module):
    r"""Twin of :class:`graphflow.nn.gin.GINConv`:
    :math:`\mathrm{MLP}((1 + \epsilon) h_i + \sum_j e_{ji} h_j)`; ``mlp`` is made of torch's
    own modules (see :func:`graphflow.portable.convert.plain_module`)."""

    def __init__(self, eps: Tensor, mlp: nn.Module):
        super().__init__()
        self.register_buffer("eps", eps.detach().clone().float().reshape(1))
        self.mlp = mlp

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        out = (1 + self.eps) * gather(h, g.dst_rows) + aggregate(h, g, g.weight)
        return self.mlp(out)


class PortableGINE(nn.Module):
    r"""Twin of :class:`graphflow.nn.gine.GINEConv`:
    :math:`\mathrm{MLP}((1 + \epsilon) h_i + \sum_j \mathrm{ReLU}(h_j + g(e_{ji})))`, the
    edge features ``g.feat`` mapped by ``encoder`` (torch modules; identity for none)."""

    def __init__(self, eps: Tensor, mlp: nn.Module, encoder: nn.Module):
        super().__init__()
        self.register_buffer("eps", eps.detach().clone().float().reshape(1))
        self.mlp, self.encoder = mlp, encoder

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        messages = torch.relu(gather(h, g.src) + self.encoder(g.feat))  # (E', F)
        # times the edge values, as graphflow's gine_aggregate (ones on an unweighted graph)
        messages = messages * g.weight.unsqueeze(1)
        out = (1 + self.eps) * gather(h, g.dst_rows) + edge_sum(messages, g)
        return self.mlp(out)


class PortableSGC(nn.Module):
    r"""Twin of :class:`graphflow.nn.sgc.SGConv`: :math:`S^K h W + b`. On the full graph
    :math:`S = D_{in}^{-1/2} A D_{in}^{-1/2}`; on a block (``k = 1``) the sources' out-degrees
    replace the in-degrees on the source side (:class:`PortableGCN`'s ``"both"``)."""

    def __init__(self, weight: Tensor, bias: Tensor | None, k: int, square: bool):
        super().__init__()
        self.weight = _param(weight)  # (F_out, F_in)
        self.bias = _param(bias)
        self.k, self.square = k, square

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        r_dst = g.in_deg.rsqrt()  # (num_dst,)
        r_src = r_dst if self.square else g.out_deg.rsqrt()
        values = g.weight * r_dst[g.dst] * r_src[g.src]  # (E',)
        h = F.linear(h, self.weight)  # (num_src, F_out): S^K is linear, so W may go first
        for _ in range(self.k):
            h = aggregate(h, g, values)
        bias = self.bias
        return h if bias is None else h + bias


class PortableGAT(nn.Module):
    r"""Twin of :class:`graphflow.nn.gat.GATConv` followed by its head merge (``"concat"``:
    (num_dst, H * F); ``"mean"``: (num_dst, F)).

    The softmax over each destination's in-edges subtracts the destination's largest score
    (``scatter_reduce`` amax: ONNX ScatterElements with reduction max, opset 18).
    """

    def __init__(self, fc: Tensor, attn_l: Tensor, attn_r: Tensor, heads: int, out_dim: int,
                 negative_slope: float, bias: Tensor | None, res_fc: Tensor | None,
                 res_bias: Tensor | None, identity_residual: bool, merge: str):
        super().__init__()
        self.fc = _param(fc)  # (H * F, F_in)
        self.attn_l = _param(attn_l.reshape(1, heads, out_dim))
        self.attn_r = _param(attn_r.reshape(1, heads, out_dim))
        self.bias = _param(bias)  # (H * F,) or None
        self.res_fc = _param(res_fc)  # (H * F, F_in) or None
        self.res_bias = _param(res_bias)
        self.heads, self.out_dim = heads, out_dim
        self.negative_slope = negative_slope
        self.identity_residual = identity_residual
        self.merge = merge

    def forward(self, h: Tensor, g: Edges) -> Tensor:
        heads, width = self.heads, self.out_dim
        feat = F.linear(h, self.fc).view(-1, heads, width)  # (num_src, H, F)
        h_dst = gather(h, g.dst_rows)  # (num_dst, F_in)
        feat_dst = gather(feat, g.dst_rows)  # (num_dst, H, F)
        el = (feat * self.attn_l).sum(-1)  # (num_src, H)
        er = (feat_dst * self.attn_r).sum(-1)  # (num_dst, H)
        scores = F.leaky_relu(gather(el, g.src) + gather(er, g.dst),
                              self.negative_slope)  # (E', H)
        index = g.dst.unsqueeze(1).expand_as(scores)  # (E', H)
        top = torch.full_like(er, float("-inf")).scatter_reduce(
            0, index, scores, "amax")  # (num_dst, H); -inf where no edge arrives
        e = (scores - gather(top, g.dst)).exp() * g.count.unsqueeze(1)  # (E', H)
        total = torch.zeros_like(er).scatter_add(0, index, e)  # (num_dst, H)
        alpha = e / gather(total, g.dst).clamp(min=1e-38)  # (E', H)
        values = alpha * g.weight.unsqueeze(1)  # (E', H)
        messages = (gather(feat, g.src) * values.unsqueeze(2)).flatten(1)  # (E', H * F)
        out = torch.zeros_like(feat_dst.flatten(1)).scatter_add(
            0, g.dst.unsqueeze(1).expand_as(messages), messages)  # (num_dst, H * F)
        res_fc = self.res_fc
        if res_fc is not None:
            out = out + F.linear(h_dst, res_fc, self.res_bias)
        elif self.identity_residual:
            out = out + h_dst
        bias = self.bias
        if bias is not None:
            out = out + bias
        if self.merge == "mean":
            return out.view(-1, heads, width).mean(1)  # (num_dst, F)
        return out  # (num_dst, H * F)
