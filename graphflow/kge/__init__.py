"""Knowledge-graph completion: triples, shallow embedding models, filtered ranking.

* :mod:`graphflow.kge.triples`: ``train.txt`` / ``valid.txt`` / ``test.txt`` of
  ``head<TAB>relation<TAB>tail`` (+ optional ``entities.dict`` / ``relations.dict``) read
  vectorised into a :class:`~graphflow.kge.triples.KnowledgeGraph` of index triples with
  the original names.
* :mod:`graphflow.kge.evaluate`: the filtered ranking protocol (Bordes et al. 2013) with
  realistic ties (PyKEEN): MRR, MR, Hits@1/3/10, overall and per relation.
* :mod:`graphflow.kge.models`: TransE, DistMult, ComplEx and RotatE behind one scoring
  contract (``score_hrt``, ``score_t``, ``score_h``), with sparse embedding gradients.
* :mod:`graphflow.kge.train`: negatives (uniform or Bernoulli), self-adversarial weighting,
  1-N scoring, margin / softplus / BCE / cross-entropy losses, reciprocal relations.
* :mod:`graphflow.kge.query`: ``(h, r, ?)`` / ``(?, r, t)`` queries, top-k answers with
  names, scores and whether each is known.
"""

from graphflow.kge.triples import KnowledgeGraph, read_triples

__all__ = ["KnowledgeGraph", "read_triples"]
