"""``[model] type = "gin"``: graph isomorphism network (Xu et al., ICLR 2019)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import nn

from graphflow.components import Model
from graphflow.nn.gin import GINConv
from graphflow.nn.linear import Linear
from graphflow.nn.stack import GNNStack, Norm, make_activation, make_norm
from graphflow.options import option
from graphflow_plugins.models.options import (InputEncoder, StackOptions,
                                              input_encoder_option, virtual_node_option,
                                              with_input_encoder)


@dataclass
class GINOptions(StackOptions):
    eps: float = option(0.0, "Initial epsilon: the weight (1 + eps) of a node's own features.")
    learn_eps: bool = option(False, "Learn epsilon (GIN-eps) instead of fixing it (GIN-0).")
    mlp_layers: int = option(2, "Linear layers in each layer's MLP (ReLU between them).")
    mlp_norm: Literal["auto", "none", "batch", "layer"] = option(
        "auto", "Normalisation inside each MLP, after every linear map but the last: auto "
                "(the stack's norm: with norm = batch, batch norm inside the MLPs as in the GIN "
                "paper's code and DGL's GIN example), none, batch or layer.")
    mlp_ratio: float = option(
        1.0, "Inner width of each MLP as a multiple of its layer's width (a hidden layer's "
             "output width, the last layer's input width): 1 keeps the width (the GIN paper's "
             "code, DGL's example); 2 is OGB's molecule GIN, 300 -> 600 -> 300.")
    norm_last: bool = option(
        False, "Apply the norm and activation after the last layer too, as after the hidden "
               "ones (the GIN recipe, where every layer's output is read out; the graph tasks "
               "turn it on). False: the last layer's output is raw (node tasks' logits).")
    activation_last: bool = option(
        True, "With norm_last: the activation after the last layer's norm too (the GIN "
              "recipe). False: the norm only, as OGB's molecule GNNs (no ReLU on the last "
              "layer).")
    dropout_at: Literal["input", "output"] = option(
        "input", "Where the stack's dropout falls: input (every layer's input; the features "
                 "at input_dropout) or output (every layer's output after its norm and "
                 "activation, the last layer's included, as OGB's molecule GNNs; the features "
                 "only at an explicit input_dropout).")
    input_encoder: InputEncoder = input_encoder_option()
    virtual_node: bool = virtual_node_option()

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.mlp_layers < 1:
            raise ValueError(f"mlp_layers must be >= 1, got {self.mlp_layers}")
        if not self.mlp_ratio > 0:
            raise ValueError(f"mlp_ratio must be > 0, got {self.mlp_ratio}")

    @property
    def inner_norm(self) -> Norm:
        """The norm inside the MLPs: ``mlp_norm``, the stack's ``norm`` when ``auto``."""
        return self.norm if self.mlp_norm == "auto" else self.mlp_norm


def mlp(in_dim: int, hidden: int, out_dim: int, layers: int, norm: str = "none") -> nn.Module:
    """``layers`` linear maps ``in -> hidden -> ... -> out`` with ReLU between them, each but
    the last followed by ``norm`` (ReLU in place: no linear map's or norm's backward reads
    its own output)."""
    widths = [in_dim] + [hidden] * (layers - 1) + [out_dim]
    mods: list[nn.Module] = []
    for i in range(layers):
        mods.append(Linear(widths[i], widths[i + 1]))  # nn.Linear, graphflow's products
        if i < layers - 1:
            if norm != "none":  # no Identity: the state dict keeps its keys (mlp.2.weight)
                mods.append(make_norm(norm, widths[i + 1]))
            mods.append(nn.ReLU(inplace=True))
    return nn.Sequential(*mods)


class GINModel(Model):
    r"""Graph isomorphism network (Xu et al., ICLR 2019), sum aggregator.

    Each layer computes :math:`\mathrm{MLP}\big((1 + \epsilon) h_i + \sum_{j \in N(i)} h_j\big)`;
    the MLP has ``mlp_layers`` linear maps (the output layer's MLP ends in the classes).
    With ``norm = "batch"``, ``mlp_norm = "auto"``, ``eps = 0`` and ``norm_last`` (what the
    graph tasks default to), a layer is DGL's GIN example's exactly: ``ReLU(BN(W_2 ReLU(BN(W_1
    ((1 + 0) h_i + sum_j h_j)))))``, the inner linear maps with biases (DGL's have none: a
    bias followed by a batch norm adds nothing to the function). With ``mlp_ratio = 2``,
    ``learn_eps``, ``norm_last`` without ``activation_last`` and ``dropout_at = "output"``,
    ``gine`` with OGB's encoders is OGB's molecule GIN (``examples/graphproppred/mol``):
    ``drop(ReLU(BN(W_2 ReLU(BN(W_1 agg)))))`` per layer, ``drop(BN(W_2 ReLU(BN(W_1 agg))))``
    for the last (``tests/graphs/test_ogb_mol_parity.py``).
    """

    name = "gin"
    summary = "Graph isomorphism network (Xu et al. 2019)"
    Options = GINOptions
    accepts_sparse = True  # its layers take SparseFeatures (graphflow.sparse.features)

    def build(self, in_dim: int, out_dim: int) -> nn.Module:
        o = self.options
        return with_input_encoder(o.input_encoder, o.hidden, o.layers, in_dim, out_dim,
                                  self.stack, virtual_node=o.virtual_node, dropout=o.dropout)

    def stack(self, in_dim: int, out_dim: int) -> GNNStack:
        """The GIN layers from ``in_dim`` features (after any input encoder)."""
        o = self.options
        dims = o.dims(in_dim, out_dim)
        n = len(dims) - 1
        layers = []
        for i in range(n):
            width = dims[i + 1] if i < n - 1 else dims[i]
            inner = max(1, round(o.mlp_ratio * width))
            h = mlp(dims[i], inner, dims[i + 1], o.mlp_layers, o.inner_norm)
            if i == n - 1 and o.norm_last:  # the stack's norm and activation, as a hidden layer's
                if o.norm != "none":
                    h.append(make_norm(o.norm, dims[i + 1]))
                if o.activation_last:
                    h.append(make_activation(o.activation, inplace=True))
            layers.append(self.layer(h, dims[i]))
        return GNNStack(layers, dims, activation=o.activation, dropout=o.dropout,
                        input_dropout=o.input_dropout, norm=o.norm, residual=o.residual,
                        dropout_at=o.dropout_at)

    def layer(self, h: nn.Module, in_width: int) -> nn.Module:
        """One message-passing layer around the MLP ``h`` (its input ``in_width`` wide)."""
        return GINConv(h, eps=self.options.eps, learn_eps=self.options.learn_eps)
