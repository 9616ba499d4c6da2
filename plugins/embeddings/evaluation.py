"""The ``embedding_eval`` task: node classification and link prediction on ``ctx.artifacts.embeddings``.

The same evaluation runs at the end of ``skipgram`` with ``eval = true``.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import mean, pstdev

import torch

from graphflow.components import Task
from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError
from graphflow.options import option
from graphflow.sampling.sampler import intra_op_threads
from graphflow.embeddings.evaluation import classify, labelled, link_auc, random_split
from graphflow.walks.holdout import sample_non_edges


@dataclass
class EvalOptions:
    classification: bool = option(True, "Node classification by logistic regression on the "
                                  "embeddings (needs node labels).")
    train_fraction: float = option(0.5, "Training share of the labelled nodes when the graph has "
                                   "no train_mask/test_mask (a seeded random split).")
    splits: int = option(1, "Random splits averaged (graphs without train_mask/test_mask), "
                         "as in the DeepWalk and node2vec papers; each metric is the mean.")
    l2: float | None = option(None, "L2 penalty of the logistic regression (features "
                              "standardised). Default: chosen by validation (val_mask, or 5-fold "
                              "cross-validation on the training nodes).")
    link_prediction: bool = option(False, "ROC AUC of held-out edges against as many non-edges, "
                                   "by cosine similarity; needs holdout_edges > 0 on the "
                                   "node2vec/deepwalk sampler that produced the walks.")

    def __post_init__(self) -> None:
        if not 0.0 < self.train_fraction < 1.0:
            raise ValueError(f"train_fraction = {self.train_fraction}: must lie in (0, 1)")
        if self.splits < 1:
            raise ValueError(f"splits = {self.splits}: must be >= 1")
        if self.l2 is not None and self.l2 < 0:
            raise ValueError(f"l2 = {self.l2}: must be >= 0")


def evaluate_embeddings(ctx: RunContext, embeddings: torch.Tensor, options: EvalOptions) -> dict:
    """Run the evaluations ``options`` asks for, log them with ``ctx.log_metrics``, return them."""
    if not options.classification and not options.link_prediction:
        raise ConfigError(f"nothing to evaluate: set classification = true "
                          f"and/or link_prediction = true")
    data = ctx.graph()
    if embeddings.shape[0] != data.num_nodes:
        raise DataError(f"embeddings have {embeddings.shape[0]} rows but the graph has "
                        f"{data.num_nodes} nodes; the graph changed after the embeddings were "
                        f"made")
    gen = torch.Generator().manual_seed(ctx.seed)
    metrics: dict[str, float] = {}
    with intra_op_threads(1):  # small dense problems: threads cost more than they give
        if options.classification:
            metrics.update(_classification(data, embeddings, options, gen))
        if options.link_prediction:
            metrics["link_auc"] = _link_prediction(ctx, embeddings, gen)
    ctx.log_metrics(**metrics)
    ctx.info("  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
    return metrics


def _classification(data, embeddings: torch.Tensor, options: EvalOptions,
                    gen: torch.Generator) -> dict[str, float]:
    g = data.graph
    if "label" not in g.ndata:
        raise DataError(f"node classification needs node labels (ndata['label']) "
                        f"and this graph has none; load a labelled graph or set "
                        f"classification = false")
    labels = g.ndata["label"]
    has = labelled(labels)
    if "train_mask" in g.ndata and "test_mask" in g.ndata:
        train = (g.ndata["train_mask"] & has).nonzero().squeeze(1)
        test = (g.ndata["test_mask"] & has).nonzero().squeeze(1)
        val = (g.ndata["val_mask"] & has).nonzero().squeeze(1) if "val_mask" in g.ndata else None
        if train.numel() == 0 or test.numel() == 0:
            raise DataError(f"train_mask/test_mask select {train.numel()}/"
                            f"{test.numel()} labelled nodes; both need at least one")
    else:
        nodes = has.nonzero().squeeze(1)
        if nodes.numel() < 2:
            raise DataError(f"{nodes.numel()} labelled node(s); node classification "
                            f"needs at least 2")
        results = []
        for _ in range(options.splits):
            train, test = random_split(nodes, options.train_fraction, gen)
            results.append(classify(embeddings, labels, train, test, l2=options.l2,
                                    num_classes=data.num_classes, generator=gen))
        out = {"emb_test_acc": mean(r.accuracy for r in results),
               "emb_micro_f1": mean(r.micro_f1 for r in results),
               "emb_macro_f1": mean(r.macro_f1 for r in results)}
        if options.splits > 1:
            out["emb_test_acc_std"] = pstdev(r.accuracy for r in results)
        return out
    result = classify(embeddings, labels, train, test, val=val, l2=options.l2,
                      num_classes=data.num_classes, generator=gen)
    return {"emb_test_acc": result.accuracy, "emb_micro_f1": result.micro_f1,
            "emb_macro_f1": result.macro_f1, "emb_l2": result.l2}


def _link_prediction(ctx: RunContext, embeddings: torch.Tensor, gen: torch.Generator) -> float:
    held = getattr(ctx.sampler_graph, "heldout", None)
    if held is None:
        raise ConfigError(f"link_prediction = true needs held-out edges: set "
                          f"holdout_edges = 0.1 (for example) in the node2vec/deepwalk [sample] "
                          f"section of the skipgram stage, so that they are removed before "
                          f"walking")
    src, dst = ctx.graph().graph.edges()
    negative = sample_non_edges(src, dst, ctx.graph().num_nodes, held.shape[1], gen)
    return link_auc(embeddings, held, negative)


class EmbeddingEvalTask(Task):
    """Evaluate node embeddings from an earlier stage (``ctx.artifacts.embeddings``).

    Node classification: logistic regression (torch, L-BFGS, L2) on the embeddings of the
    training nodes (``train_mask`` / ``test_mask`` when the graph has them, else a seeded split
    with ``train_fraction``); multi-label graphs use one-vs-rest with top-k prediction (k = the
    node's number of labels), as in the node2vec paper. Logs ``emb_test_acc``, ``emb_micro_f1``
    and ``emb_macro_f1`` (macro over all classes, as ``node_classification``'s ``f1_macro``);
    with masks also ``emb_l2``, the penalty used; with ``splits > 1`` also
    ``emb_test_acc_std``.

    Link prediction (``link_prediction = true``): the walk sampler removed ``holdout_edges`` of
    the edges before walking; their cosine scores are ranked against as many sampled non-edges
    of the full graph. Logs ``link_auc``.
    """

    name = "embedding_eval"
    summary = "Evaluate embeddings: logistic-regression node classification, link-prediction AUC"
    Options = EvalOptions

    def run(self, ctx: RunContext) -> None:
        section = ctx.stage.section if ctx.stage else "train"
        embeddings = ctx.artifacts.require("embeddings", section=section)
        evaluate_embeddings(ctx, embeddings.float().cpu(), self.options)
