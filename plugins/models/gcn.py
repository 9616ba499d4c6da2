"""``[model] type = "gcn"``: a stack of graph convolutions (Kipf & Welling, ICLR 2017)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import nn

from graphflow.components import Model
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.options import option
from graphflow_plugins.models.options import (InputEncoder, StackOptions,
                                              input_encoder_option, virtual_node_option,
                                              with_input_encoder)


@dataclass
class GCNOptions(StackOptions):
    hidden: int | list[int] = option(
        16, "Hidden width, or one width per hidden layer (then layers = len(hidden) + 1).")
    self_loops: bool = option(
        True, "Add a self-loop to every node that has none (A + I, as in the paper).")
    gcn_norm: Literal["both", "right", "none"] = option(
        "both", "Edge normalisation: both (D^-1/2 A D^-1/2), right (mean) or none.")
    bias: bool = option(True, "Learn a bias in each layer (the paper's GCN has none).")
    input_encoder: InputEncoder = input_encoder_option()
    virtual_node: bool = virtual_node_option()


class GCNModel(Model):
    r"""Graph convolutional network (Kipf & Welling, ICLR 2017).

    Each layer computes :math:`\hat{D}^{-1/2} \hat{A} \hat{D}^{-1/2} H W + b` with
    :math:`\hat{A} = A + I`; dropout on every layer's input, ReLU between layers.
    The paper's Cora setting is the default: 2 layers, 16 hidden units, dropout 0.5
    (with ``[train] lr = 0.01, weight_decay = 5e-4, decay_on = "first_layer"``).
    """

    name = "gcn"
    summary = "Graph convolutional network (Kipf & Welling 2017)"
    Options = GCNOptions
    accepts_sparse = True  # its layers take SparseFeatures (graphflow.sparse.features)

    def build(self, in_dim: int, out_dim: int) -> nn.Module:
        o = self.options
        return with_input_encoder(o.input_encoder, o.hidden, o.layers, in_dim, out_dim,
                                  self.stack, virtual_node=o.virtual_node, dropout=o.dropout)

    def stack(self, in_dim: int, out_dim: int) -> GNNStack:
        """The GCN layers from ``in_dim`` features (after any input encoder)."""
        o = self.options
        dims = o.dims(in_dim, out_dim)
        layers = [GCNConv(dims[i], dims[i + 1], norm=o.gcn_norm, bias=o.bias)
                  for i in range(len(dims) - 1)]
        return GNNStack(layers, dims, activation=o.activation, dropout=o.dropout,
                        input_dropout=o.input_dropout, norm=o.norm, residual=o.residual,
                        self_loops=o.self_loops)
