r"""Pair decoders: a score for the pair ``(u, v)`` from the embeddings ``h_u``, ``h_v``.

=============  ==============================================================  ===========
``dot``        :math:`s = h_u^\top h_v`                                       no weights
``mlp``        :math:`s = w_2^\top \mathrm{ReLU}(W_1 (h_u \odot h_v) + b_1) + b_2`  (D, D) + D
``bilinear``   :math:`s = h_u^\top W h_v` (``W`` starts at the identity)           (D, D)
=============  ==============================================================  ===========

``forward(hu, hv)``: (P, D), (P, D) -> (P,) raw scores (logits); higher means more likely an
edge. ``many(hu, hv)``: (C, D), (C, K, D) -> (C, K), each source against its K candidates
(for ranking), without materialising the repeated sources for ``dot`` and ``bilinear``.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from graphflow.nn.linear import Linear

DecoderName = Literal["dot", "mlp", "bilinear"]


class DotDecoder(nn.Module):
    """:math:`s = h_u^\\top h_v` (GAE, Kipf & Welling 2016)."""

    def forward(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return (hu * hv).sum(-1)  # (P,)

    def many(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return torch.bmm(hv, hu.unsqueeze(2)).squeeze(2)  # (C, K)


class MLPDecoder(nn.Module):
    """A two-layer perceptron on the Hadamard product :math:`h_u \\odot h_v`."""

    def __init__(self, dim: int):
        super().__init__()
        self.net = nn.Sequential(Linear(dim, dim), nn.ReLU(), Linear(dim, 1))

    def forward(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return self.net(hu * hv).squeeze(-1)  # (P,)

    def many(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return self.net(hu.unsqueeze(1) * hv).squeeze(-1)  # (C, K)


class BilinearDecoder(nn.Module):
    """:math:`s = h_u^\\top W h_v`, ``W`` (D, D) initialised to the identity (= ``dot``)."""

    def __init__(self, dim: int):
        super().__init__()
        self.weight = nn.Parameter(torch.eye(dim))

    def forward(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return ((hu @ self.weight) * hv).sum(-1)  # (P,)

    def many(self, hu: torch.Tensor, hv: torch.Tensor) -> torch.Tensor:
        return torch.bmm(hv, (hu @ self.weight).unsqueeze(2)).squeeze(2)  # (C, K)


def decode(decoder: nn.Module, h: torch.Tensor, u: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    """``decoder(h[u], h[v])``: scores (P,) of the pairs ``(u[i], v[i])`` of rows of ``h``.

    The rows are taken with ``index_select``, whose backward is a parallel ``index_add_``;
    ``h[u]``'s backward (``index_put_`` with accumulation) runs serially on the CPU: 0.89 ms
    against 0.30 ms for 1024 rows of a (3072, 256) batch output, four times a training batch.
    """
    return decoder(h.index_select(0, u), h.index_select(0, v))  # (P,)


def decode_pairs(decoder: nn.Module, h: torch.Tensor, pos: torch.Tensor,
                 neg: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Scores of the positive pairs ``pos`` (2, B) and the negative pairs ``neg`` (2, B k),
    rows of ``h``: ``(decode(pos) (B,), decode(neg) (B k,))``, computed as one
    :func:`decode` of both sets. Two gathers and two scatters in the backward instead of four
    each (and two fewer (S, D) gradients to add up): on a link prediction batch of 1024
    positives, one negative each and 256-wide embeddings, about 0.7 ms of 36."""
    b = pos.shape[1]
    scores = decode(decoder, h, torch.cat([pos[0], neg[0]]), torch.cat([pos[1], neg[1]]))
    return scores[:b], scores[b:]


def make_decoder(name: DecoderName, dim: int) -> nn.Module:
    """The decoder ``name`` for ``dim``-wide embeddings."""
    if name == "dot":
        return DotDecoder()
    if name == "mlp":
        return MLPDecoder(dim)
    if name == "bilinear":
        return BilinearDecoder(dim)
    raise ValueError(f"unknown decoder {name!r}; choices: dot, mlp, bilinear")


class LinkModel(nn.Module):
    """The encoder (any ``[model]``) and the pair decoder, trained and saved together."""

    def __init__(self, encoder: nn.Module, decoder: nn.Module):
        super().__init__()
        self.encoder, self.decoder = encoder, decoder
