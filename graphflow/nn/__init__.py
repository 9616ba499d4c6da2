"""Sparse message-passing layers, one per file. Each takes ``(adj, x)``: an
:class:`~graphflow.sparse.Adjacency` and (num_src, F_in) features (a tensor, or
:class:`~graphflow.sparse.SparseFeatures` for a first layer), and returns (num_dst, F_out);
on blocks the destination features are ``x[:adj.num_dst]``. :class:`Linear` is ``nn.Linear``
with graphflow's dense products (:mod:`graphflow.sparse.gemm`), for the MLPs inside models."""

from graphflow.nn.gat import GATConv, gat_attention
from graphflow.nn.gcn import GCNConv, gcn_conv
from graphflow.nn.gin import GINConv, gin_aggregate
from graphflow.nn.gine import GINEConv, gine_aggregate
from graphflow.nn.linear import Linear
from graphflow.nn.sage import SAGEConv, sage_conv
from graphflow.nn.sgc import SGConv, propagate

__all__ = ["GCNConv", "gcn_conv", "SAGEConv", "sage_conv", "GATConv", "gat_attention",
           "SGConv", "propagate", "GINConv", "gin_aggregate", "GINEConv", "gine_aggregate", "Linear"]
