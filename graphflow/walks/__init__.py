"""Random walks (DeepWalk, node2vec), advanced for all walkers at once.

* :mod:`~graphflow.walks.csr`: the walk graph (CSR with cumulative weights) on any device.
* :mod:`~graphflow.walks.edgeset`: a hash set of edges for node2vec's ``(t, x) in E`` test.
* :mod:`~graphflow.walks.node2vec`: first- and second-order walks.

Skip-gram training on the walks lives in :mod:`graphflow.embeddings`.
"""
