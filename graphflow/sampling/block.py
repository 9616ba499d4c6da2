"""Message-flow blocks and minibatches: the one contract between samplers and layers.

A :class:`Block` is a bipartite graph from ``num_src`` source nodes to ``num_dst``
destination nodes, stored as CSR over destination rows, so ``out = A @ x_src`` aggregates
into destinations. The destination nodes are the first ``num_dst`` source nodes (DGL's
convention), which lets a layer read ``x_src[:num_dst]`` as the destinations' own features.

A :class:`MiniBatch` holds one block per layer, input side first::

    input_nodes --blocks[0]--> ... --blocks[-1]--> seeds
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.sparse.indexed_rows import IndexedRows


@dataclass
class Block:
    """One layer of a sampled message-flow graph.

    :ivar src_nodes: int64 (num_src,) global ids; ``src_nodes[:num_dst]`` are the dst nodes.
    :ivar num_dst: number of destination nodes.
    :ivar indptr: int64 (num_dst + 1,) CSR row pointers over destinations.
    :ivar indices: int64 (nnz,) local source index of each edge, in ``[0, num_src)``.
    :ivar eids: int64 (nnz,) id of each edge in the original graph.
    """

    src_nodes: torch.Tensor
    num_dst: int
    indptr: torch.Tensor
    indices: torch.Tensor
    eids: torch.Tensor

    @property
    def num_src(self) -> int:
        return int(self.src_nodes.shape[0])

    @property
    def num_edges(self) -> int:
        return int(self.indices.shape[0])

    @property
    def dst_nodes(self) -> torch.Tensor:
        return self.src_nodes[: self.num_dst]

    @property
    def device(self) -> torch.device:
        return self.indices.device

    def dst_local(self) -> torch.Tensor:
        """int64 (nnz,) local destination index of each edge (CSR rows expanded to COO)."""
        counts = self.indptr[1:] - self.indptr[:-1]
        return torch.repeat_interleave(
            torch.arange(self.num_dst, device=self.indptr.device), counts,
            output_size=self.num_edges)

    def to(self, device: torch.device | str, non_blocking: bool = False) -> Block:
        def mv(t: torch.Tensor) -> torch.Tensor:
            return t.to(device, non_blocking=non_blocking)

        return Block(mv(self.src_nodes), self.num_dst, mv(self.indptr), mv(self.indices),
                     mv(self.eids))

    def __repr__(self) -> str:
        return (f"Block(num_src={self.num_src}, num_dst={self.num_dst}, "
                f"num_edges={self.num_edges}, device={self.device})")


@dataclass
class MiniBatch:
    """What a neighbor sampler returns for one batch of seeds.

    :ivar seeds: int64 (B,) global ids of the output nodes (= ``blocks[-1].dst_nodes``).
    :ivar input_nodes: int64 (num_input,) global ids whose features feed ``blocks[0]``.
    :ivar blocks: one :class:`Block` per layer, input side first.
    :ivar features: (num_input, F) features of ``input_nodes`` on the output device, or None;
        :class:`~graphflow.sparse.indexed_rows.IndexedRows` when the consumer asked for them
        (``iterate(..., rows=True)``).
    :ivar labels: (B,) or (B, C) labels of ``seeds`` on the output device, or None.
    """

    seeds: torch.Tensor
    input_nodes: torch.Tensor
    blocks: list[Block]
    features: torch.Tensor | IndexedRows | None = None
    labels: torch.Tensor | None = None

    def to(self, device: torch.device | str, non_blocking: bool = False) -> MiniBatch:
        def mv(t: torch.Tensor | None) -> torch.Tensor | None:
            return None if t is None else t.to(device, non_blocking=non_blocking)

        return MiniBatch(mv(self.seeds), mv(self.input_nodes),
                         [b.to(device, non_blocking) for b in self.blocks],
                         mv(self.features), mv(self.labels))
