"""GIN with edge features (GINE), Hu et al., "Strategies for Pre-training Graph Neural
Networks", ICLR 2020 (https://arxiv.org/abs/1905.12265); PyG ``GINEConv``, DGL ``GINEConv``.
"""

from __future__ import annotations

import torch
from torch import nn

from graphflow.errors import DataError
from graphflow.nn.gin import GINConv, add_own
from graphflow.sparse import Adjacency, edge_gather, edge_sum
from graphflow.sparse.features import Features, to_dense


def gine_aggregate(adj: Adjacency, x: torch.Tensor, edge: torch.Tensor,
                   eps: torch.Tensor | float) -> torch.Tensor:
    r"""``(1 + eps) x_i + sum_{j in N(i)} w_ji ReLU(x_j + e_ji)``: (num_src, F), (nnz, F) ->
    (num_dst, F); ``edge`` in CSR order; ``w_ji`` the adjacency's values, 1 without them (a
    graph's edge weights, or an explainer's soft edge mask, scale each message, as PyG's
    explain masks scale every layer's messages).

    The messages are per edge, (nnz, F): the sources' rows (:func:`~graphflow.sparse.
    edge_gather`), the add and the ReLU in place on them (the gather's backward does not read
    its output; ReLU's reads only its own), then :func:`~graphflow.sparse.edge_sum` into the
    destinations. Both run the SpMM kernel in one direction and a gather in the other, so no
    pass scatters into rows. Memory O(nnz * F), no dense (num_dst, num_src) matrix.
    """
    messages = edge_gather(adj, x).add_(edge).relu_()  # (nnz, F)
    if adj.values is not None:  # weighted edges (e.g. an explainer's edge mask) scale messages
        messages = messages * adj.values[:, None]
    return add_own(edge_sum(adj, messages), x, eps)  # (num_dst, F)


class GINEConv(GINConv):
    r"""GIN layer whose messages carry edge features (Hu et al., 2020), as PyG ``GINEConv``.

    .. math::
        \mathbf{x}'_i = h_{\Theta}\Big((1 + \epsilon) \mathbf{x}_i +
        \sum_{j \in \mathcal{N}(i)} \mathrm{ReLU}\big(\mathbf{x}_j + g(\mathbf{e}_{ji})\big)\Big)

    :math:`\mathbf{e}_{ji}` is the edge's feature vector, read from the adjacency
    (:attr:`~graphflow.sparse.Adjacency.edge_feat`, CSR order), and :math:`g` the
    ``edge_encoder`` that maps it to the node width (identity when None: the widths must
    agree, as in DGL's ``GINEConv``). Without edge features it fails with one line, since
    GINE without them is GIN with ReLU'd messages: use ``gin`` for featureless edges.

    Args:
        mlp (nn.Module | None): :math:`h_\Theta` on the aggregated (num_dst, F_in) vectors.
        edge_encoder (nn.Module | None): :math:`g`, (nnz, D_e) -> (nnz, F_in).
        eps (float, default 0.0): initial :math:`\epsilon`.
        learn_eps (bool, default False): make :math:`\epsilon` a parameter.

    Shapes:
        - input: ``adj`` (num_dst x num_src) with ``edge_feat`` (nnz, D_e); ``x``
          (num_src, F_in); destinations are ``x[:num_dst]``
        - output: (num_dst, F_out), the MLP's output width (F_in without one)
    """

    def __init__(self, mlp: nn.Module | None = None, edge_encoder: nn.Module | None = None,
                 eps: float = 0.0, learn_eps: bool = False):
        super().__init__(mlp, eps=eps, learn_eps=learn_eps)
        self.edge_encoder = edge_encoder

    def forward(self, adj: Adjacency, x: Features,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        if edge_weight is not None:
            raise ValueError("GINEConv takes edge features (adj.edge_feat), not edge weights")
        feat = adj.edge_feat
        if feat is None:
            raise DataError("gine reads edge features, but the graph has none (edata"
                            "[\"edge_feat\"]); load a collection with edge attributes or edge "
                            "labels (DS_edge_attributes.txt / DS_edge_labels.txt), or use gin")
        x = to_dense(x)
        edge = feat if self.edge_encoder is None else self.edge_encoder(feat)  # (nnz, F_in)
        if edge.shape[-1] != x.shape[-1]:
            raise DataError(f"GINEConv: edge features of width {edge.shape[-1]} for node "
                            f"vectors of width {x.shape[-1]}; give an edge_encoder")
        h = gine_aggregate(adj, x, edge, self._eps())  # (num_dst, F_in)
        return h if self.mlp is None else self.mlp(h)

    def reset_parameters(self) -> None:
        super().reset_parameters()
        reset = getattr(self.edge_encoder, "reset_parameters", None)
        if callable(reset):
            reset()
