r"""Link prediction on typed graphs: a typed encoder, one decoder per target relation.

The ``link_split`` transform holds out edges of the target relations
(:func:`~graphflow.linkpred.edge_split.typed_random_split`, a
:class:`~graphflow.linkpred.held_out.TypedLinkSplit`); the ``link_prediction`` task then
trains, full batch:

* the encoder: the ``[model]``'s typed stack (``rgcn``, ``hetero``) over the message-passing
  graph, every node type to ``embedding_dim``: ``h[t]`` (N_t, D) per type;
* a decoder per target relation :math:`r = (s, \cdot, d)` (:class:`TypedLinkModel`), e.g.
  DistMult :math:`f_r(u, v) = \sum_i h_{s,u,i}\, w_{r,i}\, h_{d,v,i}`;
* the loss (``bce`` or ``bpr``, :class:`~graphflow.train.objective.ScoredPairs`) over the
  training edges of every target relation pooled, each with ``k`` negatives ``(u, w)`` whose
  tail ``w`` is drawn among the nodes of type ``d``
  (:func:`~graphflow.linkpred.negatives.typed_samplers`).

Figures per relation and overall (:func:`typed_figures`): AUC and AP of each relation's fixed
positives against its fixed negatives; MRR and Hits@K ranking each positive ``(u, v)``
against ``eval_negatives`` destinations drawn among the nodes of type ``d`` for its own source
(OGB's ``ogbl-citation2`` protocol). The overall figures pool the relations: AUC and AP over
every relation's pairs together, MRR and Hits@K over every positive's rank.
Names: ``val_auc``, ``test_mrr``... overall, ``test_auc/<relation>`` per relation (the
relation's name, or ``src:relation:dst`` when several canonical relations share the name).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import torch
from torch import nn

from graphflow.errors import DataError
from graphflow.linkpred.decoders import make_decoder
from graphflow.linkpred.edge_split import pair_keys
from graphflow.linkpred.evaluate import DEFAULT_CHUNK, binary_figures, pair_ranks, rank_figures
from graphflow.linkpred.held_out import LINK_SPLITS, Relation, ScoredLinks, TypedLinkSplit
from graphflow.linkpred.negatives import NegativeSampler
from graphflow.nn.typed import TypedAdjacency
from graphflow.train.metrics import average_precision, roc_auc
from graphflow.train.objective import PairLoss, ScoredPairs
from graphflow.train.step import Step
from graphflow.train.task import split_figures

Progress = Callable[..., Any]


class TypedLinkModel(nn.Module):
    """The typed encoder and one pair decoder per target relation, trained and saved together.

    ``forward(adj, x)`` is the encoder's: per node type (N_t, D) embeddings.
    """

    def __init__(self, encoder: nn.Module, decoders: Sequence[nn.Module],
                 relations: Sequence[Relation]):
        super().__init__()
        if len(decoders) != len(relations):
            raise ValueError(f"{len(decoders)} decoders for {len(relations)} relations")
        self.encoder = encoder
        self.decoders = nn.ModuleList(decoders)
        self.relations: list[Relation] = [tuple(r) for r in relations]  # type: ignore[misc]

    def decoder(self, rel: Relation) -> nn.Module:
        return self.decoders[self.relations.index(tuple(rel))]  # type: ignore[arg-type]

    def forward(self, adj: TypedAdjacency | Sequence[TypedAdjacency],
                x: Mapping[str, torch.Tensor]) -> dict[str, torch.Tensor]:
        return self.encoder(adj, x)


def typed_link_model(encoder: nn.Module, split: TypedLinkSplit, decoder: str,
                     dim: int) -> TypedLinkModel:
    """``encoder`` under a ``decoder`` (dot, mlp, bilinear, distmult) per target relation."""
    return TypedLinkModel(encoder, [make_decoder(decoder, dim)  # type: ignore[arg-type]
                                    for _ in split.relations], split.relations)


def check_typed_split(split: TypedLinkSplit, graph: Any, section: str) -> None:
    """No held-out positive ``(u, v)`` of a relation is an edge of it in ``graph``, nor
    ``(v, u)`` of its reverse relation; a ``DataError`` names the pair and the fix."""
    for rel, s in split.rels.items():  # over target relations
        n_d = graph.num_nodes(rel[2])
        held = torch.cat([s.val.pos, s.test.pos], dim=1)  # (2, P)
        keys = pair_keys(held[0], held[1], n_d, s.undirected)
        src, dst = graph.edges(etype=rel)
        checks = [(rel, pair_keys(src, dst, n_d, s.undirected))]
        rev = split.reverse.get(rel)
        if rev is not None:
            rs, rd = graph.edges(etype=rev)
            checks.append((rev, pair_keys(rd, rs, n_d, s.undirected)))
        for where, edges in checks:  # the relation, its reverse
            leaked = torch.isin(keys, edges)
            if bool(leaked.any()):
                i = int(leaked.nonzero()[0, 0])
                raise DataError(f"[{section}] held-out edge ({int(held[0, i])}, "
                                f"{int(held[1, i])}) of relation {':'.join(rel)} is an edge "
                                f"of the training graph again ({':'.join(where)}): a transform "
                                f"after link_split added edges; put link_split last among the "
                                f"transforms")


def _embedding(h: Mapping[str, torch.Tensor], ntype: str, rel: Relation) -> torch.Tensor:
    if ntype not in h:
        raise DataError(f"the encoder gives no embedding to node type {ntype!r} (no relation "
                        f"ends there), so relation {':'.join(rel)} cannot be scored; load the "
                        f"graph with reverse = true (rev-<relation> edges)")
    return h[ntype]


class TypedLinkFullBatch:
    """Every epoch one step on the training edges of every target relation, with ``k``
    tail-corrupted negatives per edge (drawn on the CPU with ``generator``).

    :param positives: per target relation, int64 (2, E_r) training edges (ids within types).
    :param samplers: per target relation, the destination type's negative sampler.
    """

    def __init__(self, model: TypedLinkModel, step: Step, loss: PairLoss | ScoredPairs,
                 adj: TypedAdjacency, x: Mapping[str, torch.Tensor],
                 positives: Mapping[Relation, torch.Tensor],
                 samplers: Mapping[Relation, NegativeSampler], k: int,
                 generator: torch.Generator):
        dev = step.device
        self.model, self.step, self.k = model, step, k
        self.objective = loss if isinstance(loss, ScoredPairs) else ScoredPairs(loss)
        self.adj = adj.to(dev)
        self.x = {t: v.to(dev) for t, v in x.items()}
        self.relations = list(model.relations)
        self.pos_cpu = {r: positives[r] for r in self.relations}
        self.pos = {r: p.to(dev) for r, p in self.pos_cpu.items()}
        self.neg_src = {r: p[0].repeat_interleave(k) for r, p in self.pos.items()}  # (E_r k,)
        self.samplers, self.generator = samplers, generator
        self.inference_batch_size, self.progress = 0, None  # one full-graph forward

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        dev = self.step.device
        neg_dst = {r: self.samplers[r](self.pos_cpu[r][0], self.k, self.generator).to(dev)
                   for r in self.relations}  # (E_r k,) each, ids of the destination type
        with self.step.autocast():
            h = self.model.encoder(self.adj, self.x)  # per type (N_t, D)
            pos, neg = [], []
            for rel, decoder in zip(self.relations, self.model.decoders):  # over relations
                hs, hd = _embedding(h, rel[0], rel), _embedding(h, rel[2], rel)
                u, v = self.pos[rel]
                pos.append(decoder(hs.index_select(0, u), hd.index_select(0, v)))  # (E_r,)
                neg.append(decoder(hs.index_select(0, self.neg_src[rel]),
                                   hd.index_select(0, neg_dst[rel])))  # (E_r k,)
            loss = self.objective.loss(torch.cat(pos), torch.cat(neg), self.k)
        self.step.step(loss)
        return {"loss": loss.item()}

    @torch.no_grad()
    def embeddings(self) -> dict[str, torch.Tensor]:
        """Per node type (N_t, D) float32 on the device: eval mode, full neighbourhoods."""
        self.model.eval()
        with self.step.autocast():
            out = self.model.encoder(self.adj, self.x)
        return {t: v.float() for t, v in out.items()}


def typed_figures(model: TypedLinkModel, h: Mapping[str, torch.Tensor], split: TypedLinkSplit,
                  name: str, *, ranking: bool, eval_negatives: int, hits: Sequence[int],
                  seed: int, chunk: int = DEFAULT_CHUNK, device: torch.device | None = None
                  ) -> tuple[dict[str, float], dict[Relation, tuple[torch.Tensor, torch.Tensor]]]:
    """The figures of split ``name`` (``val`` / ``test``), per relation and overall (see the
    module docstring), and each relation's ``(pos_scores (P,), neg_scores (Q,))``.

    :param ranking: also MRR and Hits@K (destinations drawn from a generator seeded with
        ``seed``, relation after relation: every evaluation ranks against the same ones).
    """
    model.eval()
    figures: dict[str, float] = {}
    scores: dict[Relation, tuple[torch.Tensor, torch.Tensor]] = {}
    generator = torch.Generator().manual_seed(seed)
    all_pos, all_neg, all_ranks = [], [], []
    for rel in model.relations:  # over target relations
        pairs = split.rels[rel].get(name)
        label = split.name(rel)
        hs, hd = _embedding(h, rel[0], rel), _embedding(h, rel[2], rel)
        decoder = model.decoder(rel)
        binary, pos, neg = binary_figures(decoder, hs, pairs, chunk=chunk, device=device,
                                          h_dst=hd)
        scores[rel] = (pos, neg)
        figures.update(split_figures(name, {f"{k}/{label}": v for k, v in binary.items()}))
        all_pos.append(pos)
        all_neg.append(neg)
        if ranking and pairs.num_pos:
            rank = pair_ranks(decoder, hs, pairs.pos, negatives=eval_negatives,
                              generator=generator, chunk=chunk, device=device, h_dst=hd)
            figures.update(split_figures(name, {f"{k}/{label}": v
                                                for k, v in rank_figures(rank, hits).items()}))
            all_ranks.append(rank)
    pos, neg = torch.cat(all_pos), torch.cat(all_neg)
    overall: dict[str, float] = {}
    if pos.numel() and neg.numel():
        overall = {"auc": roc_auc(pos, neg), "ap": average_precision(pos, neg)}
    if all_ranks:
        overall.update(rank_figures(torch.cat(all_ranks), hits))
    return {**split_figures(name, overall), **figures}, scores


def typed_scored_links(split: TypedLinkSplit,
                       scores: Mapping[str, Mapping[Relation, tuple[torch.Tensor, torch.Tensor]]]
                       ) -> ScoredLinks:
    """The ``links`` artifact of a typed split: every relation's val and test pairs (ids
    within their types) with their label, score and relation.

    :param scores: per split name, per relation, ``(pos_scores, neg_scores)`` as
        :func:`typed_figures` returns them.
    """
    relations = split.relations
    parts = []
    for name, per_rel in scores.items():  # val, test
        code = LINK_SPLITS.index(name)
        for i, rel in enumerate(relations):  # over target relations
            pairs, label = split.rels[rel].get(name).labelled()
            m = label.numel()
            pos, neg = per_rel[rel]
            parts.append((pairs, torch.full((m,), code, dtype=torch.int8), label,
                          torch.cat([pos, neg]), torch.full((m,), i, dtype=torch.int64)))
    pairs, codes, label, score, rel = (torch.cat(cols, dim=-1) for cols in zip(*parts))
    return ScoredLinks(pairs, codes, label, score, relation=rel, relations=list(relations),
                       names=[split.name(r) for r in relations])
