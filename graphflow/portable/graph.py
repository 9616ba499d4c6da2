r"""The graph a portable model reads: raw edge lists, turned into per-edge factors with
operations every runtime has (``index_select``, ``scatter_add``, ``rsqrt``), and the one
aggregation of messages along edges that every twin uses (:func:`aggregate`).

A layer's graph arrives as ``src`` (E,) int64, ``dst`` (E,) int64 and ``weight`` (E,) float32:
edge ``k`` sends row ``src[k]`` of the layer's input to destination row ``dst[k]`` with value
``weight[k]`` (ones for an unweighted graph). :func:`full_graph` and :func:`block_graph` add
what graphflow's layer stack adds before its layers see an adjacency, so that the caller passes
raw edges only:

* with ``self_loops``, an edge ``i -> i`` for every destination ``i`` that has none. It is
  appended for *every* destination, with a 0/1 ``count`` that says whether it exists: the edge
  count stays ``E + num_dst`` whatever the data, so the exported graph has no data-dependent
  shapes. An absent loop has weight 0 and counts in no degree;
* the degrees: ``in_deg`` (destinations) and ``out_deg`` (sources) count edges (not weights),
  added loops included, and are clamped to 1, as :meth:`graphflow.sparse.Adjacency.norm`
  computes them.

Shapes: ``x`` (num_src, F); destinations are the first ``num_dst`` rows of ``x`` (the block
convention; the full graph has ``num_dst = num_src = N``).
"""

from __future__ import annotations

from typing import NamedTuple, Optional

import torch
from torch import Tensor


class Edges(NamedTuple):
    """One layer's graph, ready for message passing (every field a tensor)."""

    src: Tensor
    """int64 (E',): source row of each edge (E' = E, plus num_dst with self-loops)."""
    dst: Tensor
    """int64 (E',): destination row of each edge."""
    weight: Tensor
    """float (E',): edge value; 0 for a self-loop slot that holds no loop."""
    count: Tensor
    """float (E',): 1 for an edge that exists, 0 for an empty self-loop slot."""
    in_deg: Tensor
    """float (num_dst,): in-edges of each destination, at least 1."""
    out_deg: Tensor
    """float (num_src,): out-edges of each source, at least 1."""
    dst_rows: Tensor
    """int64 (num_dst,): ``0..num_dst-1``, the rows of ``x`` that are destinations."""
    feat: Tensor
    """float (E', D): each edge's feature vector (zeros for a self-loop slot); (0, 0) for a
    graph passed without edge features."""


def block_graph(x: Tensor, src: Tensor, dst: Tensor, weight: Tensor, num_dst: Tensor,
                self_loops: bool) -> Edges:
    """The :class:`Edges` of a block: ``num_dst`` (0-d int64) destinations, which are the
    first rows of ``x`` (num_src, F)."""
    dst_rows = torch.arange(num_dst, dtype=torch.int64, device=x.device)  # (num_dst,)
    return _edges(x, src, dst, weight, dst_rows, self_loops)


def full_graph(x: Tensor, src: Tensor, dst: Tensor, weight: Tensor, self_loops: bool,
               feat: Optional[Tensor] = None) -> Edges:
    """The :class:`Edges` of a whole graph: every one of the N rows of ``x`` is a
    destination; ``feat`` (E, D) the edges' feature vectors, when the model reads them."""
    dst_rows = torch.arange(x.shape[0], dtype=torch.int64, device=x.device)  # (N,)
    return _edges(x, src, dst, weight, dst_rows, self_loops, feat)


def _edges(x: Tensor, src: Tensor, dst: Tensor, weight: Tensor, dst_rows: Tensor,
           self_loops: bool, feat: Optional[Tensor] = None) -> Edges:
    src, dst = src.to(torch.int64), dst.to(torch.int64)
    weight = weight.to(x.dtype)
    checked = True
    if not torch.jit.is_scripting():
        checked = not torch.onnx.is_in_onnx_export()  # ONNX Runtime's Gather checks them
    if checked:
        _check_ids(src, x.shape[0], "src")
        _check_ids(dst, dst_rows.shape[0], "dst")
    count = torch.ones_like(weight)  # (E,)
    if feat is None:
        feat = torch.zeros(0, 0, dtype=x.dtype, device=x.device)
    else:
        feat = feat.to(x.dtype)
        if checked and feat.shape[0] != src.shape[0]:
            raise ValueError("edge_feat holds " + str(feat.shape[0]) + " rows for "
                             + str(src.shape[0]) + " edges: give one row per edge")
    if self_loops:
        # has_loop[i] > 0 when some edge i -> i exists; the slot of i is then left empty.
        is_loop = (src == dst).to(x.dtype)  # (E,)
        has_loop = torch.zeros_like(dst_rows, dtype=x.dtype).scatter_add(0, dst, is_loop)
        slot = (has_loop == 0).to(x.dtype)  # (num_dst,) 1 where a loop is added
        src = torch.cat([src, dst_rows])
        dst = torch.cat([dst, dst_rows])
        weight = torch.cat([weight, slot])
        count = torch.cat([count, slot])  # (E + num_dst,)
        if feat.shape[0] > 0:  # a loop slot carries zeros
            feat = torch.cat([feat, torch.zeros(dst_rows.shape[0], feat.shape[1],
                                                dtype=feat.dtype, device=feat.device)])
    in_deg = torch.zeros_like(dst_rows, dtype=x.dtype).scatter_add(0, dst, count)
    out_deg = torch.zeros_like(x[:, 0]).scatter_add(0, src, count)  # (num_src,)
    return Edges(src, dst, weight * count, count, in_deg.clamp(min=1.0),
                 out_deg.clamp(min=1.0), dst_rows, feat)


def _check_ids(ids: Tensor, bound: int, name: str) -> None:
    """Ids out of ``[0, bound)`` raise a ``ValueError`` (the sparse product does not check)."""
    if ids.numel() > 0 and (bool(ids.min() < 0) or bool(ids.max() >= bound)):
        raise ValueError(name + " holds ids outside [0, " + str(bound) + "): they must be rows "
                         "of x (src) or destination rows 0..num_dst-1 (dst)")


def gather(h: Tensor, rows: Tensor) -> Tensor:
    """``h[rows]`` as one ``index_select`` (ONNX Gather): (R, *) rows of ``h``."""
    return h.index_select(0, rows)


def aggregate(h: Tensor, g: Edges, values: Tensor) -> Tensor:
    r"""``out_i = sum_k values_k h_{src_k}`` over the edges ``k`` into ``i``.

    In torch and TorchScript: one product with the (num_dst, num_src) sparse COO matrix of the
    edges (``torch.sparse.mm``, duplicates summed). In an ONNX export, a segment sum that
    ONNX Runtime runs fast (:func:`_segment_aggregate`).

    :param h: (num_src, F). :param values: (E',) per-edge factors.
    :returns: (num_dst, F).
    """
    if not torch.jit.is_scripting():
        if torch.onnx.is_in_onnx_export():
            return _segment_aggregate(h, g, values)
        return _sparse_aggregate(h, g, values, check=False)
    adj = torch.sparse_coo_tensor(torch.stack([g.dst, g.src]), values,
                                  [g.dst_rows.shape[0], h.shape[0]])  # (num_dst, num_src)
    return torch.sparse.mm(adj, h)


def edge_sum(messages: Tensor, g: Edges) -> Tensor:
    """``out_i = sum_k messages_k`` over the edges ``k`` into ``i``: (E', F) per-edge messages
    (GINE's) -> (num_dst, F). ``scatter_add`` in torch and TorchScript; in an ONNX export the
    segment sum of :func:`aggregate`."""
    if not torch.jit.is_scripting():
        if torch.onnx.is_in_onnx_export():
            return _segment_sum(messages, g)
    index = g.dst.unsqueeze(1).expand(-1, messages.shape[1])
    out = torch.zeros(g.dst_rows.shape[0], messages.shape[1], dtype=messages.dtype,
                      device=messages.device)
    return out.scatter_add(0, index, messages)


@torch.jit.unused
def _segment_aggregate(h: Tensor, g: Edges, values: Tensor) -> Tensor:
    """The ONNX form of :func:`aggregate`: the messages sorted by destination (TopK), their
    running sum in float64 (CumSum), and each destination's sum as the difference of the
    running sums at its segment's ends.

    ONNX Runtime 1.32 runs ScatterElements with ``reduction="add"`` element by element, about
    6x slower than this on a 200k-edge graph; its ScatterND with ``reduction="add"`` is fast
    but loses updates to repeated indices with more than one thread. In float64 the
    differences lose nothing that float32 results would show.
    """
    order = torch.sort(g.dst)[1]  # (E',) edges grouped by destination
    messages = gather(h, gather(g.src, order)) * gather(values, order).unsqueeze(1)
    return _sorted_segment_sum(messages, g)


@torch.jit.unused
def _segment_sum(messages: Tensor, g: Edges) -> Tensor:
    """Per-edge messages (E', F) summed by destination with ONNX operators (see
    :func:`_segment_aggregate`)."""
    order = torch.sort(g.dst)[1]  # (E',) edges grouped by destination
    return _sorted_segment_sum(gather(messages, order), g)


@torch.jit.unused
def _sorted_segment_sum(messages: Tensor, g: Edges) -> Tensor:
    """The sums by destination of messages already sorted by destination."""
    running = messages.double().cumsum(0)  # (E', F)
    running = torch.cat([torch.zeros_like(running[:1]), running])  # (E' + 1, F)
    counts = torch.zeros_like(g.dst_rows).scatter_add(0, g.dst, torch.ones_like(g.dst))
    ends = torch.cat([torch.zeros_like(counts[:1]), counts.cumsum(0)])  # (num_dst + 1,)
    out = gather(running, ends[1:]) - gather(running, ends[:-1])  # (num_dst, F)
    return out.to(messages.dtype)


@torch.jit.unused
def _sparse_aggregate(h: Tensor, g: Edges, values: Tensor, check: bool) -> Tensor:
    adj = torch.sparse_coo_tensor(torch.stack([g.dst, g.src]), values,
                                  (g.dst_rows.shape[0], h.shape[0]),
                                  check_invariants=check)  # (num_dst, num_src)
    return torch.sparse.mm(adj, h)


