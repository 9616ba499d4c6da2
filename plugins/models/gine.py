"""``[model] type = "gine"``: GIN with edge features (Hu et al., ICLR 2020)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from torch import nn

from graphflow.nn.gine import GINEConv
from graphflow.nn.linear import LazyLinear
from graphflow.options import option
from graphflow_plugins.models.gin import GINModel, GINOptions


@dataclass
class GINEOptions(GINOptions):
    edge_encoder: Literal["linear", "bond"] = option(
        "linear", 'Each layer\'s map of the edge features: "linear" (a linear map to the '
                  'layer\'s width, PyG / DGL GINEConv) or "bond" (OGB\'s BondEncoder: a sum '
                  "of one embedding per categorical bond feature, from [load] type = "
                  '"smiles", as OGB\'s GIN).')


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
    Options = GINEOptions
    options: GINEOptions
    accepts_sparse = False  # dense node vectors: the messages add them to the edges' maps
    reads_edge_features = True  # the graph-level tasks carry them

    def layer(self, h: nn.Module, in_width: int) -> nn.Module:
        o = self.options
        if o.edge_encoder == "bond":
            from graphflow.graphs.encoders import BondEncoder

            edges: nn.Module = BondEncoder(in_width)
        else:
            edges = LazyLinear(in_width)
        return GINEConv(h, edges, eps=o.eps, learn_eps=o.learn_eps)
