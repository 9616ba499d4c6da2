"""``[model] type = "gine"``: GIN with edge features (Hu et al., ICLR 2020)."""

from __future__ import annotations

from torch import nn

from graphflow.nn.gine import GINEConv
from graphflow.nn.linear import LazyLinear
from graphflow_plugins.models.gin import GINModel


class GINEModel(GINModel):
    r"""GIN whose messages carry edge features (Hu et al., 2020; PyG ``GINEConv``).

    Each layer computes :math:`\mathrm{MLP}\big((1 + \epsilon) h_i + \sum_{j \in N(i)}
    \mathrm{ReLU}(h_j + W_l e_{ji} + b_l)\big)`, with a linear map :math:`W_l` per layer from
    the edge features to the layer's input width. The edge features are the collection's
    ``edata["edge_feat"]`` (the ``tu`` loader's edge attributes, or its edge labels one-hot),
    cut into every batch; their width is read from the first batch (the maps are
    :class:`graphflow.nn.linear.LazyLinear`), so the options and the stack are GIN's.
    """

    name = "gine"
    summary = "GIN with edge features (Hu et al. 2020)"
    accepts_sparse = False  # dense node vectors: the messages add them to the edges' maps
    reads_edge_features = True  # the graph-level tasks carry them

    def layer(self, h: nn.Module, in_width: int) -> nn.Module:
        o = self.options
        return GINEConv(h, LazyLinear(in_width), eps=o.eps, learn_eps=o.learn_eps)
