"""Plugin "explainers": explanation methods (``graphflow explain --method NAME``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from graphflow.components import Explainer
from graphflow.explain.explanation import Explanation, GraphInputs
from graphflow.options import option
from graphflow.plugin import hookimpl


@dataclass
class GNNExplainerOptions:
    epochs: int = option(100, "Optimisation epochs of the masks.")
    lr: float = option(0.01, "Adam's learning rate.")
    batch: int = option(256, "Targets whose subgraphs are optimised together (one union).")
    feature_mask: bool = option(True, "Learn the feature mask too (as the paper does).")
    seed: int = option(0, "Seed of the masks' initial values.")

    def __post_init__(self) -> None:
        for name in ("epochs", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")
        if self.lr <= 0:
            raise ValueError(f"lr = {self.lr}: must be > 0")


class GNNExplainerMethod(Explainer):
    """GNNExplainer (Ying et al. 2019): soft masks over the edges of each target's L-hop
    computation subgraph and over the features, learnt with the paper's size and entropy
    regularisers (PyG's default coefficients), many targets in one batched union
    (:mod:`graphflow.explain.gnnexplainer`). Importances in [0, 1]."""

    name = "gnnexplainer"
    summary = "GNNExplainer: learnt soft edge and feature masks (Ying et al. 2019)"
    Options = GNNExplainerOptions

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gnnexplainer import gnn_explainer

        o = self.options
        return gnn_explainer(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                             epochs=o.epochs, lr=o.lr, batch=o.batch,
                             feature_mask=o.feature_mask, seed=o.seed)


@dataclass
class GradientOptions:
    steps: int = option(50, "ig: integration steps (Gauss-Legendre); saliency ignores it.")
    batch: int = option(256, "Targets differentiated together (one union).")

    def __post_init__(self) -> None:
        for name in ("steps", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")


class Saliency(Explainer):
    """Saliency (Simonyan et al. 2014) through Captum: the absolute gradient of the explained
    class's logit with respect to each edge weight and each input feature
    (:mod:`graphflow.explain.gradients`; the ``explain`` extra)."""

    name = "saliency"
    summary = "Saliency: absolute input gradients (Captum)"
    Options = GradientOptions

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gradients import gradient_attributions

        return gradient_attributions(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                                     method="saliency", batch=self.options.batch)


class IntegratedGradients(Explainer):
    """Integrated gradients (Sundararajan et al. 2017) through Captum, from zero features
    and zero edge weights: signed attributions that sum to the logit's change from the
    baseline (:mod:`graphflow.explain.gradients`; the ``explain`` extra)."""

    name = "ig"
    summary = "Integrated gradients from a zero baseline (Captum)"
    Options = GradientOptions

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gradients import gradient_attributions

        o = self.options
        return gradient_attributions(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                                     method="ig", n_steps=o.steps, batch=o.batch)


@hookimpl
def graphflow_register_explainers(register):
    register(GNNExplainerMethod)
    register(Saliency)
    register(IntegratedGradients)
