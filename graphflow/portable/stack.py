r"""Portable twin of :class:`graphflow.nn.stack.GNNStack` in eval mode, in its two input forms.

:class:`FullGraphModel` takes the whole graph, as ``GNNStack.forward(adj, x)`` with one
adjacency: ``forward(x, src, dst, weight)`` with ``x`` (N, F) float32, ``src`` / ``dst``
(E,) int64 and ``weight`` (E,) float32, and returns (N, C) logits.

:class:`BlockModel` takes sampled blocks, as ``GNNStack.forward([adj_0, ..., adj_{L-1}], x)``:
``forward(x, blocks)`` with ``x`` (num_src of block 0, F) and ``blocks`` a list of ``L``
``(src, dst, weight, num_dst)`` tuples, input side first (``num_dst`` a 0-d int64 tensor;
block ``l``'s destinations are the first ``num_dst`` of its sources, and they are block
``l + 1``'s sources). It returns (num_dst of the last block, C).

Each hidden layer is followed by what the stack applies there (:class:`Post`): the skip
connection, the norm and the activation, all torch modules copied from the trained stack.
"""

from __future__ import annotations

from typing import List, Tuple

from torch import Tensor, nn

from graphflow.portable.graph import block_graph, full_graph, gather


class Post(nn.Module):
    """What follows hidden layer ``l``: ``act(norm(out + skip(h_dst)))``; identity for the
    output layer."""

    def __init__(self, skip: nn.Module | None, norm: nn.Module, act: nn.Module):
        super().__init__()
        self.has_skip = skip is not None
        self.skip = skip if skip is not None else nn.Identity()
        self.norm, self.act = norm, act

    def forward(self, out: Tensor, h_dst: Tensor) -> Tensor:
        if self.has_skip:
            out = out + self.skip(h_dst)
        return self.act(self.norm(out))


class FullGraphModel(nn.Module):
    """The whole graph in, every node's logits out: ``(x, src, dst, weight) -> (N, C)``."""

    def __init__(self, layers: list[nn.Module], posts: list[nn.Module], self_loops: bool):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.posts = nn.ModuleList(posts)
        self.self_loops = self_loops

    def forward(self, x: Tensor, src: Tensor, dst: Tensor, weight: Tensor) -> Tensor:
        g = full_graph(x, src, dst, weight, self.self_loops)  # one graph for every layer
        h = x
        for layer, post in zip(self.layers, self.posts):
            h = post(layer(h, g), h)  # (N, d_{l+1})
        return h


class BlockModel(nn.Module):
    """Sampled blocks in, the last block's destinations' logits out:
    ``(x, [(src, dst, weight, num_dst), ...]) -> (num_dst_last, C)``."""

    def __init__(self, layers: list[nn.Module], posts: list[nn.Module], self_loops: bool):
        super().__init__()
        self.layers = nn.ModuleList(layers)
        self.posts = nn.ModuleList(posts)
        self.self_loops = self_loops
        self.num_layers = len(layers)

    def forward(self, x: Tensor, blocks: List[Tuple[Tensor, Tensor, Tensor, Tensor]]) -> Tensor:
        if len(blocks) != self.num_layers:
            raise ValueError(f"the model has {self.num_layers} layers and takes one block per "
                             f"layer, got {len(blocks)}")
        h = x
        i = 0
        for layer, post in zip(self.layers, self.posts):
            src, dst, weight, num_dst = blocks[i]
            g = block_graph(h, src, dst, weight, num_dst, self.self_loops)
            h = post(layer(h, g), gather(h, g.dst_rows))  # (num_dst, d_{l+1})
            i += 1
        return h


class FlatBlockModel(nn.Module):
    """:class:`BlockModel` with flat inputs ``(x, src_0, dst_0, weight_0, num_dst_0, src_1,
    ...)``, the form an ONNX graph takes."""

    def __init__(self, model: BlockModel):
        super().__init__()
        self.model = model

    def forward(self, x: Tensor, *flat: Tensor) -> Tensor:
        blocks = [(flat[i], flat[i + 1], flat[i + 2], flat[i + 3])
                  for i in range(0, len(flat), 4)]
        return self.model(x, blocks)
