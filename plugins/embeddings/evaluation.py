"""The ``embedding_eval`` task: node classification and link prediction on ``ctx.artifacts.embeddings``.

The evaluation itself is :mod:`graphflow.embeddings.evaluation`; the same evaluation runs at the
end of ``skipgram`` with ``eval = true``.
"""

from __future__ import annotations

from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.embeddings.evaluation import EvalOptions, evaluate_embeddings


class EmbeddingEvalTask(Task):
    """Evaluate node embeddings from an earlier stage (``ctx.artifacts.embeddings``).

    Node classification: logistic regression (torch, L-BFGS, L2) on the embeddings of the
    training nodes (``train_mask`` / ``test_mask`` when the graph has them, else a seeded split
    with ``train_fraction``); multi-label graphs use one-vs-rest with top-k prediction (k = the
    node's number of labels), as in the node2vec paper. Logs ``emb_test_acc``, ``emb_micro_f1``
    and ``emb_macro_f1`` (macro over all classes, as ``node_classification``'s ``f1_macro``);
    with masks also ``emb_l2``, the penalty used; with ``splits > 1`` also
    ``emb_test_acc_std``.

    Link prediction (``link_prediction = true``): the ``link_split`` transform held out test
    edges before the walks; their cosine scores are ranked against the split's fixed negatives
    (non-edges of the full graph). Logs ``link_auc``.
    """

    name = "embedding_eval"
    summary = "Evaluate embeddings: logistic-regression node classification, link-prediction AUC"
    Options = EvalOptions

    def run(self, ctx: RunContext) -> None:
        section = ctx.section
        embeddings = ctx.artifacts.require("embeddings", section=section)
        evaluate_embeddings(ctx, embeddings.float().cpu(), self.options)
