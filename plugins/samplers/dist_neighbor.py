"""The ``dist_neighbor`` sampler: neighbor sampling through DistDGL's servers.

Under ``graphflow launch`` each trainer reads a partitioned graph through
``dgl.distributed.DistGraph``: DGL's ``NeighborSampler`` asks every machine's server for the
neighbors of the seeds it owns (``DistGraph.sample_neighbors``, as DGL's
``DistNodeDataLoader`` does), node features and labels are read from the servers'
``DistTensor``\\ s, and each batch comes back as a graphflow
:class:`~graphflow.sampling.block.MiniBatch`: every graphflow model trains on it unchanged.
Node ids are DGL's partitioned ids (those of ``graphflow partition`` and the ``partitioned``
loader).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Sampler
from graphflow.errors import ConfigError
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.sampler import MinibatchSampler
from graphflow.sampling.seeds import num_batches, seed_batches, seed_ids
from graphflow_plugins.samplers.dgl_neighbor import from_dgl_block

DIST_GRAPH = "dist_graph"  # GraphData.meta key the partitioned loader sets under launch


@dataclass
class DistNeighborOptions:
    fanouts: list[int] = option([10, 10], "Neighbors sampled per node, one per layer, input "
                                "side first (as DGL); -1 takes every in-neighbor.")
    replace: bool = option(False, "Sample with replacement.")
    batch_size: int = option(1024, "Seed nodes per minibatch (per trainer).")
    shuffle: bool = option(True, "Shuffle the seeds each epoch.")
    drop_last: bool = option(False, "Drop a last batch smaller than batch_size.")

    def __post_init__(self) -> None:
        if not self.fanouts or any(f == 0 or f < -1 for f in self.fanouts):
            raise ValueError(f"fanouts = {self.fanouts}: give one fanout per layer, each > 0 "
                             f"or -1 for every neighbor")
        if self.batch_size <= 0:
            raise ValueError(f"batch_size = {self.batch_size}: must be > 0")


@dataclass
class DistSampledGraph:
    """What :meth:`DistNeighborSampler.prepare` returns (``ctx.sampler_graph``).

    :ivar graph: the ``dgl.distributed.DistGraph``.
    :ivar num_nodes: N (all machines).
    :ivar feature_dim: width F of ``feat``.
    :ivar local_nodes: int64 ids of the nodes this trainer's machine owns.
    """

    graph: Any
    num_nodes: int
    feature_dim: int
    local_nodes: torch.Tensor


class DistNeighborSampler(Sampler):
    """DGL's ``NeighborSampler`` on a ``DistGraph`` (``graphflow launch`` only).

    ``remote = True`` tells a task that features and labels live on the servers (each
    :class:`MiniBatch` carries those of its nodes) and that it trains on this trainer's own
    nodes (see :mod:`graphflow.distributed.dist_train`).
    """

    name = "dist_neighbor"
    summary = "Neighbor sampling through DistDGL's servers (graphflow launch)"
    Options = DistNeighborOptions
    remote = True

    # One fanout per layer, checked as the other neighbor samplers do.
    num_layers = MinibatchSampler.num_layers
    check_layers = MinibatchSampler.check_layers

    def prepare(self, data: GraphData, device: torch.device) -> DistSampledGraph:
        g = data.meta.get(DIST_GRAPH)
        if g is None:
            raise ConfigError('[sample] dist_neighbor samples through DistDGL servers: load the '
                              'graph with [load] type = "partitioned" and start the run with '
                              'graphflow launch PIPELINE --ip-config IP.txt --trainers T')
        if "feat" not in g.ndata:
            raise ConfigError(f'[sample] dist_neighbor: the partitioned graph '
                              f'{data.name!r} has no node data "feat"')
        gpb = g.get_partition_book()
        local = torch.nonzero(gpb.nid2partid(torch.arange(g.num_nodes())) == gpb.partid)
        self._fanouts = list(self.options.fanouts)
        self._dgl = dgl.dataloading.NeighborSampler(self._fanouts, replace=self.options.replace)
        return DistSampledGraph(graph=g, num_nodes=int(g.num_nodes()),
                                feature_dim=int(g.ndata["feat"].shape[1]),
                                local_nodes=local.squeeze(1))

    def sample(self, graph: DistSampledGraph, seeds: torch.Tensor,
               fanouts: list[int] | None = None) -> MiniBatch:
        """One minibatch around ``seeds`` (B,) with its features and labels, on the CPU;
        ``fanouts`` overrides the option (inference samples every neighbor: ``[-1, ...]``)."""
        g = graph.graph
        sampler = self._dgl if fanouts is None else \
            dgl.dataloading.NeighborSampler(fanouts, replace=False)
        input_nodes, _, blocks = sampler.sample_blocks(g, seeds.long())
        out = [from_dgl_block(b) for b in blocks]
        labels = g.ndata["label"][seeds] if "label" in g.ndata else None
        return MiniBatch(seeds=seeds.long(), input_nodes=input_nodes, blocks=out,
                         features=g.ndata["feat"][input_nodes].float(), labels=labels)

    def num_batches(self, num_seeds: int) -> int:
        return num_batches(num_seeds, self.options.batch_size, drop_last=self.options.drop_last)

    def iterate(self, graph: DistSampledGraph, seeds: torch.Tensor,
                generator: torch.Generator | None = None, *,
                workers: int | None = None) -> Iterator[MiniBatch]:
        """Shuffled (with ``generator``) batches of ``seeds``, sampled in this thread."""
        o = self.options
        ids = seed_ids(seeds, graph.num_nodes)
        for batch in seed_batches(ids, o.batch_size, shuffle=o.shuffle, drop_last=o.drop_last,
                                  generator=generator):
            yield self.sample(graph, batch)
