"""First- and second-order random walks (DeepWalk, Node2Vec): the law, and the vectorised torch
steps that advance all walkers at once (GPUs; on the CPU :func:`random_walks` runs the compiled
kernels of :mod:`graphflow.walks.native`, which draw the same law).

Node2Vec (Grover & Leskovec, KDD 2016) walks from ``v`` (having come from ``t``) to a neighbor
``x`` of ``v`` with probability proportional to :math:`\\alpha_{pq}(t, x) \\, w_{vx}`:

.. math::

    \\alpha_{pq}(t, x) = \\begin{cases}
        1/p & \\text{if } x = t \\\\
        1   & \\text{if } (t, x) \\in E \\\\
        1/q & \\text{otherwise.}
    \\end{cases}

The step is drawn by rejection sampling (KnightKing, Yang et al. SOSP 2019): propose an edge
of ``v`` uniformly (or by weight), draw a height ``y ~ U[0, h)`` with
:math:`h = \\max(1, 1/q)`, accept when :math:`y < \\alpha`. When :math:`1/p > h` the return edge
does not fit under that envelope; as in KnightKing it is an *outlier*: the extra area
:math:`(1/p - h)\\,w_{vt}` is added to the proposal and a draw that lands there returns to
``t`` at once. Heights below :math:`\\min(1, 1/q)` accept without looking at the graph; only
the band in between asks the :class:`~graphflow.walks.edgeset.EdgeSet` whether
``(t, x)`` is an edge. The torch steps loop over walk steps and rejection rounds, never over
walkers.

``p = q = 1`` (and DeepWalk) takes the first-order path: one draw per step, no rejection.

Walks are int64 ``(B, length + 1)`` tensors: the start node then ``length`` steps. A walker at
a node without out-edges (or with zero out-weight) stops; the rest of its row is ``-1``.
"""

from __future__ import annotations

import torch

from graphflow.walks import native
from graphflow.walks.csr import WalkGraph

PAD = -1
"""Padding after a walk stopped early."""

MIN_TRIALS = 4096
"""Proposals per rejection round at least (when few walkers are left, each draws several)."""
MAX_TRIALS = 64
"""Proposals per walker and round at most."""
FIRST_TRIALS = {"cpu": 1, "cuda": 8}
"""Proposals per walker in a step's first rejection round, by device type. On the CPU the
work is what counts: one proposal each, more only for the few walkers left. On a GPU a round
costs about the same whatever its size (kernel launches and the synchronising ``nonzero``),
so the walkers draw 8 each up front: with an acceptance of 1/4 (``q = 4`` on a sparse graph)
a step takes two or three rounds instead of dozens."""


def random_walks(graph: WalkGraph, starts: torch.Tensor, length: int, *, p: float = 1.0,
                 q: float = 1.0, generator: torch.Generator | None = None,
                 compiled: bool | None = None) -> torch.Tensor:
    """Walk ``length`` steps from each of ``starts``.

    On the CPU the compiled kernels of :mod:`graphflow.walks.native` run the walks (the same
    law, their own random stream, on the calling thread's
    :func:`graphflow.sampling.native.threads`); elsewhere the vectorised torch steps below.

    :param graph: the CSR on the walk device (the torch path calls
        :meth:`WalkGraph.with_edge_set` when the walk is biased).
    :param starts: int64 (B,) start nodes on ``graph.device``.
    :param length: number of steps; the result has ``length + 1`` columns.
    :param p: return parameter (``1/p`` weighs going back to the previous node).
    :param q: in-out parameter (``1/q`` weighs moving away from the previous node).
    :param generator: a ``torch.Generator`` on ``graph.device``; the same seed gives the same
        walks on the CPU.
    :param compiled: force the compiled (True) or the torch (False) path; default: compiled
        wherever :func:`graphflow.walks.native.supports` the graph.
    :returns: int64 (B, length + 1), ``-1`` after a dead end.
    """
    if p <= 0 or q <= 0:
        raise ValueError(f"node2vec needs p > 0 and q > 0, got p={p}, q={q}")
    device = graph.device
    starts = starts.to(device=device, dtype=torch.int64)
    if compiled is None:
        compiled = native.supports(graph)
    if compiled:
        return native.random_walks(graph, starts, length, p, q, generator)
    b = starts.numel()
    cols = torch.full((length + 1, b), PAD, dtype=torch.int64, device=device)  # (L+1, B)
    cols[0] = starts
    biased = not (p == 1.0 and q == 1.0)
    if biased:
        graph.with_edge_set()
    walker = torch.arange(b, device=device)  # (W,) ids of walkers still moving
    cur = starts  # (W,)
    prev: torch.Tensor | None = None
    for step in range(1, length + 1):
        if prev is None or not biased:
            nxt = first_order_step(graph, cur, generator)
        else:
            nxt = second_order_step(graph, prev, cur, p, q, generator)
        moving = nxt >= 0
        if not bool(moving.all()):
            walker, cur, nxt = walker[moving], cur[moving], nxt[moving]
        cols[step].index_copy_(0, walker, nxt)
        if walker.numel() == 0:
            break
        prev, cur = cur, nxt
    return cols.t().contiguous()


def _uniform(n: int, generator: torch.Generator | None, device: torch.device) -> torch.Tensor:
    return torch.rand(n, generator=generator, device=device, dtype=torch.float64)


Rows = tuple[torch.Tensor, torch.Tensor, torch.Tensor | None, torch.Tensor]


def _rows(graph: WalkGraph, cur: torch.Tensor) -> Rows:
    """``(start, count, base, total)`` of the CSR rows of ``cur`` (int64 (W,)).

    :returns: ``start`` int64 (W,) first edge of each row; ``count`` int64 (W,) row lengths;
        ``base`` float64 (W,) ``cumweight[start]``, or None when unweighted; ``total`` float64
        (W,) row out-strengths (the out-degree when unweighted).
    """
    start = graph.indptr.index_select(0, cur)  # (W,)
    count = graph.indptr.index_select(0, cur + 1) - start  # (W,)
    if graph.cumweight is None:
        return start, count, None, count.double()
    base = graph.cumweight.index_select(0, start)
    return start, count, base, graph.cumweight.index_select(0, start + count) - base


def _by_weight(graph: WalkGraph, target: torch.Tensor, start: torch.Tensor,
               count: torch.Tensor) -> torch.Tensor:
    """int64 (T,) edge positions whose weight interval holds ``target`` (float64 (T,)).

    One ``searchsorted`` over the global ``cumweight``, clamped into ``[start, start + count)``
    against float ties at a row's ends and zero-weight edges.
    """
    pos = torch.searchsorted(graph.cumweight, target, right=True) - 1
    return torch.maximum(torch.minimum(pos, start + count - 1), start)


def _propose(graph: WalkGraph, start: torch.Tensor, count: torch.Tensor, base: torch.Tensor | None,
             total: torch.Tensor, generator: torch.Generator | None) -> torch.Tensor:
    """One out-edge position per walker: uniform in ``[start, start + count)`` or by weight.

    :param start: int64 (W,) first edge of each row. :param count: int64 (W,) row lengths (> 0).
    :param base: float64 (W,) ``cumweight[start]`` for weighted graphs.
    :param total: float64 (W,) row out-strengths (> 0).
    :returns: int64 (W,) edge positions.
    """
    r = _uniform(start.numel(), generator, start.device)  # (W,)
    if base is None:
        offset = (r * count).long()  # floor; r < 1
        return start + torch.minimum(offset, count - 1)
    return _by_weight(graph, base + r * total, start, count)  # a point inside the row's interval


def first_order_step(graph: WalkGraph, cur: torch.Tensor,
                     generator: torch.Generator | None) -> torch.Tensor:
    """One uniform (or weight-proportional) step from each of ``cur``: int64 (W,), -1 at dead ends."""
    start, count, base, total = _rows(graph, cur)
    live = total > 0  # (W,) walkers with somewhere to go
    if graph.num_edges == 0:
        return torch.full_like(cur, PAD)
    pos = _propose(graph, start, count.clamp(min=1), base, total, generator)
    pos = torch.where(live, pos, torch.zeros_like(pos))  # dead rows read edge 0, masked below
    nxt = graph.indices.index_select(0, pos)
    return torch.where(live, nxt, torch.full_like(nxt, PAD))


def second_order_step(graph: WalkGraph, prev: torch.Tensor, cur: torch.Tensor, p: float, q: float,
                      generator: torch.Generator | None, first: int | None = None) -> torch.Tensor:
    """One Node2Vec step from ``cur`` having come from ``prev`` (both int64 (W,)).

    Rejection sampling with the outlier return edge (see the module docstring). For an
    unweighted graph one float64 draw per round gives the outlier test, the edge and the
    height: ``v = (u - outlier) / h`` is uniform on ``[0, deg)``, its integer part picks the
    edge and ``h * frac(v)`` is the height, independent of the edge.

    :param first: proposals per walker in the first round (default: :data:`FIRST_TRIALS` of
        the device); the law of the step does not depend on it, the random stream does.
    :returns: int64 (W,) next nodes, -1 at dead ends.
    """
    device = cur.device
    if first is None:
        first = FIRST_TRIALS.get(device.type, 1)
    n = graph.num_nodes
    height = max(1.0, 1.0 / q)  # envelope of the non-return edges
    ret_in = min(1.0 / p, height)  # part of the return edge under the envelope
    ret_out = max(1.0 / p - height, 0.0)  # outlier height above it
    sure = min(1.0, 1.0 / q)  # below this a non-return candidate is accepted unseen
    start, count, base, total = _rows(graph, cur)
    outlier = torch.zeros_like(total)  # (W,) extra area of the return edge(s)
    if ret_out > 0:  # weight of the edges cur -> prev (their multiplicity when unweighted)
        _, w_back = graph.edges.lookup(cur * n + prev)
        outlier = ret_out * w_back.double()
    area = height * total + outlier  # (W,) proposal area
    out = torch.full_like(cur, PAD)
    pending = (total > 0).nonzero().squeeze(1)  # (P,) walkers still drawing
    budget = max(pending.numel() * first, MIN_TRIALS)  # trials per round
    while pending.numel():
        # As walkers accept, the rest draw several i.i.d. proposals each in one round and keep
        # their first accepted one: the same law as drawing them one after the other, without
        # a long tail of nearly empty rounds.
        k = min(MAX_TRIALS, max(1, budget // pending.numel()))
        walker = pending.repeat_interleave(k) if k > 1 else pending  # (P*k,)
        t = walker.numel()
        c_start = start.index_select(0, walker)
        c_count = count.index_select(0, walker)
        c_prev = prev.index_select(0, walker)
        c_out = outlier.index_select(0, walker)
        u = _uniform(t, generator, device) * area.index_select(0, walker)
        back = u < c_out  # landed in the outlier: return to prev
        v = (u - c_out).clamp(min=0) / height  # (T,) uniform on [0, total)
        if base is not None:
            pos = _by_weight(graph, base.index_select(0, walker) + v, c_start, c_count)
            y = _uniform(t, generator, device) * height
        else:
            offset = v.long()  # floor
            y = (v - offset) * height
            pos = c_start + torch.minimum(offset, c_count - 1)
        cand = graph.indices.index_select(0, pos)  # (T,)
        is_ret = cand == c_prev
        accept = torch.where(is_ret, y < ret_in, y < sure) | back
        if sure < height:  # the band [sure, height): adjacency to prev decides
            asked = (~accept & ~is_ret).nonzero().squeeze(1)
            if asked.numel():
                key = c_prev.index_select(0, asked) * n + cand.index_select(0, asked)
                adjacent = graph.edges.contains(key)
                # q > 1: band [1/q, 1) accepts neighbors of prev; q < 1: band [1, 1/q) others.
                accept.index_copy_(0, asked, adjacent if q > 1 else ~adjacent)
        cand = torch.where(back, c_prev, cand)
        if k > 1:
            accept = accept.view(-1, k)  # (P, k) trials of each pending walker, in order
            first = accept.to(torch.int8).argmax(1, keepdim=True)  # first accepted trial
            cand = cand.view(-1, k).gather(1, first).squeeze(1)
            accept = accept.any(1)
        out.index_copy_(0, pending, torch.where(accept, cand, PAD))
        pending = pending.index_select(0, (~accept).nonzero().squeeze(1))
    return out
