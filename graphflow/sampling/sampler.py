"""The minibatch sampler contract: options, ``prepare``, ``sample`` and ``iterate``.

Every neighbor sampler (``neighbor``, ``dgl_neighbor``) derives from
:class:`MinibatchSampler` and only says how to build its graph structure and how to sample
blocks; seed checks, devices, feature gathering, batching and prefetching live here.

How a training task uses one (``ctx.sampler`` / ``ctx.sampler_graph`` after the sample
stage)::

    sampler, graph = ctx.sampler, ctx.sampler_graph       # graph = sampler.prepare(data, device)
    sampler.check_layers(num_layers)                      # one fanout per layer, or ConfigError
    for mb in sampler.iterate(graph, train_ids, ctx.rng): # shuffled, batched, prefetched
        h = model(mb.blocks, mb.features)                 # blocks input side first
        loss = loss_fn(h, mb.labels)                      # labels of mb.seeds
    one = sampler.sample(graph, seeds, generator)         # a single MiniBatch

``iterate(graph, seeds, generator)`` takes seed ids (int64 (S,)) or a bool mask (N,) on the
CPU, shuffles them with ``generator`` (a CPU ``torch.Generator``, e.g. ``ctx.rng``) when
``shuffle``, splits them into ``batch_size`` batches (``drop_last`` drops a short last one),
and yields one :class:`~graphflow.sampling.block.MiniBatch` per batch, sampled ahead by
``workers`` background threads (each up to ``prefetch`` batches ahead; ``prefetch = 0``
samples inline). It draws exactly one number from ``generator`` besides the shuffle (the
seed of the batches' own generators, one per batch, on the sampling device), so the same
generator state gives the same batches with or without prefetching, with any number of
workers.
``num_batches(S)`` says how many batches that is (for progress bars).

Everything in a yielded ``MiniBatch`` is on ``output_device``: blocks, ``seeds``,
``input_nodes``, ``features`` (``feat[input_nodes]``, float (num_input, F)) and ``labels``
(``label[seeds]``); ``features`` / ``labels`` are None when the graph has no ``feat`` /
``label``.

``iterate(..., rows=True)`` is for a model that takes
:class:`~graphflow.sparse.indexed_rows.IndexedRows` (``accepts_rows``): when the batch is sampled in
the training thread (no workers) and the features are on the CPU output device, ``features``
is then ``IndexedRows(feat, input_nodes)`` and the first layer reads the table directly
instead of a gathered copy (on the sampling benchmark's batches the gather took 2.4-2.7 ms
of 44). Background workers gather as before: there the copy is made off the training thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import torch

from graphflow.components import Sampler
from graphflow.runtime.device import resolve_device
from graphflow.errors import ConfigError, DeviceError
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow.sampling import native
from graphflow.sampling.block import Block, MiniBatch
from graphflow.sampling.feature_store import FeatureStore, Placement
from graphflow.sampling.prefetch import prefetch
from graphflow.sampling.seeds import check_seeds, num_batches, seed_batches, seed_ids
from graphflow.sparse.indexed_rows import IndexedRows

DEFAULT_WORKERS = 2
"""Background workers of ``iterate()`` when neither the option nor the caller says."""


@dataclass
class NeighborOptions:
    """Options of the neighbor samplers (``[sample]``)."""

    fanouts: list[int] = option([10, 10], "Neighbors sampled per node, one per layer, input "
                                "side first (as DGL); -1 takes every in-neighbor.")
    replace: bool = option(False, "Sample with replacement.")
    weight: str | None = option(None, "Edge data name for weight-proportional sampling "
                                "(weights >= 0; 0 is never sampled). Default: uniform.")
    batch_size: int = option(1024, "Seed nodes per minibatch.")
    shuffle: bool = option(True, "Shuffle the seeds each time iterate() is called.")
    drop_last: bool = option(False, "Drop a last batch smaller than batch_size.")
    device: str | None = option(None, 'Where the graph structure lives and sampling runs: '
                                '"cpu", "cuda", "cuda:N". Default: the run\'s device.')
    output_device: str | None = option(None, "Where minibatches (blocks, features, labels) "
                                       "are delivered. Default: the run's device.")
    features: Placement = option("auto", 'Where node features live between batches: "device" '
                                 '(copied to the output device once), "pinned" (host, staged '
                                 'through pinned memory), "cpu", or "auto" (device if they take '
                                 'at most half the free GPU memory, else pinned).')
    prefetch: int = option(1, "Batches each background worker prepares ahead (0: sample in "
                           "the training loop's thread, no workers).")
    workers: int | None = option(
        None, "Background threads sampling batches for iterate(), each on its own batches "
              "(one core each); the batches are the same for any number of workers. Default: "
              "the run's core policy (graphflow.runtime.cores: inline on fewer than 4 cores), "
              f"{DEFAULT_WORKERS} when iterate() is called outside a run.")
    threads: int = option(1, "CPU threads of each background worker's sampling and gathering "
                          "(0: torch's setting): one leaves the other cores to training. Sampled "
                          "inline (no workers), the compiled picks and the gather use the "
                          "training thread's threads, whose cores would otherwise idle.")

    def __post_init__(self) -> None:
        if not self.fanouts:
            raise ValueError("fanouts = []: give one fanout per layer, e.g. [10, 10]")
        bad = [f for f in self.fanouts if f == 0 or f < -1]
        if bad:
            raise ValueError(f"fanouts = {self.fanouts}: each fanout must be > 0, or -1 for "
                             f"every neighbor (got {bad[0]})")
        if self.batch_size <= 0:
            raise ValueError(f"batch_size = {self.batch_size}: must be > 0")
        if self.prefetch < 0:
            raise ValueError(f"prefetch = {self.prefetch}: must be >= 0")
        if self.workers is not None and self.workers < 1:
            raise ValueError(f"workers = {self.workers}: must be >= 1 (prefetch = 0 samples "
                             f"without background threads)")
        if self.threads < 0:
            raise ValueError(f"threads = {self.threads}: must be >= 0")


@dataclass
class SampledGraph:
    """What :meth:`MinibatchSampler.prepare` returns (``ctx.sampler_graph``).

    :ivar structure: the sampler's graph structure on ``device`` (a CSC, a DGLGraph...).
    :ivar store: node features and labels, gathered per batch onto ``output_device``.
    :ivar num_nodes: N.
    :ivar device: the sampling device.
    :ivar output_device: where minibatches are delivered.
    """

    structure: Any
    store: FeatureStore
    num_nodes: int
    device: torch.device
    output_device: torch.device


class MinibatchSampler(Sampler):
    """Base of the neighbor samplers: seeds -> :class:`MiniBatch` (see the module docstring).

    Subclasses implement :meth:`build` (the structure, once) and :meth:`sample_blocks`.
    """

    Options = NeighborOptions
    excludes_edges: bool = False
    """Whether :meth:`sample_blocks` takes ``exclude`` (edge ids no block may contain), which
    edge-seeded sampling (:mod:`graphflow.sampling.edges`) needs."""

    # --- what a subclass provides ---------------------------------------------------------

    def sampling_device(self, run_device: torch.device) -> torch.device:
        """The device sampling runs on: the ``device`` option, else the run's device."""
        return resolve_device(self.options.device) if self.options.device else run_device

    def build(self, data: GraphData, device: torch.device) -> Any:
        """The graph structure that :meth:`sample_blocks` reads, on ``device``."""
        raise NotImplementedError

    def sample_blocks(self, structure: Any, seeds: torch.Tensor,
                      generator: torch.Generator | None) -> list[Block]:
        """One block per fanout around ``seeds`` (int64 (B,) on the sampling device).

        A sampler with ``excludes_edges = True`` also takes ``exclude=`` int64 edge ids that
        no block may contain.
        """
        raise NotImplementedError

    # --- the contract ---------------------------------------------------------------------

    @property
    def num_layers(self) -> int:
        return len(self.options.fanouts)

    def check_layers(self, num_layers: int, *, what: str = "the model") -> None:
        """Raise ``ConfigError`` unless there is one fanout per layer of ``what``."""
        if num_layers != self.num_layers:
            raise ConfigError(
                f"fanouts = {self.options.fanouts} has {self.num_layers} entries but {what} "
                f"has {num_layers} message-passing layers; give one fanout per layer")

    def prepare(self, data: GraphData, device: torch.device) -> SampledGraph:
        """Build the structure on the sampling device and place features (once per run)."""
        sdev = self.sampling_device(torch.device(device))
        odev = resolve_device(self.options.output_device) if self.options.output_device \
            else torch.device(device)
        g = data.graph
        store = FeatureStore(g.ndata.get("feat"), g.ndata.get("label"), odev,
                             self.options.features)
        return SampledGraph(structure=self.build(data, sdev), store=store,
                            num_nodes=data.num_nodes, device=sdev, output_device=odev)

    def sample(self, graph: SampledGraph, seeds: torch.Tensor,
               generator: torch.Generator | None = None) -> MiniBatch:
        """One minibatch around ``seeds`` (B,), everything on the output device.

        :param graph: what :meth:`prepare` returned.
        :param seeds: distinct node ids, on the CPU or the sampling device.
        :param generator: random source on the sampling device (None: torch's default).
        """
        return self._sample(self._check_graph(graph), seeds, generator, self.options.threads)

    def _sample(self, graph: SampledGraph, seeds: torch.Tensor,
                generator: torch.Generator | None, gather_threads: int,
                rows: bool = False) -> MiniBatch:
        """:meth:`sample`, gathering the features with ``gather_threads`` (0: the caller's),
        or, with ``rows`` where the store allows it, leaving them as ``IndexedRows``.

        Sampled inline (no workers), the gather runs on the training thread's own threads:
        a random row gather is memory-bound and two threads took it from 4.5-6.7 to 2.8-4.0
        ms a batch (83k rows of 100 floats from a 1M-node table, this 2-core machine;
        ``benchmarks/batch_parts.py``)."""
        if generator is not None and generator.device.type != graph.device.type:
            raise DeviceError(f"the generator is on {generator.device} but sampling runs on "
                              f"{graph.device}; pass torch.Generator(device="
                              f"{str(graph.device)!r})")
        # The compiled picks run on the gather's threads: a worker's own, or inline the
        # training thread's, whose cores would otherwise idle while the batch is sampled.
        kernel_threads = gather_threads or torch.get_num_threads()
        with intra_op_threads(self.options.threads), native.threads(kernel_threads):
            seeds = check_seeds(seeds, graph.num_nodes, graph.device)  # (B,)
            blocks = self.sample_blocks(graph.structure, seeds, generator)
        input_nodes = blocks[0].src_nodes  # (num_input,)
        table = graph.store.local_table() if rows else None
        with intra_op_threads(gather_threads):
            features, labels = graph.store.gather(input_nodes, seeds, features=table is None)
        if table is not None:
            features = IndexedRows(table, input_nodes)
        out = graph.output_device
        nb = out.type == "cuda"
        return MiniBatch(seeds=seeds.to(out, non_blocking=nb),
                         input_nodes=input_nodes.to(out, non_blocking=nb),
                         blocks=[b.to(out, non_blocking=nb) for b in blocks],
                         features=features, labels=labels)

    def num_batches(self, num_seeds: int) -> int:
        """How many minibatches :meth:`iterate` yields for ``num_seeds`` seeds."""
        return num_batches(num_seeds, self.options.batch_size, drop_last=self.options.drop_last)

    def iterate(self, graph: SampledGraph, seeds: torch.Tensor,
                generator: torch.Generator | None = None, *,
                workers: int | None = None, rows: bool = False) -> Iterator[MiniBatch]:
        """Shuffled, batched, prefetched minibatches over ``seeds`` (see the module docstring).

        :param graph: what :meth:`prepare` returned.
        :param seeds: int64 (S,) node ids or a bool mask (N,).
        :param generator: a CPU generator for the shuffle and the sampling seed.
        :param workers: background workers (0: sample in the caller's thread); default the
            ``workers`` option, else :data:`DEFAULT_WORKERS`. A training task passes its core
            plan's (``ctx.cores.workers``). The batches are the same either way.
        :param rows: the consumer takes ``IndexedRows`` features (see the module docstring);
            used only when sampling inline.
        """
        graph = self._check_graph(graph)
        o = self.options
        ids = seed_ids(seeds, graph.num_nodes)
        batches = seed_batches(ids, o.batch_size, shuffle=o.shuffle, drop_last=o.drop_last,
                               generator=generator)
        # One generator per batch, seeded from one draw: a batch's sample does not depend on
        # which worker makes it or when.
        draw = int(torch.randint(2**62, (1,), generator=generator))
        batch_seeds = torch.randint(2**62, (len(batches),),
                                    generator=torch.Generator().manual_seed(draw)).tolist()

        workers = self.num_workers(workers)
        gather = gather_threads(o, workers)
        lazy = rows and (workers == 0 or o.prefetch <= 0)  # a worker's gather is off-thread

        def produce(item: tuple[int, torch.Tensor]) -> MiniBatch:
            gen = torch.Generator(device=graph.device).manual_seed(batch_seeds[item[0]])
            return self._sample(graph, item[1], gen, gather, lazy)

        stream_device = graph.output_device if graph.output_device.type == "cuda" \
            else graph.device  # the side stream sits where the batch's last copies go
        return prefetch(produce, list(enumerate(batches)), depth=o.prefetch,
                        workers=workers, device=stream_device)

    def num_workers(self, planned: int | None = None) -> int:
        """Background threads of :meth:`iterate` (0: sample in the caller's thread, as
        ``prefetch = 0`` does too): ``planned`` when given, else the ``workers`` option,
        else :data:`DEFAULT_WORKERS`."""
        if planned is not None:
            return planned
        return self.options.workers if self.options.workers is not None else DEFAULT_WORKERS

    def _check_graph(self, graph: Any) -> SampledGraph:
        if not isinstance(graph, SampledGraph):
            raise ConfigError(f"{self.name} sampler: sample() needs what prepare() returned "
                              f"(ctx.sampler_graph), got {type(graph).__name__}")
        return graph


def gather_threads(options: NeighborOptions, workers: int) -> int:
    """Intra-op threads of a batch's feature gather in ``iterate``: the sampler's ``threads``
    in a background worker, the training thread's own (0: unchanged) when sampling inline,
    where the other cores would otherwise idle during the gather."""
    return options.threads if workers > 0 and options.prefetch > 0 else 0


@contextmanager
def intra_op_threads(threads: int) -> Iterator[None]:
    """Run the block with ``threads`` torch CPU threads (0: unchanged), then restore.

    ``torch.set_num_threads`` applies to the calling thread only (OpenMP's per-thread
    setting), so a prefetch thread and the training thread keep their own.
    """
    if threads <= 0:
        yield
        return
    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)
