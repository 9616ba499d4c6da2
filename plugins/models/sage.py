"""``[model] type = "sage"``: GraphSAGE with the mean aggregator (Hamilton et al., 2017)."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.components import Model
from graphflow.nn.sage import SAGEConv
from graphflow.nn.stack import GNNStack
from graphflow_plugins.models.options import StackOptions


@dataclass
class SAGEOptions(StackOptions):
    pass


class SAGEModel(Model):
    r"""GraphSAGE, mean aggregator (Hamilton, Ying & Leskovec, NeurIPS 2017).

    Each layer computes :math:`W_1 h_i + W_2 \operatorname{mean}_{j \in N(i)} h_j + b`. It
    trains well on sampled neighborhoods (``[sample] type = "neighbor"``) and predicts with
    layer-wise full-neighbor inference.
    """

    name = "sage"
    summary = "GraphSAGE with the mean aggregator (Hamilton et al. 2017)"
    Options = SAGEOptions
    accepts_sparse = True  # its layers take SparseFeatures (graphflow.sparse.features)

    def build(self, in_dim: int, out_dim: int) -> GNNStack:
        o = self.options
        dims = o.dims(in_dim, out_dim)
        layers = [SAGEConv(dims[i], dims[i + 1]) for i in range(len(dims) - 1)]
        return GNNStack(layers, dims, activation=o.activation, dropout=o.dropout,
                        input_dropout=o.input_dropout, norm=o.norm, residual=o.residual)
