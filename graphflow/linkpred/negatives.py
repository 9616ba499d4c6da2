r"""Training negatives: for each positive ``(u, v)``, ``k`` pairs ``(u, w)`` with drawn ``w``.

* ``uniform``: ``w`` uniform over all nodes (DGL's ``negative_sampler.Uniform``).
* ``degree``: :math:`P(w) \propto \deg(w)^{0.75}` (word2vec's smoothed unigram; DGL's
  ``GlobalUniform`` is uniform, GraphStorm's ``joint`` / PinSAGE use degree-based noise),
  drawn in O(1) from :class:`~graphflow.sampling.unigram.UnigramTable`.

Negatives are not checked against the graph: with sparse graphs a drawn pair is an edge with
probability about ``E / N^2``, the usual approximation of every peer.
"""

from __future__ import annotations

from typing import Literal

import torch

from graphflow.sampling.unigram import UnigramTable

NegativeName = Literal["uniform", "degree"]


class NegativeSampler:
    """``sampler(src, k, generator) -> dst``: int64 (B * k,) destinations for sources (B,).

    :param kind: ``uniform`` or ``degree``.
    :param num_nodes: N.
    :param degree: float (N,) node degrees (for ``degree``).
    :param device: where draws are made (the generator's device).
    """

    def __init__(self, kind: NegativeName, num_nodes: int, degree: torch.Tensor | None = None,
                 device: torch.device | str = "cpu"):
        self.kind, self.num_nodes = kind, num_nodes
        self.table = None
        if kind == "degree":
            if degree is None:
                raise ValueError("degree negatives need the node degrees")
            self.table = UnigramTable(degree.to(device).float(), power=0.75)

    def __call__(self, src: torch.Tensor, k: int,
                 generator: torch.Generator | None = None) -> torch.Tensor:
        count = src.shape[0] * k
        if self.table is not None:
            return self.table.sample(count, generator).to(src.device)
        return torch.randint(self.num_nodes, (count,), generator=generator, device=src.device)
