"""Explanations of a trained model's predictions: which edges and which features drove them.

* :mod:`~graphflow.explain.explanation`: the :class:`Explanation` every method returns;
* :mod:`~graphflow.explain.subgraph`: the L-hop computation subgraphs of many targets as one
  disjoint union, whose edge weights reach the model through :class:`Adjacency` values;
* :mod:`~graphflow.explain.gnnexplainer`: GNNExplainer (Ying et al. 2019), batched;
* :mod:`~graphflow.explain.gradients`: saliency and integrated gradients through Captum;
* :mod:`~graphflow.explain.metrics`: fidelity+ / fidelity- and the characterization score,
  as ``torch_geometric.explain.metric`` defines them; ROC-AUC against ground-truth edges.

docs/explain.md is the guide.
"""

from graphflow.explain.explanation import Explanation, GraphInputs

__all__ = ["Explanation", "GraphInputs"]
