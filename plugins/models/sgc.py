"""``[model] type = "sgc"``: simplified graph convolution (Wu et al., ICML 2019)."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.components import Model
from graphflow.nn.sgc import SGConv
from graphflow.nn.stack import GNNStack
from graphflow.options import option


@dataclass
class SGCOptions:
    k: int = option(2, "Propagation steps K (the receptive field in hops).")
    dropout: float = option(0.0, "Dropout on the input features.")
    self_loops: bool = option(True, "Add a self-loop to every node that has none (A + I).")
    cached: bool = option(
        True, "Propagate the features once and reuse them (full-batch training; a sampler "
              "needs k = 1 and gets no reuse).")
    bias: bool = option(True, "Learn a bias.")

    def __post_init__(self) -> None:
        if self.k < 1:
            raise ValueError(f"k must be >= 1, got {self.k}")
        if not 0 <= self.dropout < 1:
            raise ValueError(f"dropout must lie in [0, 1), got {self.dropout}")


class SGCModel(Model):
    r"""Simplified graph convolution (Wu et al., ICML 2019): logistic regression on
    :math:`S^K X` with :math:`S = \hat{D}^{-1/2} \hat{A} \hat{D}^{-1/2}`, :math:`\hat{A} = A + I`.

    One linear layer, no nonlinearity: with ``cached`` the propagation runs once, so training
    costs little more than a linear model. Prediction on the full graph only when ``k > 1``.
    """

    name = "sgc"
    summary = "Simplified graph convolution (Wu et al. 2019)"
    Options = SGCOptions
    accepts_sparse = True  # its layers take SparseFeatures (graphflow.sparse.features)

    def build(self, in_dim: int, out_dim: int) -> GNNStack:
        o = self.options
        conv = SGConv(in_dim, out_dim, k=o.k, cached=o.cached, bias=o.bias)
        return GNNStack([conv], [in_dim, out_dim], dropout=o.dropout, self_loops=o.self_loops)
