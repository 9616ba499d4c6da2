"""Graph isomorphism network (GIN), Xu et al., "How Powerful are Graph Neural Networks?",
ICLR 2019 (https://arxiv.org/abs/1810.00826).
"""

from __future__ import annotations

import torch
from torch import nn

from graphflow.sparse import Adjacency, spmm
from graphflow.sparse.features import Features, SparseFeatures, linear, to_dense


def gin_aggregate(adj: Adjacency, x: torch.Tensor, eps: torch.Tensor | float,
                  edge_weight: torch.Tensor | None = None) -> torch.Tensor:
    r"""``(1 + eps) x_i + sum_{j in N(i)} e_ji x_j``: (num_src, F) -> (num_dst, F)."""
    values = adj.norm("none", edge_weight, dtype=x.dtype)  # (nnz,)
    return (1 + eps) * x[: adj.num_dst] + spmm(adj, x, values)


class GINConv(nn.Module):
    r"""Graph isomorphism layer with the sum aggregator (Xu et al., 2019), as DGL ``GINConv``.

    .. math::
        \mathbf{x}'_i = h_{\Theta}\Big((1 + \epsilon) \mathbf{x}_i +
        \sum_{j \in \mathcal{N}(i)} e_{ji} \mathbf{x}_j\Big)

    :math:`h_\Theta` is the given ``mlp`` (identity when None) and :math:`e_{ji}` the edge
    weight (1 by default). On :class:`~graphflow.sparse.features.SparseFeatures` input, when
    the MLP starts with an ``nn.Linear``, that linear map is applied before the (linear)
    aggregation, so the sparse features are multiplied sparsely; otherwise they are densified.

    Args:
        mlp (nn.Module | None): :math:`h_\Theta`, applied to the aggregated (num_dst, F_in)
            features; None for the identity.
        eps (float, default 0.0): initial :math:`\epsilon`.
        learn_eps (bool, default False): make :math:`\epsilon` a parameter.

    Shapes:
        - input: ``adj`` (num_dst x num_src), ``x`` (num_src, F_in) tensor or
          :class:`~graphflow.sparse.features.SparseFeatures`; destinations are ``x[:num_dst]``
        - output: (num_dst, F_out), ``F_out`` being the MLP's output size (F_in without one)
    """

    def __init__(self, mlp: nn.Module | None = None, eps: float = 0.0, learn_eps: bool = False):
        super().__init__()
        self.mlp = mlp
        self.learn_eps = learn_eps
        if learn_eps:
            self.eps = nn.Parameter(torch.tensor([float(eps)]))
        else:
            self.register_buffer("eps", torch.tensor([float(eps)]))
        self._init_eps = float(eps)

    def reset_parameters(self) -> None:
        with torch.no_grad():
            self.eps.fill_(self._init_eps)
        reset = getattr(self.mlp, "reset_parameters", None)
        if callable(reset):
            reset()

    def forward(self, adj: Adjacency, x: Features,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        if isinstance(x, SparseFeatures):
            first, rest = _leading_linear(self.mlp)
            if first is not None:
                # h(lin(z)) with z linear in x: aggregate x W instead of x, then add the bias.
                xw = linear(x, first.weight)  # (num_src, F_hidden)
                h = gin_aggregate(adj, xw, self.eps, edge_weight)
                h = h if first.bias is None else h + first.bias
                return rest(h)
            x = to_dense(x)
        h = gin_aggregate(adj, x, self.eps, edge_weight)  # (num_dst, F_in)
        return h if self.mlp is None else self.mlp(h)

    def extra_repr(self) -> str:
        return f"learn_eps={self.learn_eps}"


def _leading_linear(mlp: nn.Module | None) -> tuple[nn.Linear | None, nn.Module]:
    """Split ``mlp`` into its first ``nn.Linear`` and the rest, when it starts with one."""
    if isinstance(mlp, nn.Linear):
        return mlp, nn.Identity()
    if isinstance(mlp, nn.Sequential) and len(mlp) > 0 and isinstance(mlp[0], nn.Linear):
        return mlp[0], mlp[1:]
    return None, nn.Identity()
