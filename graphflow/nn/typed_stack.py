r"""A stack of typed message-passing layers over a typed graph or typed blocks.

.. math::
    H^{(0)} = \mathrm{input}(X), \qquad
    H^{(l+1)} = \begin{cases}
      \sigma\big(\mathrm{conv}_l(A_l, \mathrm{drop}(H^{(l)}))\big) & l < L - 1 \\
      \mathrm{conv}_l(A_l, \mathrm{drop}(H^{(l)})) & l = L - 1
    \end{cases}

per node type, with ``input`` a :class:`~graphflow.nn.typed.TypedInput` (projections and
embeddings), each ``conv_l`` a typed layer ``forward(adj, h: dict) -> dict``
(:class:`~graphflow.nn.rgcn.RGCNConv`, :class:`~graphflow.nn.hetero.HeteroConv` with its
per-type combination), dropout on every layer's input and :math:`\sigma` after every hidden
layer. The output layer returns raw scores (logits) per node type.

``forward(adj, x)``: ``adj`` is one :class:`~graphflow.nn.typed.TypedAdjacency` (the full graph,
used by every layer) or a list, one per layer (sampled typed blocks, input side first); ``x``
per node type (features, or int64 ids of a featureless type).

Shapes: ``x[t]`` (num_src[t], F_t) or (num_src[t],) -> ``out[t]`` (num_dst[t], out_dim).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.nn.stack import make_activation
from graphflow.nn.typed import TypedAdjacency, TypedInput, per_layer


class TypedStack(nn.Module):
    """Typed input layer, then typed message-passing layers with dropout and activation.

    :param input: the per-type input layer (every type to ``dims[0]``), or None when the
        first layer takes the raw inputs (:class:`~graphflow.nn.rgcn.RGCNInputConv`).
    :param layers: ``L`` typed layers, layer ``l`` mapping width ``dims[l]`` to ``dims[l+1]``.
    :param dims: ``L + 1`` widths.
    :param activation: after every hidden layer (default ``relu``).
    :param dropout: on the input of every layer (default 0).
    """

    def __init__(self, input: TypedInput | None, layers: Sequence[nn.Module], dims: Sequence[int], *,
                 activation: str = "relu", dropout: float = 0.0):
        super().__init__()
        if len(dims) != len(layers) + 1:
            raise ValueError(f"{len(layers)} layers need {len(layers) + 1} widths, got "
                             f"{list(dims)}")
        self.input = input
        self.layers = nn.ModuleList(layers)
        self.dims = [int(d) for d in dims]
        self.act = make_activation(activation)
        self.dropout = dropout

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def out_dim(self) -> int:
        return self.dims[-1]

    def forward(self, adj: TypedAdjacency | Sequence[TypedAdjacency],
                x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        h = dict(x) if self.input is None else self.input(x)
        for i, a in enumerate(per_layer(adj, self.num_layers)):
            h = self.layer(i, a, h)
        return h

    def layer(self, i: int, adj: TypedAdjacency, h: Mapping[str, torch.Tensor]
              ) -> dict[str, torch.Tensor]:
        """Layer ``i`` with its input dropout and, for hidden layers, the activation."""
        if self.dropout > 0 and self.training:
            h = {t: F.dropout(v, self.dropout, True) if v.is_floating_point() else v
                 for t, v in h.items()}
        out = self.layers[i](adj, h)
        if i == self.num_layers - 1:
            return out
        return {t: self.act(v) for t, v in out.items()}

    @torch.no_grad()
    def inference(self, adj: TypedAdjacency, x: Mapping[str, torch.Tensor], *,
                  batch_size: int = 0, device: torch.device | str | None = None,
                  progress: Callable[..., object] | None = None) -> dict[str, torch.Tensor]:
        """``forward(adj, x)`` in eval mode over the full typed graph, layer by layer (every
        node of every type, full neighbourhoods); ``batch_size`` is accepted for the shared
        task contract and the whole graph is one batch.

        :returns: per node type (n_t, out_dim), on ``device`` (default: the inputs').
        """
        was_training = self.training
        self.eval()
        try:
            if device is not None:
                adj = adj.to(device)
                x = {t: v.to(device) for t, v in x.items()}
            return self.forward(adj, x)
        finally:
            self.train(was_training)
