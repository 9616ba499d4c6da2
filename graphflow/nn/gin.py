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
    r"""``(1 + eps) x_i + sum_{j in N(i)} e_ji x_j``: (num_src, F) -> (num_dst, F).

    The own term is added in place to the SpMM's fresh output: with a float ``eps`` one pass
    and no autograd node of its own (its gradient is the output's, passed through), and
    without slicing ``x`` when every source is a destination (a slice's backward zero-fills
    a (num_src, F) gradient and copies into it). Against ``(1 + eps) * x[:num_dst] + A x``
    that saves a multiply forward, one backward, and the zero-fill and copy: four passes
    over (num_dst, F) per layer.
    """
    # No values on an unweighted graph: the kernel then sums without per-entry weights and
    # the backward has no (nnz,) vector of ones to permute into A^T's order per batch.
    values = None if edge_weight is None else adj.norm("none", edge_weight, dtype=x.dtype)
    return add_own(spmm(adj, x, values), x, eps)  # (num_dst, F)


def add_own(out: torch.Tensor, x: torch.Tensor, eps: torch.Tensor | float) -> torch.Tensor:
    """``out += (1 + eps) x[:num_dst]`` in place on the aggregation's fresh (num_dst, F)
    ``out``, slicing ``x`` only when it has more rows (see :func:`gin_aggregate`)."""
    own = x if x.shape[0] == out.shape[0] else x[: out.shape[0]]  # (num_dst, F)
    if isinstance(eps, torch.Tensor):  # a learnt epsilon: its gradient needs the product
        return out.addcmul_(own, 1 + eps)
    return out.add_(own, alpha=1 + eps)


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
        self._fixed: tuple = (None, -1, float(eps))  # (buffer, its version, its value)

    def _eps(self) -> torch.Tensor | float:
        """The learnt epsilon (a tensor), or the fixed one as a float, read from the buffer
        again only when the buffer was replaced (``.to``) or changed in place (a loaded
        state dict), so a CUDA model does not synchronise every step."""
        if self.learn_eps:
            return self.eps
        buf, version, value = self._fixed
        if buf is not self.eps or version != self.eps._version:
            self._fixed = (self.eps, self.eps._version, float(self.eps))
        return self._fixed[2]

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
                h = gin_aggregate(adj, xw, self._eps(), edge_weight)
                h = h if first.bias is None else h + first.bias
                return rest(h)
            x = to_dense(x)
        h = gin_aggregate(adj, x, self._eps(), edge_weight)  # (num_dst, F_in)
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
