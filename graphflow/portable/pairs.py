r"""Portable twin of a link prediction model (:class:`graphflow.linkpred.decoders.LinkModel`)
in eval mode: a graph and node pairs in, every node's embedding and each pair's score out.

:class:`LinkLevelModel` takes ``forward(x, src, dst, weight, pair_src, pair_dst)``: the graph
as :class:`~graphflow.portable.stack.FullGraphModel` takes it, and ``pair_src`` /
``pair_dst`` (P,) int64 rows of ``x`` to score. It returns ``(embeddings (N, D), scores
(P,))``: the encoder's output and the decoder's raw score of each pair (higher = more
likely an edge), as ``graphflow predict --pairs`` gives them.
"""

from __future__ import annotations

from typing import Tuple

import torch
from torch import Tensor, nn

from graphflow.portable.graph import gather
from graphflow.portable.stack import FullGraphModel


class PortableDot(nn.Module):
    """``dot``: :math:`s = h_u^\\top h_v`."""

    def forward(self, hu: Tensor, hv: Tensor) -> Tensor:
        return (hu * hv).sum(-1)  # (P,)


class PortableBilinear(nn.Module):
    """``bilinear``: :math:`s = h_u^\\top W h_v`."""

    def __init__(self, weight: Tensor):
        super().__init__()
        self.register_buffer("weight", weight.detach().float().clone())  # (D, D)

    def forward(self, hu: Tensor, hv: Tensor) -> Tensor:
        return (torch.matmul(hu, self.weight) * hv).sum(-1)  # (P,)


class PortableMLPDecoder(nn.Module):
    """``mlp``: a perceptron (plain torch modules) on :math:`h_u \\odot h_v`."""

    def __init__(self, net: nn.Module):
        super().__init__()
        self.net = net

    def forward(self, hu: Tensor, hv: Tensor) -> Tensor:
        return self.net(hu * hv).squeeze(-1)  # (P,)


class LinkLevelModel(nn.Module):
    """A graph and pairs in: ``(x, src, dst, weight, pair_src, pair_dst) -> (embeddings (N, D),
    scores (P,))``."""

    def __init__(self, encoder: FullGraphModel, decoder: nn.Module):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
        self.self_loops = encoder.self_loops

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, weight: Tensor, pair_src: Tensor,
                pair_dst: Tensor) -> Tuple[Tensor, Tensor]:
        h = self.encoder(x, src, dst, weight)  # (N, D)
        hu = gather(h, pair_src.to(torch.int64))  # (P, D)
        hv = gather(h, pair_dst.to(torch.int64))
        return h, self.decoder(hu, hv)
