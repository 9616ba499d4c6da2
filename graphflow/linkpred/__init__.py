"""Link prediction: held-out edge splits, pair decoders, negatives and chunked evaluation.

* :mod:`graphflow.linkpred.held_out`: :class:`LinkSplit`, the held-out pairs a graph carries.
* :mod:`graphflow.linkpred.edge_split`: a seeded random edge split, or a user's split file,
  with fixed negatives (non-edges of the full graph).
* :mod:`graphflow.linkpred.decoders`: ``dot``, ``mlp`` and ``bilinear`` pair scores.
* :mod:`graphflow.linkpred.negatives`: training negatives (uniform or degree^0.75).
* :mod:`graphflow.linkpred.evaluate`: AUC / AP on fixed pairs and MRR / Hits@K on sampled
  destinations, scored in chunks from embeddings computed once.
* :mod:`graphflow.linkpred.train`: full-batch and sampled training passes.
"""
