"""Node classification mechanics: the objective, and full-batch or minibatch training passes.

* :class:`Objective`: cross-entropy over class ids, or one-vs-rest binary cross-entropy over
  0/1 multi-label targets; predictions and metrics to match.
* :class:`FullBatch`: every epoch is one step on the whole graph (one :class:`Adjacency`
  built once on the device, features moved once).
* :class:`MiniBatches`: every epoch steps on the sampler's minibatches over the shuffled
  training nodes (one block per layer).

Both offer ``train_epoch(epoch) -> figures`` and ``logits() -> (N, C)`` (eval mode, every
node, full neighborhoods: a full-graph forward, or layer-wise inference in batches).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.sampling.block import Block, MiniBatch
from graphflow.sparse import Adjacency
from graphflow.sparse.features import Features
from graphflow.sparse.indexed_rows import IndexedRows
from graphflow.train.metrics import classification_report
from graphflow.train.step import Step, Stepper  # noqa: F401  (Stepper: the former name)

Progress = Callable[..., Any]


@dataclass
class Objective:
    """Loss, prediction and metrics of single-label or multi-label classification."""

    num_classes: int
    multilabel: bool
    weight: torch.Tensor | None = None  # (C,): class weights, or pos_weight (multi-label)

    def loss(self, logits: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
        """Mean loss of (n, C) logits against (n,) class ids or (n, C) 0/1 targets
        (weighted by ``weight``: :mod:`graphflow.train.balance`)."""
        weight = None if self.weight is None else self.weight.to(  # autocast: float32 loss
            logits.device, torch.promote_types(logits.dtype, torch.float32))
        if self.multilabel:
            return F.binary_cross_entropy_with_logits(logits, target.to(logits.dtype),
                                                      pos_weight=weight)
        return F.cross_entropy(logits, target, weight=weight)

    def predict(self, logits: torch.Tensor) -> torch.Tensor:
        """int64 (n,) class ids, or float32 (n, C) 0/1 (a label where its logit > 0)."""
        if self.multilabel:
            return (logits > 0).float()
        return logits.argmax(dim=-1)

    def report(self, logits: torch.Tensor, target: torch.Tensor) -> dict[str, float]:
        """``acc``, ``f1_macro`` (and ``f1_micro`` for multi-label) of these rows."""
        return classification_report(self.predict(logits), target, self.num_classes,
                                      multilabel=self.multilabel)

    @property
    def score_name(self) -> str:
        """The validation figure that picks the best model."""
        return "f1_micro" if self.multilabel else "acc"


class FullBatch:
    """Full-graph training: the adjacency, features and labels live on the device."""

    def __init__(self, model: nn.Module, stepper: Stepper, objective: Objective,
                 adj: Adjacency, x: Features, labels: torch.Tensor, train_ids: torch.Tensor,
                 *, inference_batch_size: int = 0, progress: Progress | None = None):
        dev = stepper.device
        self.model, self.stepper, self.objective = model, stepper, objective
        self.adj = adj.to(dev)
        self.x = x.to(dev)  # (N, F)
        self.labels = labels.to(dev)  # (N,) or (N, C)
        self.train_ids = train_ids.to(dev)  # (n_train,)
        self.inference_batch_size = inference_batch_size
        self.progress = progress

    def forward(self) -> torch.Tensor:
        """The model's output rows for every labelled node, (N, C)."""
        return self.model(self.adj, self.x)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        with self.stepper.autocast():
            out = self.forward()[self.train_ids]  # (n_train, C)
            loss = self.objective.loss(out.float(), self.labels[self.train_ids])
        self.stepper.step(loss)
        report = self.objective.report(out.detach(), self.labels[self.train_ids])
        return {"loss": loss.item(), "train_acc": report["acc"]}

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(N, C) float32 on the device: eval mode, every node, full neighborhoods."""
        self.model.eval()
        with self.stepper.autocast():
            if self.inference_batch_size > 0:
                out = self.model.inference(self.adj, self.x, batch_size=self.inference_batch_size,
                                           device=self.stepper.device, progress=self.progress)
            else:
                out = self.forward()
        return out.float()


class MiniBatches:
    """Sampled training: shuffled seeds in batches, one block per layer.

    With a :class:`~graphflow.sampling.sampler.MinibatchSampler` the batches come from its
    ``iterate(graph, seeds, generator)`` (shuffled with ``generator``, prefetched, features
    and labels gathered on its output device); any other sampler gets the seeds shuffled
    here, ``batch_size`` at a time, and ``sample(graph, seeds)`` per batch. ``workers`` (the
    stage's core plan, :mod:`graphflow.runtime.cores`) goes to ``iterate``. The full graph
    and the features stay on the CPU; predictions use layer-wise inference over the full
    graph, ``inference_batch_size`` nodes at a time.
    """

    def __init__(self, model: nn.Module, stepper: Stepper, objective: Objective,
                 adj: Adjacency, x: Features, labels: torch.Tensor, train_ids: torch.Tensor,
                 *, sampler: Any, graph: Any, generator: torch.Generator,
                 use_sampled_features: bool, inference_batch_size: int,
                 edge_values: torch.Tensor | None = None, progress: Progress | None = None,
                 workers: int | None = None):
        self.model, self.stepper, self.objective = model, stepper, objective
        self.workers = workers  # sampling workers of iterate() (the stage's core plan)
        # (E,) per input edge, looked up by each block's edge ids, on the device once.
        self.edge_values = None if edge_values is None else edge_values.to(stepper.device)
        self.adj, self.x, self.labels, self.train_ids = adj, x, labels, train_ids  # CPU
        self.sampler, self.graph, self.generator = sampler, graph, generator
        self.use_sampled_features = use_sampled_features
        self.inference_batch_size = inference_batch_size
        self.progress = progress
        # Features as IndexedRows (read in place by the first layer) when the model takes
        # them and the sampler's iterate() can give them (graphflow.sparse.indexed_rows).
        self.rows = bool(getattr(model, "accepts_rows", False)) and use_sampled_features \
            and takes_keyword(getattr(sampler, "iterate", None), "rows")
        if hasattr(sampler, "check_layers") and hasattr(model, "num_layers"):
            sampler.check_layers(model.num_layers)
        if not hasattr(sampler, "iterate"):
            batch_size = getattr(getattr(sampler, "options", None), "batch_size", None)
            if not isinstance(batch_size, int) or batch_size < 1:
                raise ConfigError(f"sampler {getattr(sampler, 'name', sampler)!r} has neither "
                                  f"iterate() nor a batch_size option, so its seeds cannot be "
                                  f"batched")

    def batches(self) -> Iterator[MiniBatch]:
        """This epoch's minibatches over the training nodes."""
        yield from self.sample_epoch(self.train_ids)

    def sample_epoch(self, seeds: torch.Tensor) -> Iterator[MiniBatch]:
        """Minibatches over ``seeds`` in a shuffled order (the sampler's ``iterate`` when it
        has one, with the stage's sampling workers; else ``sample`` per ``batch_size``)."""
        if hasattr(self.sampler, "iterate"):
            kwargs: dict[str, Any] = {} if self.workers is None else {"workers": self.workers}
            if self.rows:
                kwargs["rows"] = True
            yield from self.sampler.iterate(self.graph, seeds, self.generator, **kwargs)
            return
        order = torch.randperm(seeds.shape[0], generator=self.generator)
        for batch in seeds[order].split(self.sampler.options.batch_size):
            yield self.sampler.sample(self.graph, batch)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        self.model.train()
        dev = self.stepper.device
        total_loss, correct, seen = 0.0, 0.0, 0
        for mb in self.batches():
            if not isinstance(mb, MiniBatch):
                name = getattr(self.sampler, "name", type(self.sampler).__name__)
                raise DataError(f'[sample] "{name}" returned {type(mb).__name__}, not a '
                                f"MiniBatch of blocks; this task needs a block sampler such "
                                f'as type = "neighbor"')
            adjs = [self.block_adjacency(b.to(dev)) for b in mb.blocks]
            if isinstance(mb.features, IndexedRows) and mb.features.device == dev:
                x = mb.features  # (num_input, F), not gathered
            elif self.use_sampled_features and mb.features is not None:
                x = mb.features.to(dev)  # (num_input, F)
            else:
                x = self.x[mb.input_nodes.cpu()].to(dev)  # (num_input, F)
            y = (mb.labels if mb.labels is not None else self.labels[mb.seeds.cpu()]).to(dev)
            with self.stepper.autocast():
                out = self.model(adjs, x)  # (B, C)
                loss = self.objective.loss(out.float(), y)
            self.stepper.step(loss)
            n = int(y.shape[0])
            total_loss += loss.item() * n
            correct += self.objective.report(out.detach(), y)["acc"] * n
            seen += n
        return {"loss": total_loss / max(seen, 1), "train_acc": correct / max(seen, 1)}

    def block_adjacency(self, block: Block) -> Adjacency:
        """The block's CSR, with the edge values of its edges when training is weighted."""
        values = None if self.edge_values is None else self.edge_values[block.eids]  # (nnz,)
        return Adjacency.from_block(block, values)

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(N, C) float32 on the CPU, by layer-wise full-neighbor inference."""
        self.model.eval()
        with self.stepper.autocast():
            out = self.model.inference(self.adj, self.x, batch_size=self.inference_batch_size,
                                       device=self.stepper.device, progress=self.progress)
        return out.float()


def takes_keyword(fn: Any, name: str) -> bool:
    """Whether callable ``fn`` accepts keyword argument ``name`` (False for None)."""
    if fn is None:
        return False
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return name in params or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                 for p in params.values())
