r"""Graph-smoothed initial vectors for skip-gram: random vectors averaged over ``hops`` steps
of the walk's transition matrix.

word2vec starts every input vector at random, :math:`R \sim U(-\tfrac{0.5}{D}, \tfrac{0.5}{D})`
(N, D), so one epoch spends its first steps only pulling neighbours together. Starting instead
from

.. math::

    Z = P^{h} R, \qquad P = D_{out}^{-1} A \quad (P_{vu} = w_{vu} / \textstyle\sum_{u'} w_{vu'}),

centred per column and rescaled to :math:`R`'s standard deviation, gives nodes that share
neighbourhoods similar starting vectors: the low-frequency structure the walks would teach,
at the cost of ``h`` sparse products, with no change to the skip-gram objective or its steps.
``P^h R`` is FastRP's random projection of the ``h``-step transition matrix (Chen et al.,
CIKM 2019), and warm-starting DeepWalk / node2vec from a graph-derived embedding is HARP's
idea (Chen et al., AAAI 2018). The smoothed vectors alone classify nothing (macro-F1 0.03 on
the benchmark's dense graph, where one epoch of skip-gram from them reaches about 0.30 against
0.25 from :math:`R`; docs/node2vec.md). A node without out-edges keeps its random vector
(centred and rescaled with the rest).
"""

from __future__ import annotations

import torch

from graphflow.sparse import Adjacency, spmm
from graphflow.walks.csr import WalkGraph


def smoothed(vectors: torch.Tensor, graph: WalkGraph, hops: int) -> torch.Tensor:
    """``P^hops vectors``, centred per column, at ``vectors``' standard deviation.

    :param vectors: float (N, D) random initial vectors on ``graph``'s device.
    :param graph: the walk graph (CSR over out-edges; weights when it has them).
    :param hops: ``h >= 0`` transition steps; 0 returns ``vectors`` unchanged.
    :returns: float (N, D), a new tensor.
    """
    if hops <= 0 or graph.num_edges == 0:
        return vectors.clone()
    n = graph.num_nodes
    deg = graph.out_degrees()  # (N,)
    values, strength = None, None
    if graph.cumweight is not None:  # P_vu = w_vu / out-strength(v), from the running sum
        # Differences of the float64 running sum are taken in float64 and only then cast:
        # cast first, a float32 sum past 2^24 total weight has lost the small weights' bits.
        cum = graph.cumweight  # (E + 1,) float64
        values = (cum[1:] - cum[:-1]).to(vectors.dtype)  # (E,) w
        strength = (cum[graph.indptr[1:]] - cum[graph.indptr[:-1]]).to(vectors.dtype)  # (N,)
        strength = strength.unsqueeze(1).clamp(min=torch.finfo(vectors.dtype).tiny)  # (N, 1)
    eids = torch.arange(graph.num_edges, device=deg.device)
    # rows = walk sources v, columns = their out-neighbours u: (P z)[v] = sum_u P_vu z[u]
    step = Adjacency(graph.indptr, graph.indices, eids, num_src=n, num_dst=n, values=values)
    moves = (deg > 0).unsqueeze(1)  # (N, 1) a node without out-edges keeps its own row
    z = vectors
    with torch.no_grad():
        for _ in range(hops):
            walked = spmm(step, z, reduce="mean") if strength is None else spmm(step, z) / strength
            z = torch.where(moves, walked, z)
        z = z - z.mean(0, keepdim=True)
        scale = vectors.std() / z.std().clamp(min=torch.finfo(z.dtype).tiny)
    return z * scale
