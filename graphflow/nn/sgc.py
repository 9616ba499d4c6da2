"""Simplified graph convolution (SGC), Wu et al., "Simplifying Graph Convolutional Networks",
ICML 2019 (https://arxiv.org/abs/1902.07153).
"""

from __future__ import annotations

import torch
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.sparse import Adjacency, spmm
from graphflow.sparse.features import Features, SparseFeatures, linear, to_dense


def propagate(adj: Adjacency, x: torch.Tensor, k: int) -> torch.Tensor:
    r"""``S^k x`` with ``S`` the SGC normalisation of ``adj`` (see :class:`SGConv`).

    :param x: (num_src, F). :returns: (num_dst, F).
    """
    square = adj.num_src == adj.num_dst
    if k != 1 and not square:
        raise DataError(f"SGConv with k={k} propagates k times over one graph, so it needs a "
                        f"square adjacency; this one has {adj.num_dst} destinations and "
                        f"{adj.num_src} sources (use k=1 on a block)")
    values = adj.norm("sym_in" if square else "sym", dtype=x.dtype)  # (nnz,)
    for _ in range(k):
        x = spmm(adj, x, values)  # (num_dst, F)
    return x


class SGConv(nn.Module):
    r"""Simplified graph convolution (Wu et al., 2019), as DGL ``SGConv``.

    .. math::
        \mathbf{X}' = \left(\hat{\mathbf{D}}^{-1/2} \mathbf{A} \hat{\mathbf{D}}^{-1/2}\right)^K
        \mathbf{X} \mathbf{W} + \mathbf{b}

    :math:`\hat{D}` holds the in-degrees (zero degrees count as 1), on both sides, as in DGL;
    for the undirected graphs of the paper in- and out-degrees agree. Self-loops are the
    caller's choice. With ``cached=True`` the propagated features :math:`S^K X` are computed
    once and reused while the same ``adj`` and ``x`` objects come back (full-graph training;
    after the first call ``x`` gets no gradient); otherwise ``X W`` is taken first when it shrinks the features. On a block (``num_src !=
    num_dst``) only ``k=1`` is defined, with :class:`GCNConv`'s ``"both"`` normalisation.

    Args:
        in_dim (int): input feature size ``F_in``.
        out_dim (int): output feature size ``F_out``.
        k (int, default 1): number of propagation steps ``K``.
        cached (bool, default False): cache :math:`S^K X` (transductive training only).
        bias (bool, default True): learn ``b`` (F_out,).

    Shapes:
        - input: ``adj`` (N x N, or a block for ``k=1``), ``x`` (N, F_in) tensor or
          :class:`~graphflow.sparse.features.SparseFeatures`
        - output: (N, F_out)
    """

    #: The output is a new tensor that no autograd node saved, so :class:`GNNStack` may apply
    #: its activation in place.
    fresh_output = True

    def __init__(self, in_dim: int, out_dim: int, k: int = 1, cached: bool = False,
                 bias: bool = True):
        super().__init__()
        if k < 1:
            raise ConfigError(f"SGConv needs k >= 1 propagation steps, got k={k}")
        self.in_dim, self.out_dim, self.k, self.cached = in_dim, out_dim, k, cached
        self.fc = nn.Linear(in_dim, out_dim, bias=bias)
        self._cache: tuple[Adjacency, Features, torch.Tensor] | None = None
        self.reset_parameters()

    def reset_parameters(self) -> None:
        nn.init.xavier_uniform_(self.fc.weight)
        if self.fc.bias is not None:
            nn.init.zeros_(self.fc.bias)
        self._cache = None

    def forward(self, adj: Adjacency, x: Features) -> torch.Tensor:
        if self.cached:
            if self._cache is None or self._cache[0] is not adj or self._cache[1] is not x:
                h = propagate(adj, to_dense(x), self.k)  # (N, F_in)
                self._cache = (adj, x, h.detach())
                return self.fc(h)
            return self.fc(self._cache[2])
        if isinstance(x, SparseFeatures) or self.in_dim > self.out_dim:
            out = propagate(adj, linear(x, self.fc.weight), self.k)  # (N, F_out)
            return out if self.fc.bias is None else out + self.fc.bias
        return self.fc(propagate(adj, x, self.k))

    def extra_repr(self) -> str:
        return f"{self.in_dim}, {self.out_dim}, k={self.k}, cached={self.cached}"
