r"""PGExplainer (Luo et al., "Parameterized Explainer for Graph Neural Network", NeurIPS
2020): one mask generator, trained over many instances, that explains each of them in one
forward pass.

The generator is an MLP over the embeddings of an edge's endpoints (and of the explained
node, for node targets), computed once by the model on the unmasked graph (its last hidden
layer; a graph model's node vectors before the read-out):

.. math::
    \omega_{ij} = \mathrm{MLP}([z_i \,\|\, z_j \,\|\, z_t]) \quad\text{(node target } t\text{)},
    \qquad \omega_{ij} = \mathrm{MLP}([z_i \,\|\, z_j]) \quad\text{(graph target)}

with ``MLP = Linear(-, 64) -> ReLU -> Linear(64, 1)`` (PyG's). Training samples each
edge's mask from the binary concrete distribution at temperature :math:`\tau_e`,

.. math::
    m_{ij} = \sigma\big((\log \epsilon - \log(1 - \epsilon) + \omega_{ij}) / \tau_e\big),
    \quad \epsilon \sim \mathcal U(b, 1 - b),
    \quad \tau_e = \tau_0 (\tau_1 / \tau_0)^{e / E},

the model reads the masks as edge weights, and the loss per target is

.. math::
    \mathrm{CE}(f(X, A \odot m), \hat y) + \alpha \sum m + \beta\,\overline{H(0.99 m + 0.005)}

with :math:`\hat y` the model's prediction and :math:`H` the element-wise entropy. The
coefficients, the temperature schedule (5 to 2), :math:`b = 0.01`, Adam with ``lr = 0.003``
and 30 epochs are ``torch_geometric.explain.algorithm.PGExplainer``'s defaults
(:data:`COEFFS`). Explaining is one pass of the MLP over the targets' edges:
:math:`\sigma(\omega_{ij})`, no sampling, no optimisation per target.

Vectorised as :mod:`graphflow.explain.gnnexplainer` is: a batch of training targets is one
disjoint union of their computation subgraphs (:mod:`graphflow.explain.subgraph`), one
forward and one backward pass, and one Adam step of the generator, per batch and epoch
(PyG steps once per target).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.errors import DataError
from graphflow.explain.explanation import Explanation
from graphflow.explain.gnnexplainer import _collect
from graphflow.explain.subgraph import make_units
from graphflow.sparse import Adjacency

COEFFS: dict[str, Any] = {"edge_size": 0.05, "edge_ent": 1.0, "temp": (5.0, 2.0),
                          "bias": 0.01}
"""``torch_geometric.explain.algorithm.PGExplainer.coeffs``: the size and entropy weights,
the temperature schedule's ends, the concrete sample's margin."""

Forward = Callable[[Adjacency, torch.Tensor], torch.Tensor]


class MaskGenerator(nn.Module):
    """The explainer network: edge-mask logits from endpoint (and target) embeddings.

    :param dim: the embedding width D.
    :param node_level: also read the explained node's embedding (node targets).
    :param hidden: the MLP's hidden width (64).
    """

    def __init__(self, dim: int, *, node_level: bool, hidden: int = 64):
        super().__init__()
        self.node_level = node_level
        self.mlp = nn.Sequential(nn.Linear(dim * (3 if node_level else 2), hidden), nn.ReLU(),
                                 nn.Linear(hidden, 1))

    def forward(self, z: torch.Tensor, units: Any) -> torch.Tensor:
        """(Eu,) logits of the union ``units``' edges, from embeddings ``z`` (N, D) of the
        graph's nodes."""
        zu = z[units.node]  # (U, D)
        parts = [zu[units.edge_src], zu[units.edge_dst]]  # (Eu, D) each
        if self.node_level:
            parts.append(z[units.targets][units.edge_target])  # (Eu, D)
        return self.mlp(torch.cat(parts, 1)).squeeze(1)


def _embeddings(embeddings: torch.Tensor, adj: Adjacency) -> torch.Tensor:
    """``embeddings`` as float32, checked to have one row per node of ``adj``."""
    if embeddings.dim() != 2 or embeddings.shape[0] != adj.num_dst:
        raise DataError(f"pgexplainer: embeddings of shape {tuple(embeddings.shape)} for a "
                        f"graph of {adj.num_dst} nodes; give one row per node (N, D)")
    return embeddings.detach().float()


def _entropy(m: torch.Tensor) -> torch.Tensor:
    m = 0.99 * m + 0.005  # PyG's smoothing: finite at 0 and 1
    return -m * m.log() - (1 - m) * (1 - m).log()


def train_pg_explainer(model: Forward, adj: Adjacency, x: torch.Tensor,
                       embeddings: torch.Tensor, targets: torch.Tensor, *, hops: int,
                       epochs: int = 30, lr: float = 0.003, batch: int = 64,
                       hidden: int = 64, coeffs: dict[str, Any] | None = None, seed: int = 0,
                       graph_ptr: torch.Tensor | None = None) -> MaskGenerator:
    """Train a :class:`MaskGenerator` to explain ``model``'s predictions at ``targets``.

    :param model: ``model(adj, x) -> (N, C)`` logits in eval mode, or with ``graph_ptr`` a
        graph model (``model(batch)[0]``: scores (B, C)).
    :param embeddings: (N, D) node embeddings of the unmasked graph (no gradient).
    :param targets: int64 (T,) the training instances (nodes, or graphs with ``graph_ptr``).
    :param batch: targets per union: one forward, backward and Adam step each.
    :param graph_ptr: a collection's node offsets: the targets are its graphs.
    """
    c = {**COEFFS, **(coeffs or {})}
    t0, t1 = c["temp"]
    bias = c["bias"]
    gen = torch.Generator().manual_seed(seed)
    z = _embeddings(embeddings, adj)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = MaskGenerator(z.shape[1], node_level=graph_ptr is None, hidden=hidden)
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    targets = targets.to(torch.int64)
    parts = []
    for start in range(0, targets.numel(), batch):  # over batches of targets
        units = make_units(adj, targets[start:start + batch], hops, graph_ptr)
        xs = x[units.node]  # (U, F)
        with torch.no_grad():
            y = units.outputs(model, units.adjacency(), xs).argmax(-1)  # (b,)
        count = torch.bincount(units.edge_target, minlength=units.targets.numel()).clamp(min=1)
        parts.append((units, xs, y, count))
    net.train()
    for epoch in range(epochs):
        temperature = t0 * math.pow(t1 / t0, epoch / epochs)
        for units, xs, y, count in parts:
            opt.zero_grad()
            logits = net(z, units)  # (Eu,)
            eps = (1 - 2 * bias) * torch.rand(logits.shape, generator=gen) + bias
            m = ((eps.log() - (1 - eps).log() + logits) / temperature).sigmoid()  # (Eu,)
            out = units.outputs(model, units.adjacency(m), xs)  # (b, C)
            loss = F.cross_entropy(out, y, reduction="sum")
            loss = loss + c["edge_size"] * m.sum()
            loss = loss + c["edge_ent"] * (_entropy(m) / count[units.edge_target]).sum()
            loss.backward()
            opt.step()
    return net.eval()


@torch.no_grad()
def pg_explain(net: MaskGenerator, model: Forward, adj: Adjacency, x: torch.Tensor,
               embeddings: torch.Tensor, targets: torch.Tensor, *, hops: int,
               batch: int = 1024, graph_ptr: torch.Tensor | None = None) -> Explanation:
    """The trained generator's explanation of ``targets``: :math:`\\sigma(\\omega)` on each
    edge of their computation subgraphs, one MLP pass per ``batch`` targets."""
    z = _embeddings(embeddings, adj)
    targets = targets.to(torch.int64)
    parts = []
    for start in range(0, targets.numel(), batch):  # over batches of targets
        units = make_units(adj, targets[start:start + batch], hops, graph_ptr)
        y = units.outputs(model, units.adjacency(), x[units.node]).argmax(-1)
        parts.append((units, net(z, units).sigmoid(), None, y))
    return _collect(parts, targets, "pgexplainer")


def pg_explainer(model: Forward, adj: Adjacency, x: torch.Tensor, targets: torch.Tensor, *,
                 hops: int, embeddings: torch.Tensor, train_targets: torch.Tensor | None = None,
                 epochs: int = 30, lr: float = 0.003, batch: int = 64, hidden: int = 64,
                 coeffs: dict[str, Any] | None = None, seed: int = 0,
                 graph_ptr: torch.Tensor | None = None) -> Explanation:
    """Train on ``train_targets`` (default: ``targets``), then explain ``targets``
    (:func:`train_pg_explainer`, then :func:`pg_explain`)."""
    net = train_pg_explainer(model, adj, x, embeddings,
                             targets if train_targets is None else train_targets, hops=hops,
                             epochs=epochs, lr=lr, batch=batch, hidden=hidden, coeffs=coeffs,
                             seed=seed, graph_ptr=graph_ptr)
    return pg_explain(net, model, adj, x, embeddings, targets, hops=hops,
                      graph_ptr=graph_ptr)
