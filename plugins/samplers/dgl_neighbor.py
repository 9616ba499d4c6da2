"""The ``dgl_neighbor`` sampler: DGL's C++ ``NeighborSampler`` behind graphflow's contract.

It is the reference for parity tests and benchmarks of ``neighbor``: the same options, the
same :class:`~graphflow.sampling.block.MiniBatch`, DGL's sampling underneath.
"""

from __future__ import annotations

import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DeviceError
from graphflow.graph import GraphData
from graphflow.sampling.block import Block
from graphflow.sampling.csc import edge_weights
from graphflow.sampling.sampler import MinibatchSampler

WEIGHT = "_graphflow_weight"


class DGLNeighborSampler(MinibatchSampler):
    """DGL's ``dgl.dataloading.NeighborSampler`` (C++, CPU), returning graphflow minibatches.

    The reference implementation for ``neighbor``: same options, same output contract. DGL
    from PyPI is CPU-only, so sampling always runs on the CPU (``device`` may only be
    ``"cpu"``); minibatches still go to ``output_device``. DGL draws from its own global
    random state, which is re-seeded from the given generator before every batch. That
    state lives in the OpenMP threads of whichever thread calls DGL, and batches sampled in
    a background thread differed from run to run, so ``iterate()`` samples in the caller's
    thread (as DGL's own ``DataLoader`` does by default) whatever ``prefetch`` and
    ``workers`` say; DGL's C++ uses every OpenMP thread within a batch instead.
    """

    name = "dgl_neighbor"
    summary = "DGL's C++ NeighborSampler behind the same contract (reference, CPU only)"

    def sampling_device(self, run_device: torch.device) -> torch.device:
        if self.options.device not in (None, "cpu"):
            raise DeviceError(f'device = "{self.options.device}": dgl_neighbor samples on the '
                              f'CPU only (DGL from PyPI has no CUDA); use device = "cpu" or the '
                              f'"neighbor" sampler')
        return torch.device("cpu")

    def num_workers(self, planned: int | None = None) -> int:
        return 0  # reproducible only in the caller's thread (see the class docstring)

    def build(self, data: GraphData, device: torch.device) -> dgl.DGLGraph:
        src, dst = data.graph.edges()
        g = dgl.graph((src, dst), num_nodes=data.num_nodes)  # structure only, same edge ids
        if self.options.weight is not None:
            g.edata[WEIGHT] = edge_weights(data.graph, self.options.weight)
        g.create_formats_()
        self._dgl_sampler = dgl.dataloading.NeighborSampler(
            list(self.options.fanouts), replace=self.options.replace,
            prob=WEIGHT if self.options.weight is not None else None)
        return g

    excludes_edges = True

    def sample_blocks(self, structure: dgl.DGLGraph, seeds: torch.Tensor,
                      generator: torch.Generator | None,
                      exclude: torch.Tensor | None = None) -> list[Block]:
        if generator is not None:
            dgl.seed(int(torch.randint(2**31, (1,), generator=generator)))
        _, _, blocks = self._dgl_sampler.sample_blocks(structure, seeds, exclude_eids=exclude)
        return [from_dgl_block(b) for b in blocks]


def from_dgl_block(block: dgl.DGLGraph) -> Block:
    """A DGL message-flow block as a graphflow :class:`Block` (CSR over destinations)."""
    indptr, indices, local_eids = block.adj_tensors("csc")  # in-edges grouped by dst
    return Block(src_nodes=block.srcdata[dgl.NID], num_dst=block.num_dst_nodes(),
                 indptr=indptr, indices=indices, eids=block.edata[dgl.EID][local_eids])
