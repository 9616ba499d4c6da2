r"""A stack of message-passing layers, trained on a full graph or on sampled blocks, with
layer-wise full-neighbor inference.

Each layer ``l`` (for ``l = 0..L-1``) computes, on its adjacency :math:`A_l`,

.. math::
    H^{(l+1)} = \begin{cases}
      \sigma\big(\mathrm{norm}(\mathrm{conv}_l(A_l, \mathrm{drop}(H^{(l)}))
                 + \mathrm{skip}_l(H^{(l)}_{\mathrm{dst}}))\big) & l < L - 1 \\
      \mathrm{conv}_l(A_l, \mathrm{drop}(H^{(l)})) & l = L - 1
    \end{cases}

with :math:`H^{(0)} = X`, dropout on the input of every layer (the layout of Kipf & Welling's
GCN and Veličković et al.'s GAT: the input features are dropped too; with ``dropout_at =
"output"`` on every layer's output instead, after its norm and activation, the last layer's
output included, as OGB's molecule GNNs), an optional norm
(``batch`` or ``layer``), the activation :math:`\sigma` and, with ``residual``, a skip
connection around each hidden layer (identity when the widths agree, else a linear
projection). The output layer returns raw scores (logits).

``forward(adj, x)`` takes one :class:`~graphflow.sparse.Adjacency` (the full graph, used by
every layer) or a list of them, one per layer, input side first (from a
:class:`~graphflow.sampling.block.MiniBatch`: ``[Adjacency.from_block(b) for b in
mb.blocks]``). A layer sees ``x`` with ``num_src`` rows and returns ``num_dst`` rows; the
destination nodes are the first ``num_dst`` source nodes.

:meth:`GNNStack.inference` computes the same output as ``forward(adj, x)`` in eval mode,
layer by layer over all nodes in batches of destination nodes (DGL's layer-wise inference),
so that memory holds one layer's output on the CPU and one batch on the device, and nothing is
sampled.

Shapes: ``x`` (num_src, in_dim) -> (num_dst of the last adjacency, out_dim).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Literal

import torch
from torch import nn

from graphflow.errors import ConfigError, DataError
from graphflow.sparse import Adjacency
from graphflow.sparse.features import Features, dropout, linear, to_dense
from graphflow.sparse.indexed_rows import materialize

Activation = Literal["relu", "elu", "gelu", "leaky_relu", "prelu", "silu", "tanh", "sigmoid",
                     "none"]
Norm = Literal["none", "batch", "layer"]

ACTIVATIONS: dict[str, Callable[[], nn.Module]] = {
    "relu": nn.ReLU,
    "elu": nn.ELU,
    "gelu": nn.GELU,
    "leaky_relu": lambda: nn.LeakyReLU(0.2),
    "prelu": nn.PReLU,
    "silu": nn.SiLU,
    "tanh": nn.Tanh,
    "sigmoid": nn.Sigmoid,
    "none": nn.Identity,
}


IN_PLACE: dict[str, Callable[[], nn.Module]] = {
    "relu": lambda: nn.ReLU(inplace=True),
    "leaky_relu": lambda: nn.LeakyReLU(0.2, inplace=True),
}
"""Activations that can overwrite their input: their backward reads only their output."""


def make_activation(name: str, inplace: bool = False) -> nn.Module:
    """The activation module called ``name`` (see :data:`ACTIVATIONS`); with ``inplace``, the
    in-place form where there is one (:data:`IN_PLACE`)."""
    if name not in ACTIVATIONS:
        raise ConfigError(f'unknown activation "{name}"; choices: {", ".join(ACTIVATIONS)}')
    return IN_PLACE[name]() if inplace and name in IN_PLACE else ACTIVATIONS[name]()


def make_norm(name: str, dim: int) -> nn.Module:
    """``BatchNorm1d`` / ``LayerNorm`` over ``dim`` features, or identity for ``"none"``."""
    if name == "batch":
        return nn.BatchNorm1d(dim)
    if name == "layer":
        return nn.LayerNorm(dim)
    if name == "none":
        return nn.Identity()
    raise ConfigError(f'unknown norm "{name}"; choices: none, batch, layer')


class GNNStack(nn.Module):
    r"""Message-passing layers with dropout, norm, activation and skip connections.

    :param layers: ``L`` modules, each ``forward(adj, x) -> (adj.num_dst, dims[l + 1])``.
    :param dims: ``L + 1`` widths: the input, each layer's output (the last is ``out_dim``).
    :param activation: applied after every hidden layer (default ``relu``).
    :param dropout: dropout on the input of every hidden and output layer (default 0.5).
    :param input_dropout: dropout on the input features (default: ``dropout``, or none with
        ``dropout_at = "output"``).
    :param dropout_at: ``"input"`` (default): ``dropout`` on the input of every layer but the
        first, ``input_dropout`` on the first's; ``"output"``: ``dropout`` on every layer's
        output, after its norm and activation (OGB's molecule GNNs: ``F.dropout(h)`` after
        each layer, the last one's included), ``input_dropout`` (default 0) on the features.
    :param norm: ``none`` | ``batch`` | ``layer`` after every hidden layer.
    :param residual: skip connections around the hidden layers.
    :param self_loops: add a self-loop to every destination that has none before the layers
        see an adjacency (GCN's :math:`\hat{A} = A + I`; cached on a reused full graph).
    """

    def __init__(self, layers: Sequence[nn.Module], dims: Sequence[int], *,
                 activation: str = "relu", dropout: float = 0.5,
                 input_dropout: float | None = None, norm: str = "none",
                 residual: bool = False, self_loops: bool = False, dropout_at: str = "input"):
        super().__init__()
        if dropout_at not in ("input", "output"):
            raise ConfigError(f'unknown dropout placement "{dropout_at}"; choices: input, output')
        if len(layers) == 0 or len(dims) != len(layers) + 1:
            raise ValueError(f"{len(layers)} layers need {len(layers) + 1} widths, got "
                             f"{list(dims)}")
        make_activation(activation)  # unknown names fail even without hidden layers
        make_norm(norm, 1)
        self.layers = nn.ModuleList(layers)
        self.dims = [int(d) for d in dims]
        hidden = range(len(layers) - 1)
        self.norms = nn.ModuleList(make_norm(norm, self.dims[i + 1]) for i in hidden)
        # In place where the activation's input is a tensor no autograd node saved: a norm's
        # or a skip sum's output, or the output of a layer that says so (``fresh_output``).
        # That skips a (num_dst, d) allocation and pass per hidden layer (relu on a sampled
        # batch's 16k x 256 first layer: ~0.9 ms of a 45 ms step, benchmarks/sampling.py).
        self.acts = nn.ModuleList(
            make_activation(activation, inplace=norm != "none" or residual
                            or getattr(layers[i], "fresh_output", False))
            for i in hidden)
        self.residual = residual
        self.skips = nn.ModuleList(
            nn.Identity() if self.dims[i] == self.dims[i + 1]
            else nn.Linear(self.dims[i], self.dims[i + 1], bias=False)
            for i in (hidden if residual else ()))
        if dropout_at == "input":  # the rate on each layer's input, and on its output
            first = dropout if input_dropout is None else input_dropout
            self.drops = [first] + [dropout] * (len(layers) - 1)
            self.out_drops = [0.0] * len(layers)
        else:
            self.drops = [input_dropout or 0.0] + [0.0] * (len(layers) - 1)
            self.out_drops = [dropout] * len(layers)
        self.dropout_at = dropout_at
        self.self_loops = self_loops

    @property
    def num_layers(self) -> int:
        return len(self.layers)

    @property
    def accepts_rows(self) -> bool:
        """Whether :meth:`forward` takes :class:`~graphflow.sparse.indexed_rows.IndexedRows` input
        without gathering it first: when the first layer does (``accepts_rows``)."""
        return bool(getattr(self.layers[0], "accepts_rows", False))

    @property
    def in_dim(self) -> int:
        return self.dims[0]

    @property
    def out_dim(self) -> int:
        return self.dims[-1]

    def forward(self, adj: Adjacency | Sequence[Adjacency], x: Features) -> torch.Tensor:
        """``x`` (num_src, in_dim) -> (num_dst, out_dim) through every layer.

        ``x`` may be a :class:`~graphflow.sparse.SparseFeatures` (first layer only).
        """
        adjs = [self.prepare(a) for a in self._per_layer(adj)]
        h = x if self.accepts_rows else materialize(x)
        for i, a in enumerate(adjs):
            h = self.layer(i, a, h)
        return h

    def layer_outputs(self, adj: Adjacency | Sequence[Adjacency],
                      x: Features) -> list[torch.Tensor]:
        """Every layer's output, the input first: ``[x, h_1, ..., h_L]`` (widths ``dims``).

        The optional per-layer contract that graph readouts use (the GIN paper reads out
        every layer); the last entry equals :meth:`forward`'s output.
        """
        adjs = [self.prepare(a) for a in self._per_layer(adj)]
        h = x if self.accepts_rows else materialize(x)
        outs = [to_dense(h)]
        for i, a in enumerate(adjs):
            h = self.layer(i, a, h)
            outs.append(h)
        return outs

    def prepare(self, adj: Adjacency) -> Adjacency:
        """The adjacency the layers see: ``adj`` with self-loops when the stack adds them."""
        return add_self_loops(adj) if self.self_loops else adj

    def layer(self, i: int, adj: Adjacency, h: Features) -> torch.Tensor:
        """Layer ``i`` (on a prepared ``adj``) with its dropout, skip, norm and activation.

        (num_src, d_i) -> (num_dst, d_{i+1}).
        """
        p = self.drops[i]
        x = dropout(h, p, self.training) if p > 0 and self.training else h  # same object at 0
        out = self.layers[i](adj, x)  # (num_dst, d_{i+1})
        if i < self.num_layers - 1:
            if self.residual:
                skip, h_dst = self.skips[i], h[: adj.num_dst]  # (num_dst, d_i)
                out = out + (linear(h_dst, skip.weight) if isinstance(skip, nn.Linear)
                             else to_dense(h_dst))
            out = self.acts[i](self.norms[i](out))
        q = self.out_drops[i]  # dropout_at = "output"
        return dropout(out, q, self.training) if q > 0 and self.training else out

    @torch.no_grad()
    def inference(self, adj: Adjacency, x: torch.Tensor, *, batch_size: int,
                  device: torch.device | str | None = None,
                  progress: Callable[..., object] | None = None,
                  layers: int | None = None) -> torch.Tensor:
        """``forward(adj, x)`` in eval mode, computed layer by layer in destination batches.

        :param adj: the full graph (square), on any device; rows are sliced on its device.
        :param x: (N, in_dim) features, on any device (usually the CPU).
        :param batch_size: destination nodes per batch.
        :param device: where each batch is computed (default: ``x``'s device).
        :param progress: optional ``progress(iterable, desc=..., total=...)`` wrapper.
        :param layers: stop after this many layers (default: all); ``num_layers - 1`` gives
            the last hidden layer's output, the input of the output layer.
        :returns: (N, out_dim) on ``x``'s device ((N, dims[layers]) with ``layers``).
        """
        if adj.num_src != adj.num_dst:
            raise DataError(f"layer-wise inference needs the full (square) graph, got "
                            f"{adj.num_dst} x {adj.num_src}")
        if batch_size < 1:
            raise ConfigError(f"inference batch size must be >= 1, got {batch_size}")
        was_training = self.training
        self.eval()
        store = x.device
        device = torch.device(device) if device is not None else store
        adj = self.prepare(adj)  # loops first, so that the batches inherit their degrees
        n = adj.num_dst
        starts = range(0, n, batch_size)
        h = x
        try:
            for i in range(self.num_layers if layers is None else layers):
                out = None
                batches = starts if progress is None else progress(
                    starts, desc=f"inference layer {i + 1}/{self.num_layers}", total=len(starts))
                for start in batches:
                    stop = min(n, start + batch_size)
                    sub, src = row_block(adj, start, stop)  # (B, S), (S,)
                    hs = h[src.to(store)].to(device)  # (S, d_i)
                    part = self.layer(i, sub.to(device), hs).to(store)  # (B, d_{i+1})
                    if out is None:
                        out = part.new_empty((n, *part.shape[1:]))
                    out[start:stop] = part
                h = out if out is not None else h.new_empty((0, self.dims[i + 1]))
        finally:
            self.train(was_training)
        return h

    def extra_repr(self) -> str:
        drops = self.drops if self.dropout_at == "input" else \
            f"{self.drops} (input), {self.out_drops} (output)"
        return (f"dims={self.dims}, dropout={drops}, residual={self.residual}, "
                f"self_loops={self.self_loops}")

    def _per_layer(self, adj: Adjacency | Sequence[Adjacency]) -> list[Adjacency]:
        if isinstance(adj, Adjacency):
            return [adj] * self.num_layers
        adjs = list(adj)
        if len(adjs) != self.num_layers:
            raise ConfigError(f"the model has {self.num_layers} layers but got {len(adjs)} "
                              f"blocks; the sampler's fanouts must list one entry per layer")
        return adjs


def row_block(adj: Adjacency, start: int, stop: int) -> tuple[Adjacency, torch.Tensor]:
    """Rows ``start..stop-1`` of a square ``adj`` as a block with every in-edge.

    The block's destinations are nodes ``start..stop-1`` (local ids ``0..B-1``); its sources
    are those nodes followed by their other in-neighbors. Degrees are the full graph's, so a
    layer normalises exactly as it does on ``adj`` (a node's out-degree counts all its edges,
    not only those into this batch).

    :returns: the block adjacency (B, S) and ``src`` int64 (S,), the global id of each source.
    """
    lo, hi = int(adj.indptr[start]), int(adj.indptr[stop])
    b = stop - start
    dev = adj.device
    dst = torch.arange(start, stop, device=dev)  # (B,)
    nbr = adj.indices[lo:hi]  # (nnz_b,) global source ids
    uniq, inv = torch.unique(torch.cat([dst, nbr]), return_inverse=True)  # (U,), (B + nnz_b,)
    is_dst = torch.zeros(uniq.shape[0], dtype=torch.bool, device=dev)
    is_dst[inv[:b]] = True
    local = torch.empty(uniq.shape[0], dtype=torch.int64, device=dev)  # uniq index -> local id
    local[inv[:b]] = torch.arange(b, device=dev)
    others = (~is_dst).nonzero().squeeze(1)  # (U - B,)
    local[others] = b + torch.arange(others.shape[0], device=dev)
    src = torch.empty_like(uniq)
    src[local] = uniq  # (S,) global id of each local source
    values = None if adj.values is None else adj.values[lo:hi]
    sub = Adjacency(adj.indptr[start:stop + 1] - lo, local[inv[b:]], adj.eids[lo:hi],
                    num_src=src.shape[0], num_dst=b, values=values)
    _inherit_degrees(sub, adj, src, start, stop)
    return sub, src


def add_self_loops(adj: Adjacency) -> Adjacency:
    """``adj`` plus an entry ``i -> i`` for every destination ``i`` that has none.

    Destination ``i`` is source ``i`` (the block convention), so this works for the full graph
    and for blocks alike. New entries have value 1 (when ``adj`` is weighted) and edge id -1.
    The result is cached on ``adj``, so a full graph reused every epoch pays once.
    """
    def build() -> Adjacency:
        rows, cols = adj.row_index, adj.indices  # (nnz,), (nnz,)
        has_loop = torch.zeros(adj.num_dst, dtype=torch.bool, device=adj.device)
        has_loop[rows[rows == cols]] = True
        loops = (~has_loop).nonzero().squeeze(1)  # (L,)
        if loops.numel() == 0:
            return adj
        values = None
        if adj.values is not None:
            values = torch.cat([adj.values, adj.values.new_ones(loops.shape[0])])
        out = Adjacency.from_edges(torch.cat([cols, loops]), torch.cat([rows, loops]),
                                   adj.num_src, adj.num_dst, values=values)
        eids = torch.cat([adj.eids, torch.full_like(loops, -1)])  # (nnz + L,) input order
        out.eids = eids[out.eids]
        return out

    return adj.cached("self_loops", build)  # type: ignore[return-value]


def _inherit_degrees(sub: Adjacency, full: Adjacency, src: torch.Tensor, start: int,
                     stop: int) -> None:
    """Give ``sub`` the full graph's degrees of its nodes (its rows hold every in-edge, but
    its sources only some of their out-edges)."""
    out_deg = full.out_degrees()[src]  # (S,)
    sub.cached("out_deg", lambda: out_deg)
    sub.cached("in_deg", lambda: full.in_degrees()[start:stop])
