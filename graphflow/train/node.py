"""Node classification passes: full-batch or minibatch training on one :class:`Step`.

* :class:`FullBatch`: every epoch is one step on the whole graph (one :class:`Adjacency`
  built once on the device, features moved once).
* :class:`MiniBatches`: every epoch steps on the sampler's minibatches over the shuffled
  training nodes (one block per layer).

Both follow the pass protocol of :mod:`graphflow.train.step` (``train_epoch(epoch) ->
figures``, ``logits() -> (N, C)``: eval mode, every node, full neighborhoods, by a full-graph
forward or layer-wise inference in batches), step with :class:`~graphflow.train.step.Step`
(precision, clipping) and take their loss and figures from
:class:`~graphflow.train.objective.Objective` (``classes`` or ``multilabel``). ``Objective``
stays importable from here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.sampling.block import Block, MiniBatch
from graphflow.sparse import Adjacency
from graphflow.sparse.features import Features
from graphflow.sparse.indexed_rows import IndexedRows
from graphflow.train.objective import Objective
from graphflow.train.step import Step, Tally

Progress = Callable[..., Any]


class FullBatch:
    """Full-graph training: the adjacency, features and labels live on the device."""

    def __init__(self, model: nn.Module, step: Step, objective: Objective,
                 adj: Adjacency, x: Features, labels: torch.Tensor, train_ids: torch.Tensor,
                 *, inference_batch_size: int = 0, progress: Progress | None = None):
        dev = step.device
        self.model, self.step, self.objective = model, step, objective
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
        with self.step.autocast():
            out = self.forward()[self.train_ids]  # (n_train, C)
            loss = self.objective.loss(out, self.labels[self.train_ids])
        self.step.step(loss)
        return {"loss": loss.item(),
                "train_acc": self.objective.accuracy(out.detach(), self.labels[self.train_ids])}

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(N, C) float32 on the device: eval mode, every node, full neighborhoods."""
        self.model.eval()
        with self.step.autocast():
            if self.inference_batch_size > 0:
                out = self.model.inference(self.adj, self.x, batch_size=self.inference_batch_size,
                                           device=self.step.device, progress=self.progress)
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

    def __init__(self, model: nn.Module, step: Step, objective: Objective,
                 adj: Adjacency, x: Features, labels: torch.Tensor, train_ids: torch.Tensor,
                 *, sampler: Any, graph: Any, generator: torch.Generator,
                 use_sampled_features: bool, inference_batch_size: int,
                 edge_values: torch.Tensor | None = None, progress: Progress | None = None,
                 workers: int | None = None):
        self.model, self.step, self.objective = model, step, objective
        self.workers = workers  # sampling workers of iterate() (the stage's core plan)
        # (E,) per input edge, looked up by each block's edge ids, on the device once.
        self.edge_values = None if edge_values is None else edge_values.to(step.device)
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

    def inputs(self, mb: MiniBatch) -> tuple[list[Adjacency], Features, torch.Tensor]:
        """The batch's block adjacencies, input rows and seed labels on the device."""
        dev = self.step.device
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
        return adjs, x, y

    def forward(self, adjs: Any, x: Any) -> torch.Tensor:
        """The model's (B, C) output rows for the batch's seeds."""
        return self.model(adjs, x)

    def train_epoch(self, epoch: int) -> dict[str, float]:
        """One step per minibatch; the mean ``loss`` and ``train_acc`` over the seeds."""
        self.model.train()
        tally = Tally()
        for mb in self.batches():
            adjs, x, y = self.inputs(mb)
            with self.step.autocast():
                out = self.forward(adjs, x)  # (B, C)
                loss = self.objective.loss(out, y)
            self.step.step(loss)
            tally.add(int(y.shape[0]), loss=loss.item(),
                      train_acc=self.objective.accuracy(out.detach(), y))
        return tally.means()

    def block_adjacency(self, block: Block) -> Adjacency:
        """The block's CSR, with the edge values of its edges when training is weighted."""
        values = None if self.edge_values is None else self.edge_values[block.eids]  # (nnz,)
        return Adjacency.from_block(block, values)

    @torch.no_grad()
    def logits(self) -> torch.Tensor:
        """(N, C) float32 on the CPU, by layer-wise full-neighbor inference."""
        self.model.eval()
        with self.step.autocast():
            out = self.model.inference(self.adj, self.x, batch_size=self.inference_batch_size,
                                       device=self.step.device, progress=self.progress)
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
