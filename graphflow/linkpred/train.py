"""Link prediction training passes: full batch, or edge-seeded sampled minibatches.

Both follow the pass protocol of :mod:`graphflow.train.step`: ``train_epoch(epoch) ->
figures`` (for :class:`~graphflow.train.loop.EpochLoop`) and ``embeddings() -> (N, D)``
(eval mode, every node, full neighborhoods: a full-graph forward, or layer-wise inference in
batches, under the run's autocast, returned in float32); they step with the one
:class:`~graphflow.train.step.Step` (precision, clipping) and take their loss from
:class:`~graphflow.train.objective.ScoredPairs` (``bce`` or ``bpr``, its docstring has the
formulas).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from graphflow.linkpred.decoders import LinkModel, decode, decode_pairs
from graphflow.sampling.edges import EdgeBatches
from graphflow.sparse import Adjacency
from graphflow.sparse.features import Features
from graphflow.sparse.indexed_rows import IndexedRows
from graphflow.train.objective import PairLoss, ScoredPairs
from graphflow.train.step import Step, Tally

LossName = PairLoss
Progress = Callable[..., Any]


def pair_objective(loss: LossName | ScoredPairs) -> ScoredPairs:
    """``loss`` as the pairs' objective (a loss name: ``bce`` or ``bpr``)."""
    return loss if isinstance(loss, ScoredPairs) else ScoredPairs(loss)


class LinkFullBatch:
    """Every epoch one step on all training edges and ``k`` drawn negatives per edge.

    :param src: / :param dst: int64 (P,) the positive pairs: the training graph's edges (and
        with the task's ``self_loops`` every ``(u, u)``).
    :param draw: negative sampler, ``draw(src, k, generator) -> (E * k,)``, run on the CPU
        with ``generator``.
    """

    def __init__(self, model: LinkModel, step: Step, loss: LossName | ScoredPairs,
                 adj: Adjacency, x: Features, src: torch.Tensor, dst: torch.Tensor,
                 draw: Any, k: int,
                 generator: torch.Generator, *, inference_batch_size: int = 0,
                 progress: Progress | None = None):
        dev = step.device
        self.model, self.step, self.k = model, step, k
        self.objective = pair_objective(loss)
        self.adj, self.x = adj.to(dev), x.to(dev)
        self.src_cpu = src
        self.src, self.dst = src.to(dev), dst.to(dev)
        self.neg_src = self.src.repeat_interleave(k)  # (E * k,)
        self.draw, self.generator = draw, generator
        self.inference_batch_size, self.progress = inference_batch_size, progress

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        neg_dst = self.draw(self.src_cpu, self.k, self.generator).to(self.step.device)
        with self.step.autocast():
            h = self.model.encoder(self.adj, self.x)  # (N, D)
            pos = decode(self.model.decoder, h, self.src, self.dst)  # (E,)
            neg = decode(self.model.decoder, h, self.neg_src, neg_dst)  # (E * k,)
            loss = self.objective.loss(pos, neg, self.k)
        self.step.step(loss)
        return {"loss": loss.item()}

    @torch.no_grad()
    def embeddings(self) -> torch.Tensor:
        """(N, D) float32 on the device: eval mode, every node, full neighborhoods."""
        self.model.eval()
        with self.step.autocast():
            if self.inference_batch_size > 0:
                out = self.model.encoder.inference(
                    self.adj, self.x, batch_size=self.inference_batch_size,
                    device=self.step.device, progress=self.progress)
            else:
                out = self.model.encoder(self.adj, self.x)
        return out.float()


class LinkMiniBatches:
    """Sampled training over the training edges, ``batch_size`` positives per step.

    The blocks of a batch come from :class:`~graphflow.sampling.edges.EdgeBatches` (its own
    edges and their reverses excluded); embeddings use layer-wise full-neighbor inference
    over the training graph, ``inference_batch_size`` nodes at a time.
    """

    def __init__(self, model: LinkModel, step: Step, loss: LossName | ScoredPairs,
                 adj: Adjacency, x: Features, edges: EdgeBatches, num_edges: int,
                 generator: torch.Generator,
                 *, use_sampled_features: bool, inference_batch_size: int,
                 progress: Progress | None = None, workers: int | None = None):
        self.model, self.step = model, step
        self.objective = pair_objective(loss)
        self.adj, self.x = adj, x  # CPU
        self.edges, self.generator = edges, generator
        self.workers = workers  # sampling workers (the stage's core plan, graphflow.runtime.cores)
        self.eids = torch.arange(num_edges)
        self.use_sampled_features = use_sampled_features
        # Features as IndexedRows (read in place by the first layer) when the encoder takes
        # them (graphflow.sparse.indexed_rows), as the node task does.
        self.rows = bool(getattr(model.encoder, "accepts_rows", False)) and use_sampled_features
        self.inference_batch_size, self.progress = inference_batch_size, progress

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        dev = self.step.device
        tally = Tally()
        k = self.edges.k
        for mb in self.edges.iterate(self.eids, self.generator, workers=self.workers,
                                     rows=self.rows):
            adjs = [Adjacency.from_block(b.to(dev)) for b in mb.blocks]
            if isinstance(mb.features, IndexedRows) and mb.features.device == dev:
                x = mb.features  # (num_input, F), not gathered
            elif self.use_sampled_features and mb.features is not None:
                x = mb.features.to(dev)  # (num_input, F)
            else:
                x = self.x[mb.input_nodes.cpu()].to(dev)
            pos_idx, neg_idx = mb.pos.to(dev), mb.neg.to(dev)
            with self.step.autocast():
                h = self.model.encoder(adjs, x)  # (S, D) the batch's endpoints
                pos, neg = decode_pairs(self.model.decoder, h, pos_idx, neg_idx)  # (B,), (B k,)
                loss = self.objective.loss(pos, neg, k)
            self.step.step(loss)
            tally.add(int(pos.shape[0]), loss=loss.item())
        return tally.means()

    @torch.no_grad()
    def embeddings(self) -> torch.Tensor:
        """(N, D) float32 on the CPU, by layer-wise full-neighbor inference."""
        self.model.eval()
        with self.step.autocast():
            out = self.model.encoder.inference(self.adj, self.x,
                                               batch_size=self.inference_batch_size,
                                               device=self.step.device,
                                               progress=self.progress)
        return out.float()
