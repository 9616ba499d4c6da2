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


def _check_positive(obj: object, *names: str) -> None:
    for name in names:
        if getattr(obj, name) <= 0:
            raise ValueError(f"{name} = {getattr(obj, name)}: must be > 0")


class GNNExplainerMethod(Explainer):
    """GNNExplainer (Ying et al. 2019): soft masks over the edges of each target's L-hop
    computation subgraph and over the features, learnt with the paper's size and entropy
    regularisers (PyG's default coefficients), many targets in one batched union
    (:mod:`graphflow.explain.gnnexplainer`). Node, graph and link models (a pair's link
    probability σ(s)). Importances in [0, 1]."""

    name = "gnnexplainer"
    summary = "GNNExplainer: learnt soft edge and feature masks (Ying et al. 2019)"
    Options = GNNExplainerOptions
    explains = ("node", "link", "graph")

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gnnexplainer import gnn_explainer

        o = self.options
        return gnn_explainer(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                             epochs=o.epochs, lr=o.lr, batch=o.batch,
                             feature_mask=o.feature_mask and not inputs.categorical,
                             seed=o.seed,
                             graph_ptr=inputs.graph_ptr, pairs=inputs.pairs)


@dataclass
class PGExplainerOptions:
    epochs: int = option(30, "Training epochs of the mask generator.")
    lr: float = option(0.003, "Adam's learning rate.")
    batch: int = option(64, "Training targets per union: one forward pass and Adam step each.")
    hidden: int = option(64, "Hidden width of the generator's MLP.")
    train: int = option(0, "Targets to train on, drawn from those explained (0: all of them).")
    edge_size: float = option(0.05, "Weight of the mask-size regulariser.")
    edge_ent: float = option(1.0, "Weight of the mask-entropy regulariser.")
    seed: int = option(0, "Seed of the generator's weights, the concrete samples and the draw.")

    def __post_init__(self) -> None:
        _check_positive(self, "epochs", "batch", "hidden", "lr")
        if self.train < 0:
            raise ValueError(f"train = {self.train}: must be >= 0 (0: every target)")
        if self.edge_size < 0 or self.edge_ent < 0:
            raise ValueError("edge_size and edge_ent must be >= 0")


class PGExplainerMethod(Explainer):
    """PGExplainer (Luo et al. 2020): an MLP over the embeddings of an edge's endpoints (and
    of the explained node) gives every edge's mask logit; trained once over many targets
    with the paper's temperature schedule and size / entropy regularisers (PyG's defaults),
    it then explains every target in one forward pass (:mod:`graphflow.explain.pgexplainer`).
    Reads the model's hidden node embeddings. Importances in [0, 1]; no feature mask."""

    name = "pgexplainer"
    summary = "PGExplainer: a trained edge-mask generator (Luo et al. 2020)"
    Options = PGExplainerOptions
    explains = ("node", "graph")

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.errors import ConfigError
        from graphflow.explain.pgexplainer import pg_explainer

        if inputs.embeddings is None:
            raise ConfigError("--method pgexplainer reads the model's hidden node embeddings, "
                              "and this model has no layer-wise structure (layer(i, adj, h), "
                              "num_layers) to take them from; use gnnexplainer")
        o = self.options
        train = targets
        if 0 < o.train < targets.numel():
            gen = torch.Generator().manual_seed(o.seed)
            train = targets[torch.randperm(targets.numel(), generator=gen)[:o.train]]
        return pg_explainer(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                            embeddings=inputs.embeddings, train_targets=train,
                            epochs=o.epochs, lr=o.lr, batch=o.batch, hidden=o.hidden,
                            coeffs={"edge_size": o.edge_size, "edge_ent": o.edge_ent},
                            seed=o.seed, graph_ptr=inputs.graph_ptr)


@dataclass
class GradientOptions:
    steps: int = option(50, "ig: integration steps (Gauss-Legendre); saliency ignores it.")
    batch: int = option(256, "Targets differentiated together (one union).")

    def __post_init__(self) -> None:
        for name in ("steps", "batch"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")


def refuse_codes(method: str, inputs: GraphInputs) -> None:
    """Gradient methods attribute the input features too, which category codes (an atom
    encoder's input) have no gradient for: one line naming the methods that can."""
    if inputs.categorical:
        from graphflow.errors import ConfigError

        raise ConfigError(f"--method {method}: the model embeds its input features as "
                          f"categories (an atom encoder), which have no gradient; use "
                          f"gnnexplainer or pgexplainer (edge masks only)")


class Saliency(Explainer):
    """Saliency (Simonyan et al. 2014) through Captum: the absolute gradient of the explained
    class's logit with respect to each edge weight and each input feature
    (:mod:`graphflow.explain.gradients`; the ``explain`` extra)."""

    name = "saliency"
    summary = "Saliency: absolute input gradients (Captum)"
    Options = GradientOptions
    explains = ("node", "link", "graph")
    feature_gradients = True

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gradients import gradient_attributions

        refuse_codes(self.name, inputs)
        return gradient_attributions(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                                     method="saliency", batch=self.options.batch,
                                     graph_ptr=inputs.graph_ptr, pairs=inputs.pairs)


class IntegratedGradients(Explainer):
    """Integrated gradients (Sundararajan et al. 2017) through Captum, from zero features
    and zero edge weights: signed attributions that sum to the logit's change from the
    baseline (:mod:`graphflow.explain.gradients`; the ``explain`` extra)."""

    name = "ig"
    summary = "Integrated gradients from a zero baseline (Captum)"
    Options = GradientOptions
    explains = ("node", "link", "graph")
    feature_gradients = True

    def explain(self, model: Any, inputs: GraphInputs, targets: torch.Tensor) -> Explanation:
        from graphflow.explain.gradients import gradient_attributions

        refuse_codes(self.name, inputs)
        o = self.options
        return gradient_attributions(model, inputs.adj, inputs.x, targets, hops=inputs.hops,
                                     method="ig", n_steps=o.steps, batch=o.batch,
                                     graph_ptr=inputs.graph_ptr, pairs=inputs.pairs)


@hookimpl
def graphflow_register_explainers(register):
    register(GNNExplainerMethod)
    register(PGExplainerMethod)
    register(Saliency)
    register(IntegratedGradients)
