"""Gradient attributions through Captum: saliency and integrated gradients.

Both attribute the explained class's logit at each target to the input features of the
nodes of its computation subgraph and to the weights of its edges (all 1 in the graph;
the model reads them as :class:`~graphflow.sparse.Adjacency` values):

* ``saliency`` (Simonyan et al. 2014): the absolute gradient at the input;
* ``ig``, integrated gradients (Sundararajan et al. 2017): the path integral of the gradient
  from the baseline (zero features, zero edge weights) to the input, times the difference,
  so that a target's attributions sum to its logit at the input minus its logit at the
  baseline (completeness; Captum's convergence delta, in ``extra["delta"]``).

The targets' subgraphs are copies in one disjoint union (:mod:`graphflow.explain.subgraph`),
so one forward pass serves a batch of targets and each copy's attributions depend on its
own target only. A target's feature importance is the absolute attribution summed over its
subgraph's nodes. Captum is the ``explain`` extra, imported here only.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from graphflow.errors import ConfigError
from graphflow.explain.explanation import Explanation
from graphflow.explain.gnnexplainer import _collect
from graphflow.explain.subgraph import make_units
from graphflow.sparse import Adjacency

Forward = Callable[[Adjacency, torch.Tensor], torch.Tensor]


def _captum():
    try:
        import captum.attr as attr
    except ImportError:
        raise ConfigError("the saliency and ig explainers need Captum: pip install "
                          "'graphflow[explain]' (or pip install captum)") from None
    return attr


def gradient_attributions(model: Forward, adj: Adjacency, x: torch.Tensor,
                          targets: torch.Tensor, *, hops: int, method: str = "ig",
                          n_steps: int = 50, batch: int = 256,
                          target_class: torch.Tensor | None = None,
                          graph_ptr: torch.Tensor | None = None,
                          pairs: torch.Tensor | None = None) -> Explanation:
    """Saliency (``method="saliency"``) or integrated gradients (``"ig"``) for ``targets``.

    :param model: ``model(adj, x) -> (N, C)`` logits, in eval mode.
    :param hops: the model's depth L.
    :param graph_ptr: a collection's node offsets: the targets are its graphs, and ``model``
        a graph model (:func:`~graphflow.explain.gnnexplainer.gnn_explainer`).
    :param pairs: (2, P) node pairs of a link model: the targets are positions in them and
        the attributed output is each pair's decoder score (whatever the predicted class).
    :param n_steps: integrated gradients' steps (Gauss–Legendre, Captum's default).
    """
    attr = _captum()
    if method not in ("saliency", "ig"):
        raise ConfigError(f'unknown gradient method "{method}"; choose saliency or ig')
    targets = targets.to(torch.int64)
    parts, deltas = [], []
    for start in range(0, targets.numel(), batch):  # over batches of targets
        t = targets[start:start + batch]
        cg = make_units(adj, t, hops, graph_ptr, pairs)
        xs = x[cg.node].float()  # (U, F)
        w = torch.ones(cg.num_edges)
        with torch.no_grad():
            if target_class is None:
                y = cg.outputs(model, cg.adjacency(), xs).argmax(-1)
            else:
                y = target_class[start:start + batch].to(torch.int64)
        # the logit attributed: the explained class's, or a pair's score (PairGraphs)
        score = getattr(cg, "score_class", None)
        yg = y if score is None else torch.full_like(y, score)

        def forward(xb: torch.Tensor, wb: torch.Tensor) -> torch.Tensor:
            # (S, U, F), (S, Eu) -> (S,): the sum over targets of their class's logit; the
            # copies are disjoint, so each copy's gradient comes from its own target only.
            outs = [cg.outputs(model, cg.adjacency(wb[s]), xb[s]).gather(
                1, yg[:, None]).sum() for s in range(xb.shape[0])]  # over steps, not nodes
            return torch.stack(outs)

        inputs = (xs[None].requires_grad_(), w[None].requires_grad_())
        if method == "saliency":
            ax, aw = attr.Saliency(forward).attribute(inputs, abs=True)
        else:
            (ax, aw), delta = attr.IntegratedGradients(forward).attribute(
                inputs, baselines=(torch.zeros_like(inputs[0]), torch.zeros_like(inputs[1])),
                n_steps=n_steps, return_convergence_delta=True)
            deltas.append(delta.detach())
        ax, aw = ax[0].detach(), aw[0].detach()  # (U, F), (Eu,)
        feat = torch.zeros(t.numel(), x.shape[1]).index_add_(0, cg.node_target, ax.abs())
        parts.append((cg, aw, feat, y, ax))
    exp = _collect([p[:4] for p in parts], targets, method)
    if method == "ig":
        exp.extra["delta"] = torch.cat(deltas)
    # signed per-node feature attributions, for completeness checks and node importances
    exp.extra["node_attr"] = torch.cat([p[4] for p in parts])
    offsets = torch.cumsum(torch.tensor([0] + [p[0].targets.numel() for p in parts[:-1]]), 0)
    exp.extra["node_target"] = torch.cat([p[0].node_target + o for p, o in zip(parts, offsets)])
    exp.extra["node_ids"] = torch.cat([p[0].node for p in parts])
    return exp
