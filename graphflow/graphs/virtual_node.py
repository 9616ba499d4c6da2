r"""A virtual node joined to every node of its graph (Gilmer et al. 2017; OGB's
``GNN_node_Virtualnode``, ``ogb/examples/graphproppred/mol/conv.py``).

Each graph has one extra vector :math:`v` (zero at first, a learnt embedding as OGB's
``Embedding(1, d)`` initialised to 0). Before layer :math:`l` every node adds its graph's
:math:`v`; after it (but the last) :math:`v` is updated from the sum of the graph's node
vectors that entered the layer:

.. math::
    \tilde h_i^{(l)} = h_i^{(l)} + v_{g(i)}^{(l)}, \qquad
    h^{(l+1)} = \mathrm{layer}_l(\tilde h^{(l)}), \qquad
    v^{(l+1)} = \mathrm{drop}\Big(\mathrm{MLP}_l\big(\textstyle\sum_{i \in g} \tilde h_i^{(l)}
    + v^{(l)}\big)\Big)

with :math:`\mathrm{MLP}_l` = Linear(d, 2d), BatchNorm, ReLU, Linear(2d, d), BatchNorm, ReLU
(OGB's, without its ``residual`` option). The pooled sums are one ``index_add`` over the
batch's node → graph index: no loop over graphs, no dense matrix.

Shapes: ``x`` (n, d), ``graphs``: (node → graph int64 (n,), number of graphs B); ``v`` (B, d).
Every layer of the stack must take width ``d`` (its input width, the hidden width).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.errors import ConfigError
from graphflow.sparse.features import to_dense


def vn_mlp(width: int) -> nn.Sequential:
    """OGB's virtual-node MLP: Linear(d, 2d), BN, ReLU, Linear(2d, d), BN, ReLU."""
    return nn.Sequential(nn.Linear(width, 2 * width), nn.BatchNorm1d(2 * width), nn.ReLU(),
                         nn.Linear(2 * width, width), nn.BatchNorm1d(width), nn.ReLU())


class VirtualNode(nn.Module):
    """A :class:`~graphflow.nn.stack.GNNStack` with a virtual node per graph (module doc).

    :param stack: the layers; every layer's input width must be the same ``d``.
    :param dropout: the dropout on the virtual node's update (OGB: the stack's dropout).
    """

    takes_graphs = True  # GraphModel hands it the batch's node -> graph index

    def __init__(self, stack: nn.Module, dropout: float):
        super().__init__()
        dims = list(stack.dims)
        if len(set(dims[:-1])) != 1:
            raise ConfigError(f"virtual_node needs every layer's input of one width, got "
                              f"widths {dims}; give one hidden width (and an input_encoder, "
                              f"or features of that width)")
        self.stack = stack
        self.width = dims[0]
        self.embedding = nn.Parameter(torch.zeros(1, self.width))  # OGB: Embedding(1, d) = 0
        self.mlps = nn.ModuleList(vn_mlp(self.width) for _ in range(stack.num_layers - 1))
        self.dropout = dropout

    @property
    def num_layers(self) -> int:
        return self.stack.num_layers

    @property
    def dims(self) -> list[int]:
        return self.stack.dims

    @property
    def out_dim(self) -> int:
        return self.stack.out_dim

    def forward(self, adj, x, graphs: tuple[torch.Tensor, int] | None = None) -> torch.Tensor:
        return self.layer_outputs(adj, x, graphs)[-1]

    def layer_outputs(self, adj, x, graphs: tuple[torch.Tensor, int] | None = None
                      ) -> list[torch.Tensor]:
        """``[x, h_1, ..., h_L]``: the input and every layer's output (as the stack's)."""
        if graphs is None:
            raise ConfigError("virtual_node needs the graphs of a batch: use it with "
                              'type = "graph_classification" or "graph_regression"')
        seg, num = graphs
        adj = self.stack.prepare(adj)
        h = to_dense(x)
        outs = [h]
        v = self.embedding.expand(num, self.width)  # (B, d)
        for i in range(self.stack.num_layers):
            h = h + v[seg]  # (n, d): every node adds its graph's virtual node
            nxt = self.stack.layer(i, adj, h)
            if i < self.stack.num_layers - 1:
                pooled = h.new_zeros((num, self.width)).index_add_(0, seg, h) + v  # (B, d)
                v = F.dropout(self.mlps[i](pooled), self.dropout, self.training)
            h = nxt
            outs.append(h)
        return outs
