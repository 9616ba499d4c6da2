"""The inputs of an exported model, built from graphflow's own graph types: for callers that
still have graphflow (tests, a Python service that samples with graphflow and runs ONNX)."""

from __future__ import annotations

from collections.abc import Sequence

import torch

from graphflow.sampling.block import Block
from graphflow.sparse import Adjacency


def full_inputs(adj: Adjacency, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    """``(x, src, dst, weight)`` of a square adjacency (its values, else ones)."""
    weight = adj.values if adj.values is not None else adj.ones()
    return (x.float(), adj.indices.long(), adj.row_index.long(), weight.float())


def block_inputs(blocks: Sequence[Block], x: torch.Tensor,
                 edge_values: torch.Tensor | None = None) -> tuple[torch.Tensor, ...]:
    """``(x, src_0, dst_0, weight_0, num_dst_0, ...)`` of sampled blocks, input side first.

    :param x: (num_src of block 0, F) features of ``blocks[0].src_nodes``.
    :param edge_values: the graph's (E,) edge values, looked up by each block's edge ids;
        None for ones.
    """
    flat: list[torch.Tensor] = [x.float()]
    for b in blocks:
        weight = torch.ones(b.num_edges, device=b.device) if edge_values is None \
            else edge_values[b.eids].float()
        flat += [b.indices.long(), b.dst_local().long(), weight,
                 torch.tensor(b.num_dst, dtype=torch.int64)]
    return tuple(flat)
