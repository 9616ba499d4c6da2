"""Graph-level learning: collections of graphs, their minibatches, readouts and folds.

* :mod:`graphflow.graphs.collection`: :class:`GraphCollection`, the node → graph index and the
  graph table attached to a :class:`~graphflow.graph.GraphData` (``data.graphs``), and the
  checks every collection loader runs.
* :mod:`graphflow.graphs.build`: checked collections from arrays (what every collection
  loader calls); :mod:`graphflow.graphs.convert`: from networkx graphs;
  :mod:`graphflow.graphs.textfile`: TU text files.
* :mod:`graphflow.graphs.features`: one-hot node labels and one-hot degrees as features.
* :mod:`graphflow.graphs.batch`: minibatches of whole graphs as one block-diagonal
  :class:`~graphflow.sparse.Adjacency`, cut from the collection's CSR by index arithmetic.
* :mod:`graphflow.graphs.readout`: sum, mean, max and gated-attention pooling.
* :mod:`graphflow.graphs.folds`: stratified splits of graphs, k folds, fold files.
* :mod:`graphflow.graphs.model`, :mod:`graphflow.graphs.objective`,
  :mod:`graphflow.graphs.task`: the graph-level model (encoder + readout + head), targets
  and metrics, and the task base of ``graph_classification`` / ``graph_regression``.
"""
