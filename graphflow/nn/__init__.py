"""Sparse message-passing layers, one per file. Each takes ``(adj, x)``: an
:class:`~graphflow.sparse.Adjacency` and (num_src, F_in) features, and returns
(num_dst, F_out); on blocks the destination features are ``x[:adj.num_dst]``."""

from graphflow.nn.gcn import GCNConv, gcn_conv

__all__ = ["GCNConv", "gcn_conv"]
