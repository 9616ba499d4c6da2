r"""GNNExplainer (Ying et al., NeurIPS 2019), batched over many targets.

For each target node, a soft mask :math:`\sigma(M)` over the edges of its L-hop computation
subgraph and a mask :math:`\sigma(F)` over the input features (shared by the subgraph's
nodes, the paper's feature mask) are learnt by Adam so that the model, reading the masked
edges as edge weights and the masked features, keeps its prediction:

.. math::
    \mathcal{L} = \mathrm{CE}(f(X \odot \sigma(F), A \odot \sigma(M)), \hat y)
      + \alpha_e \sum \sigma(M) + \beta_e \overline{H(\sigma(M))}
      + \alpha_f \overline{\sigma(F)} + \beta_f \overline{H(\sigma(F))}

with :math:`H(m) = -m \log m - (1 - m) \log (1 - m)` the element-wise entropy. The
coefficients are ``torch_geometric.explain.algorithm.GNNExplainer``'s defaults
(:data:`COEFFS`), as are the initialisations (edges :math:`\mathcal{N}(0, \sigma)` with
:math:`\sigma = \mathrm{gain}_{relu} \sqrt{2 / 2N}`, features :math:`\mathcal{N}(0, 0.1)`)
and the optimiser (Adam, ``lr = 0.01``, 100 epochs).

Batching: the targets' subgraphs are copies in one disjoint union
(:mod:`graphflow.explain.subgraph`), so one forward and one backward pass serve ``batch``
targets. The copies share no edge, the loss is a sum of per-target terms and Adam is
element-wise, so each target's mask follows exactly the trajectory it would follow alone.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

from graphflow.explain.explanation import Explanation
from graphflow.explain.subgraph import make_units
from graphflow.sparse import Adjacency

COEFFS: dict[str, float] = {"edge_size": 0.005, "edge_ent": 1.0, "node_feat_size": 1.0,
                            "node_feat_ent": 0.1, "EPS": 1e-15}
"""Regulariser weights of PyG's ``GNNExplainer.coeffs`` (edge size summed, the rest means)."""

Forward = Callable[[Adjacency, torch.Tensor], torch.Tensor]


def mask_entropy(m: torch.Tensor, eps: float) -> torch.Tensor:
    """Element-wise :math:`H(m) = -m \\log(m + \\epsilon) - (1 - m) \\log(1 - m + \\epsilon)`."""
    return -m * torch.log(m + eps) - (1 - m) * torch.log(1 - m + eps)


def _per_target_mean(v: torch.Tensor, group: torch.Tensor, count: torch.Tensor) -> torch.Tensor:
    """Sum over targets of the mean of ``v`` within each target's group."""
    return (v / count[group]).sum()


def gnn_explainer(model: Forward, adj: Adjacency, x: torch.Tensor, targets: torch.Tensor, *,
                  hops: int, epochs: int = 100, lr: float = 0.01, batch: int = 256,
                  target_class: torch.Tensor | None = None, feature_mask: bool = True,
                  coeffs: dict[str, float] | None = None, seed: int = 0,
                  graph_ptr: torch.Tensor | None = None,
                  pairs: torch.Tensor | None = None) -> Explanation:
    """Explain ``model``'s outputs at ``targets`` (int64 (T,)) on the graph ``adj`` with
    features ``x`` (N, F).

    :param model: ``model(adj, x) -> (N, C)`` logits (a graphflow model in eval mode), or
        with ``graph_ptr`` a graph model, ``model(batch) -> (scores (B, C), ...)``.
    :param hops: the model's depth L (its computation subgraphs are L hops).
    :param graph_ptr: a collection's node offsets (G + 1,): the targets are its graphs,
        each masked over its whole graph (:func:`~graphflow.explain.subgraph.make_units`).
    :param pairs: (2, P) node pairs of a link model: the targets are positions in them, the
        model a :class:`~graphflow.linkpred.decoders.LinkModel`, the explained class the link
        (``s > 0``) or not, so the loss's cross-entropy is that of ``σ(s)``
        (:class:`~graphflow.explain.subgraph.PairGraphs`).
    :param target_class: (T,) classes to explain; default: the model's predictions.
    :param batch: targets per union (one forward pass each epoch).
    :param feature_mask: learn the feature mask too (the paper does).
    """
    c = {**COEFFS, **(coeffs or {})}
    eps = c["EPS"]
    gen = torch.Generator().manual_seed(seed)
    targets = targets.to(torch.int64)
    n, width = x.shape
    std = torch.nn.init.calculate_gain("relu") * math.sqrt(2.0 / (2 * n))
    parts: list[tuple[Any, torch.Tensor, torch.Tensor | None, torch.Tensor]] = []
    for start in range(0, targets.numel(), batch):  # over batches of targets
        t = targets[start:start + batch]
        cg = make_units(adj, t, hops, graph_ptr, pairs)
        xs = x[cg.node]  # (U, F)
        with torch.no_grad():
            if target_class is None:
                y = cg.outputs(model, cg.adjacency(), xs).argmax(-1)  # (b,)
            else:
                y = target_class[start:start + batch].to(torch.int64)
        edge_param = (torch.randn(cg.num_edges, generator=gen) * std).requires_grad_()
        params = [edge_param]
        feat_param = None
        if feature_mask:
            feat_param = (torch.randn(t.numel(), width, generator=gen) * 0.1)
            feat_param.requires_grad_()
            params.append(feat_param)
        opt = torch.optim.Adam(params, lr=lr)
        e_count = torch.bincount(cg.edge_target, minlength=t.numel()).clamp(min=1)
        for _ in range(epochs):
            opt.zero_grad()
            em = edge_param.sigmoid()  # (Eu,)
            h = xs
            if feat_param is not None:
                fm = feat_param.sigmoid()  # (b, F)
                h = xs * fm[cg.node_target]
            out = cg.outputs(model, cg.adjacency(em), h)  # (b, C)
            loss = F.cross_entropy(out, y, reduction="sum")
            loss = loss + c["edge_size"] * em.sum()
            loss = loss + c["edge_ent"] * _per_target_mean(mask_entropy(em, eps), cg.edge_target,
                                                           e_count)
            if feat_param is not None:
                loss = loss + c["node_feat_size"] * fm.mean(1).sum()
                loss = loss + c["node_feat_ent"] * mask_entropy(fm, eps).mean(1).sum()
            loss.backward()
            opt.step()
        parts.append((cg, edge_param.detach().sigmoid(),
                      None if feat_param is None else feat_param.detach().sigmoid(), y))
    return _collect(parts, targets, "gnnexplainer")


def _collect(parts: list[Any], targets: torch.Tensor, method: str) -> Explanation:
    offset, et, eid, em, fms, ys = 0, [], [], [], [], []
    for cg, edge_mask, feat_mask, y in parts:
        et.append(cg.edge_target + offset)
        eid.append(cg.edge_ids)
        em.append(edge_mask.float())
        if feat_mask is not None:
            fms.append(feat_mask.float())
        ys.append(y)
        offset += cg.targets.numel()
    return Explanation(targets=targets, target_class=torch.cat(ys), edge_target=torch.cat(et),
                       edge_ids=torch.cat(eid), edge_mask=torch.cat(em),
                       feature_mask=torch.cat(fms) if fms else None, method=method)
