"""``[model] type = "gine"``: GIN with edge features (Hu et al., ICLR 2020)."""

from __future__ import annotations

from torch import nn

from graphflow.components import Model
from graphflow.nn.gine import GINEConv
from graphflow.nn.stack import GNNStack
from graphflow_plugins.models.gin import GINOptions, mlp


class GINEModel(Model):
    r"""GIN whose messages carry edge features (Hu et al., 2020; PyG ``GINEConv``).

    Each layer computes :math:`\mathrm{MLP}\big((1 + \epsilon) h_i + \sum_{j \in N(i)}
    \mathrm{ReLU}(h_j + W_l e_{ji} + b_l)\big)`, with a linear map :math:`W_l` per layer from
    the edge features to the layer's input width. The edge features are the collection's
    ``edata["edge_feat"]`` (the ``tu`` loader's edge attributes, or its edge labels one-hot),
    cut into every batch; their width is read from the first batch (the maps are
    ``nn.LazyLinear``), so the options are GIN's.
    """

    name = "gine"
    summary = "GIN with edge features (Hu et al. 2020)"
    Options = GINOptions
    reads_edge_features = True  # the graph-level tasks carry them

    def build(self, in_dim: int, out_dim: int) -> GNNStack:
        o = self.options
        dims = o.dims(in_dim, out_dim)
        n = len(dims) - 1
        layers = []
        for i in range(n):
            inner = dims[i + 1] if i < n - 1 else dims[i]
            layers.append(GINEConv(mlp(dims[i], inner, dims[i + 1], o.mlp_layers, o.mlp_norm),
                                   nn.LazyLinear(dims[i]), eps=o.eps, learn_eps=o.learn_eps))
        return GNNStack(layers, dims, activation=o.activation, dropout=o.dropout,
                        input_dropout=o.input_dropout, norm=o.norm, residual=o.residual)
