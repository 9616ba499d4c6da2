"""Sparse core: the adjacency type and the one SpMM dispatch point.

* :class:`Adjacency`: CSR over destination rows plus cached transpose, degrees and norms.
* :func:`spmm`: ``A @ x`` with autograd to ``x`` and to the edge values (SDDMM).
* :func:`edge_softmax`: softmax of edge scores over each destination's in-edges.
* :func:`edge_gather` / :func:`edge_sum`: each entry's source row, and per-edge message
  vectors summed into their destinations.
* :class:`SparseFeatures` / :func:`as_features`: CSR input features for a first layer.
* :mod:`graphflow.sparse.gemm`: the one dense dispatch point, a layer's ``x W^T + b`` on the
  CPU through oneDNN or torch.
"""

from graphflow.sparse.adjacency import Adjacency, Transposed
from graphflow.sparse.features import SparseFeatures, as_features
from graphflow.sparse.ops import edge_gather, edge_sum, sddmm, spmm, spmm_cat
from graphflow.sparse.softmax import edge_softmax

__all__ = ["Adjacency", "Transposed", "spmm", "spmm_cat", "sddmm", "SparseFeatures", "as_features",
           "edge_softmax", "edge_gather", "edge_sum"]
