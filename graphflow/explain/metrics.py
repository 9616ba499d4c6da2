"""How good an explanation is: fidelity, characterization score, ROC-AUC against ground truth.

Fidelity and the characterization score are ``torch_geometric.explain.metric``'s (Amara et
al. 2022, GraphFramEx), for *model* explanations (the explained class is the model's own
prediction :math:`\\hat y_i`):

* fidelity+ :math:`= 1 - \\frac1N \\sum_i \\mathbb 1(\\hat y_i^{G_{C \\setminus S}} = \\hat y_i)`:
  how often the prediction changes when the explanation is removed (the model reads the
  complement masks ``1 - edge_mask`` and ``1 - feature_mask``); higher is better;
* fidelity- :math:`= 1 - \\frac1N \\sum_i \\mathbb 1(\\hat y_i^{G_S} = \\hat y_i)`: how often it
  changes when the model reads the explanation alone (the masks themselves); lower is better;
* characterization :math:`= \\frac{w_+ + w_-}{w_+ / \\mathrm{fid}_+ + w_- / (1 - \\mathrm{fid}_-)}`
  with :math:`w_+ = w_- = 0.5` (0 when fidelity+ is 0 or fidelity- is 1).

The masks are applied as they are (soft masks stay soft, as in PyG; pass a thresholded or
top-k mask for hard ones), as edge weights through the computation subgraphs' adjacency.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from graphflow.explain.explanation import Explanation
from graphflow.explain.subgraph import make_units
from graphflow.sparse import Adjacency

Forward = Callable[[Adjacency, torch.Tensor], torch.Tensor]


def characterization_score(pos_fidelity: float, neg_fidelity: float, pos_weight: float = 0.5,
                           neg_weight: float = 0.5) -> float:
    """The weighted harmonic mean of fidelity+ and 1 - fidelity- (PyG's definition)."""
    if abs(pos_weight + neg_weight - 1.0) > 1e-9:
        raise ValueError(f"the weights must sum to 1, got {pos_weight} and {neg_weight}")
    if pos_fidelity <= 0 or neg_fidelity >= 1:
        return 0.0
    return 1.0 / (pos_weight / pos_fidelity + neg_weight / (1.0 - neg_fidelity))


@torch.no_grad()
def masked_predictions(model: Forward, adj: Adjacency, x: torch.Tensor, exp: Explanation,
                       hops: int, edge_mask: torch.Tensor,
                       feature_mask: torch.Tensor | None,
                       graph_ptr: torch.Tensor | None = None,
                       pairs: torch.Tensor | None = None) -> torch.Tensor:
    """The model's predicted class at each target when it reads ``edge_mask`` (M,) as edge
    weights (edges in ``exp``'s order) and ``x * feature_mask`` (T, F); ``graph_ptr``: the
    targets are a collection's graphs, ``pairs`` (2, P): positions in a link model's pairs
    (:func:`~graphflow.explain.subgraph.make_units`)."""
    cg = make_units(adj, exp.targets, hops, graph_ptr, pairs)
    # exp lists each target's edges in the union's order when it came from one union; match
    # generally by (target, edge id) keys.
    e = max(int(adj.eids.max()) + 1, 1) if adj.nnz else 1
    key_exp = exp.edge_target * e + exp.edge_ids
    order = torch.argsort(key_exp)
    key_cg = cg.edge_target * e + cg.edge_ids
    where = order[torch.searchsorted(key_exp[order], key_cg)]
    weight = edge_mask[where].float()
    h = x[cg.node]
    if feature_mask is not None:
        h = h * feature_mask[cg.node_target]
    return cg.outputs(model, cg.adjacency(weight), h).argmax(-1)


def fidelity(model: Forward, adj: Adjacency, x: torch.Tensor, exp: Explanation, hops: int,
             edge_mask: torch.Tensor | None = None,
             graph_ptr: torch.Tensor | None = None,
             pairs: torch.Tensor | None = None) -> tuple[float, float]:
    """(fidelity+, fidelity-) of ``exp`` for its targets (model explanations: the reference
    is ``exp.target_class``). ``edge_mask`` replaces ``exp.edge_mask`` (e.g. a top-k 0/1
    mask)."""
    em = exp.edge_mask if edge_mask is None else edge_mask.float()
    fm = exp.feature_mask
    y = exp.target_class
    keep = masked_predictions(model, adj, x, exp, hops, em, fm, graph_ptr, pairs)
    drop = masked_predictions(model, adj, x, exp, hops, 1.0 - em,
                              None if fm is None else 1.0 - fm, graph_ptr, pairs)
    pos = 1.0 - float((drop == y).float().mean())
    neg = 1.0 - float((keep == y).float().mean())
    return pos, neg


def roc_auc(score: torch.Tensor, truth: torch.Tensor) -> float:
    """ROC-AUC of ``score`` against 0/1 ``truth`` (the Mann–Whitney statistic, ties counted
    half); NaN when one class is absent."""
    truth = truth.bool()
    pos, neg = int(truth.sum()), int((~truth).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    values, inverse = torch.unique(score.double(), return_inverse=True)
    counts = torch.bincount(inverse).double()
    # average rank of each distinct value (ranks 1..n)
    upper = torch.cumsum(counts, 0)
    avg = upper - (counts - 1) / 2
    ranks = avg[inverse]
    return float((ranks[truth].sum() - pos * (pos + 1) / 2) / (pos * neg))
