"""``[model] type = "gat"``: graph attention network (Veličković et al., ICLR 2018)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch
from torch import nn

from graphflow.components import Model
from graphflow.nn.gat import GATConv
from graphflow.nn.stack import Activation, GNNStack
from graphflow.options import option
from graphflow.sparse import Adjacency
from graphflow.sparse.features import Features
from graphflow_plugins.models.options import StackOptions


@dataclass
class GATOptions(StackOptions):
    hidden: int | list[int] = option(
        8, "Width of each head in the hidden layers (one width per hidden layer if a list).")
    dropout: float = option(0.6, "Dropout on the input of every layer.")
    activation: Activation = option("elu", "Activation after each hidden layer.")
    heads: int = option(8, "Attention heads of each hidden layer (their outputs concatenate).")
    out_heads: int = option(1, "Attention heads of the output layer (their outputs average).")
    attn_dropout: float = option(0.6, "Dropout on the attention coefficients.")
    negative_slope: float = option(0.2, "LeakyReLU slope of the attention scores.")
    self_loops: bool = option(True, "Add a self-loop to every node that has none, so that "
                                    "each node attends to itself.")

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.heads < 1 or self.out_heads < 1:
            raise ValueError(f"heads and out_heads must be >= 1, got {self.heads} and "
                             f"{self.out_heads}")
        if not 0 <= self.attn_dropout < 1:
            raise ValueError(f"attn_dropout must lie in [0, 1), got {self.attn_dropout}")


class HeadMerge(nn.Module):
    """A :class:`GATConv` whose (num_dst, H, F) output is concatenated to (num_dst, H * F)
    (hidden layers) or averaged to (num_dst, F) (the output layer)."""

    def __init__(self, conv: GATConv, merge: Literal["concat", "mean"]):
        super().__init__()
        self.conv, self.merge = conv, merge

    def forward(self, adj: Adjacency, x: Features) -> torch.Tensor:
        out = self.conv(adj, x)  # (num_dst, H, F)
        return out.flatten(1) if self.merge == "concat" else out.mean(1)

    def extra_repr(self) -> str:
        return f"merge={self.merge!r}"


class GATModel(Model):
    r"""Graph attention network (Veličković et al., ICLR 2018).

    Each head computes :math:`\sum_{j} \alpha_{ij} W h_j` with
    :math:`\alpha_{ij} = \operatorname{softmax}_j(\operatorname{LeakyReLU}(a^\top[W h_i \|
    W h_j]))` over the in-neighbors (and the node itself, with ``self_loops``). Hidden layers
    concatenate their ``heads``; the output layer averages its ``out_heads``. The defaults
    are the paper's Cora setting: 8 heads of 8 units, ELU, dropout 0.6 on every layer's input
    and on the attention (with ``[train] lr = 0.005, weight_decay = 5e-4``).
    """

    name = "gat"
    summary = "Graph attention network (Veličković et al. 2018)"
    Options = GATOptions
    accepts_sparse = True  # its layers take SparseFeatures (graphflow.sparse.features)

    def build(self, in_dim: int, out_dim: int) -> GNNStack:
        o = self.options
        dims = o.dims(in_dim, out_dim, hidden_scale=o.heads)  # hidden widths: heads * hidden
        n = len(dims) - 1
        layers = []
        for i in range(n):
            last = i == n - 1
            heads = o.out_heads if last else o.heads
            width = dims[i + 1] if last else dims[i + 1] // o.heads
            conv = GATConv(dims[i], width, heads, attn_drop=o.attn_dropout,
                           negative_slope=o.negative_slope)
            layers.append(HeadMerge(conv, "mean" if last else "concat"))
        return GNNStack(layers, dims, activation=o.activation, dropout=o.dropout,
                        input_dropout=o.input_dropout, norm=o.norm, residual=o.residual,
                        self_loops=o.self_loops)
