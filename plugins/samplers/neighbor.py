"""The ``neighbor`` sampler: graphflow's vectorised neighbor sampler, on any device."""

from __future__ import annotations

import torch

from graphflow.graph import GraphData
from graphflow.sampling.block import Block
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.neighbor import sample_blocks
from graphflow.sampling.sampler import MinibatchSampler


class NeighborSampler(MinibatchSampler):
    """Uniform or weighted neighbor sampling (GraphSAGE), vectorised in torch on CPU or GPU.

    ``prepare`` builds the in-neighbor CSC (indptr, indices, edge ids, optional weights and
    their running sum) on the sampling device once. Each batch samples ``fanouts[-1]``
    in-neighbors of every seed, then ``fanouts[-2]`` of every node reached, and so on,
    with no Python loop over seeds or edges (Floyd's algorithm for distinct draws; see
    ``graphflow.sampling.per_row``). A minibatch holds one block per layer, input side first;
    each block's source nodes start with its destination nodes.

    Deterministic for a given generator on the CPU. ``iterate()`` prefetches batches in a
    background thread (a side CUDA stream on the GPU). See docs/sampling.md.
    """

    name = "neighbor"
    summary = "Vectorised neighbor sampler (uniform or weighted) on CPU or GPU, prefetched"

    def build(self, data: GraphData, device: torch.device) -> CSCGraph:
        return CSCGraph.from_dgl(data.graph, weight=self.options.weight, device=device)

    excludes_edges = True

    def sample_blocks(self, structure: CSCGraph, seeds: torch.Tensor,
                      generator: torch.Generator | None,
                      exclude: torch.Tensor | None = None) -> list[Block]:
        return sample_blocks(structure, seeds, self.options.fanouts,
                             replace=self.options.replace, generator=generator,
                             exclude=exclude)
