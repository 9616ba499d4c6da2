"""``spmm(adj, x, values, reduce)``: the single sparse dispatch point of graphflow.

Forward ``Y = A @ X``; backward ``dX = A^T @ dY`` through the transposed CSR that the
:class:`~graphflow.sparse.Adjacency` caches, and, when the edge values require grad,
``dA = (dY @ X^T)`` sampled at A's nonzeros only (an SDDMM, chunked so that memory stays
O(chunk * F), never N x N).

``reduce="mean"`` is ``D^{-1} A X`` with ``D`` the destinations' in-degrees (edges counted,
0 counted as 1), as PyG's ``spmm(reduce="mean")`` and DGL's ``fn.mean``: the kernel sums and
the (num_dst, F) result is scaled by row, and the backward scales ``dY`` by row before the
transposed product, so no (nnz,) array of normalised values is built per adjacency (on a
sampled batch that array cost more than the SpMM it fed).

Both products run one kernel, :func:`csr_matmul` (``embedding_bag`` in sum mode with
per-sample weights: a CSR SpMM, which measured fastest on the CPU, see ``docs/sparse.md``).
The same torch calls run on the CPU and on CUDA, so layers never choose kernels.
"""

from __future__ import annotations

import math
from typing import Literal, NamedTuple

import torch
import torch.nn.functional as F

from graphflow.errors import DataError, DeviceError
from graphflow.sparse.adjacency import Adjacency, _same_device
from graphflow.sparse.indexed_rows import IndexedRows

SDDMM_CHUNK_ELEMENTS = 1 << 24  # per chunk of the value gradient: edges * features

Reduce = Literal["sum", "mean"]
REDUCES: tuple[str, ...] = ("sum", "mean")


def spmm(adj: Adjacency, x: torch.Tensor, values: torch.Tensor | None = None,
         reduce: Reduce = "sum") -> torch.Tensor:
    """``A @ x`` with ``A``'s entries ``values`` (CSR order), or :attr:`Adjacency.values`, or 1.

    Shapes:

    * ``x`` (num_src, F) or (num_src, *feature dims), ``values`` (nnz,) -> (num_dst, *same);
    * multi-head: ``x`` (num_src, H, F) and ``values`` (nnz, H) -> (num_dst, H, F), each head
      aggregated with its own values (attention).

    ``reduce``: ``"sum"`` (default), or ``"mean"``: each destination's sum divided by its
    in-degree (a destination without in-edges gets 0); with ``values``, the mean of the
    weighted messages ``1/deg_i * sum_j a_ij x_j``.

    ``x`` may be :class:`~graphflow.sparse.indexed_rows.IndexedRows` (``table[index]`` not gathered):
    the product then reads the table's rows directly (:func:`_spmm_rows`).

    Gradients flow to ``x`` and to ``values`` when they require grad.
    """
    values = _check(adj, x, values, reduce)
    if isinstance(x, IndexedRows):
        return _spmm_rows(adj, x, values, reduce)
    scale = mean_scale(adj, x.dtype) if reduce == "mean" else None
    if values is None or values.dim() == 1:
        flat = x.reshape(adj.num_src, math.prod(x.shape[1:]))  # (num_src, F)
        out = _SpMM.apply(adj, values, flat, scale)  # (num_dst, F)
        # No view when x is 2-D: callers may add a bias in place to a fresh output.
        return out if x.dim() == 2 else out.reshape((adj.num_dst,) + tuple(x.shape[1:]))
    if values.dim() == 2 and values.shape[0] == adj.nnz and x.dim() >= 2 \
            and x.shape[1] == values.shape[1]:
        heads = values.shape[1]
        flat = x.reshape(adj.num_src, heads, math.prod(x.shape[2:]))  # (num_src, H, F)
        out = _SpMM.apply(adj, values, flat, scale)  # (num_dst, H, F)
        return out if x.dim() == 3 else out.reshape((adj.num_dst,) + tuple(x.shape[1:]))
    raise DataError(f"spmm values must have shape ({adj.nnz},) or ({adj.nnz}, H) with x of "
                    f"shape (num_src, H, ...); got values {tuple(values.shape)} and x "
                    f"{tuple(x.shape)}")


def _check(adj: Adjacency, x: torch.Tensor | IndexedRows, values: torch.Tensor | None,
           reduce: str) -> torch.Tensor | None:
    """:func:`spmm`'s argument checks (one line each); returns the checked values."""
    if not isinstance(x, (torch.Tensor, IndexedRows)):
        raise DataError(f"spmm needs a dense tensor, got {type(x).__name__}; sparse input "
                        f"features go through graphflow.sparse.features.linear")
    if not _same_device(x.device, adj.device):
        raise DeviceError(f"features are on {x.device} but the adjacency is on {adj.device}; "
                          f"move one of them with .to(...)")
    if x.dim() == 0 or x.shape[0] != adj.num_src:
        raise DataError(f"features have {x.shape[0] if x.dim() else 0} rows but the adjacency "
                        f"has {adj.num_src} source nodes")
    if reduce not in REDUCES:
        raise DataError(f'spmm reduce must be one of {REDUCES}, got "{reduce}"')
    return _check_values(adj, x.dtype, values)


def spmm_cat(adj: Adjacency, x: torch.Tensor, values: torch.Tensor | None = None,
             reduce: Reduce = "sum", *, ones: bool = False) -> torch.Tensor:
    """``[x[:num_dst] | A @ x]``: the destinations' own rows beside their aggregate,
    (num_dst, 2 F), for layers that transform both in one product (SAGE). With ``ones``, a
    column of ones follows, ``[x[:num_dst] | A @ x | 1]`` (num_dst, 2 F + 1): a product with
    ``[W_self | W_neigh | b]`` then adds the bias itself, and the bias's gradient comes out
    of the weight gradient's product instead of a pass of its own.

    The same as ``torch.cat([x[:adj.num_dst], spmm(adj, x, values, reduce)], 1)``, but its backward
    is one transposed SpMM into a fresh (num_src, F) gradient to which the destinations'
    rows are added in place. Written as slice + cat + spmm, autograd zero-fills a (num_src,
    F) tensor for the slice's gradient and adds it to the SpMM's out of place: three more
    passes over (num_src, F) (16 MB each for a 16k x 256 layer of a sampled batch). Edge
    values that require grad take that general path. The forward writes the destinations'
    rows (gathered straight from the table for :class:`IndexedRows`) into the left half of
    one (num_dst, 2 F) buffer and the aggregate into the right half, its mean scaling doing
    the copy: no concatenation pass. The floats are those of the slice + spmm + cat.
    """
    rows = isinstance(x, IndexedRows)
    general = _rows_need_grad(x, values) if rows else (
        not isinstance(x, torch.Tensor) or x.dim() != 2
        or (values is not None and (values.requires_grad or values.dim() != 1)))
    if general:
        own = x[: adj.num_dst].materialize() if rows else x[: adj.num_dst]
        parts = [own, spmm(adj, x, values, reduce)]
        return torch.cat(parts + [own.new_ones(adj.num_dst, 1)] if ones else parts, 1)
    checked = _check(adj, x, values, reduce)
    scale = mean_scale(adj, x.dtype) if reduce == "mean" else None
    if rows:
        raw = _rows_sum(adj, x, checked)  # (num_dst, F) sums read from the table
    else:
        raw = csr_matmul(kernel_csr(adj, checked), x.detach(), adj.num_dst)
        if x.requires_grad and torch.is_grad_enabled():
            out = _DstCat.apply(adj, x, raw, checked, scale)
            return torch.cat([out, out.new_ones(adj.num_dst, 1)], 1) if ones else out
    f = x.shape[1]
    out = raw.new_empty(adj.num_dst, 2 * f + ones)  # (num_dst, 2 F [+ 1])
    if rows and out.device.type == "cpu":  # the own rows, gathered in place
        torch.index_select(x.table.detach(), 0, x.index[: adj.num_dst], out=out[:, :f])
    else:
        out[:, :f].copy_(x[: adj.num_dst].materialize() if rows else x[: adj.num_dst])
    if ones:
        out[:, 2 * f].fill_(1)
    return _aggregate_into(out, raw, scale)


def _aggregate_into(out: torch.Tensor, raw: torch.Tensor,
                    scale: torch.Tensor | None) -> torch.Tensor:
    """``out[:, F:2F] = raw * scale`` by row (``raw`` when no scale), ``raw`` being (rows,
    F): the aggregate written straight into its part of ``[x_dst | mean (| 1)]``, the scaling
    pass doing the copy that a ``torch.cat`` would add."""
    f = raw.shape[1]
    right = out[:, f: 2 * f]
    if scale is None:
        right.copy_(raw)
    else:
        torch.mul(raw, scale.view(-1, 1), out=right)
    return out


def _spmm_rows(adj: Adjacency, x: IndexedRows, values: torch.Tensor | None,
               reduce: Reduce) -> torch.Tensor:
    """``A @ table[index]`` read straight from the table (``x`` and ``values`` checked by
    :func:`spmm`): the kernel's columns are ``index[adj.indices]``, so the (num_src, F)
    gather is never made. The same sums in the same order as on the gathered rows. Falls
    back to the gather when a gradient must flow to the table or the values."""
    if _rows_need_grad(x, values):
        return spmm(adj, x.materialize(), values, reduce)
    return _scale_rows(_rows_sum(adj, x, values),
                       mean_scale(adj, x.dtype) if reduce == "mean" else None, inplace=True)


def _rows_need_grad(x: IndexedRows, values: torch.Tensor | None) -> bool:
    """Whether ``A @ table[index]`` must go through the gathered rows (a gradient to the
    table or the values, or multi-head values)."""
    return torch.is_grad_enabled() and (x.table.requires_grad or (
        values is not None and values.requires_grad)) \
        or (values is not None and values.dim() != 1)


def _rows_sum(adj: Adjacency, x: IndexedRows, values: torch.Tensor | None) -> torch.Tensor:
    """(num_dst, F) sums ``A @ table[index]``, read from the table (no gradient)."""
    # int32 ids when they fit (the kernel then reads half the bytes); only the row pointers
    # of A are needed here, not its (nnz,) local columns.
    small = adj.nnz < 2**31 - 1 and x.table.shape[0] < 2**31 - 1
    indptr = adj.cached(("kernel_indptr", small),
                        lambda: adj.indptr.int() if small else adj.indptr)
    index = x.index.int() if small else x.index  # (num_src,) table rows
    cols = index.index_select(0, adj.indices)  # (nnz,) the table row of each entry
    return csr_matmul(KernelCSR(indptr, cols, None if values is None else values.detach()),
                      x.table.detach(), adj.num_dst)  # (num_dst, F), fresh


def _check_values(adj: Adjacency, dtype: torch.dtype,
                  values: torch.Tensor | None) -> torch.Tensor | None:
    """The entries of ``A`` in ``dtype``: ``values``, else :attr:`Adjacency.values`, else None
    (all ones: the kernel then sums without weights)."""
    if values is None:
        values = adj.values
        if values is None:
            return None
    elif not isinstance(values, torch.Tensor) or not values.dtype.is_floating_point:
        raise DataError("spmm values must be a floating-point tensor")
    if not _same_device(values.device, adj.device):
        raise DeviceError(f"edge values are on {values.device} but the adjacency is on "
                          f"{adj.device}; move them with .to('{adj.device}')")
    if values.dim() == 1 and values.shape[0] != adj.nnz:
        raise DataError(f"spmm got {values.shape[0]} edge values for {adj.nnz} edges")
    return values if values.dtype == dtype else values.to(dtype)


def mean_scale(adj: Adjacency, dtype: torch.dtype) -> torch.Tensor:
    """(num_dst,) ``1 / max(in-degree, 1)`` in ``dtype``, cached: the row scale of
    ``reduce="mean"``."""
    return adj.cached(("mean_scale", dtype),
                      lambda: adj.in_degrees().clamp(min=1).to(dtype).reciprocal())


def _scale_rows(y: torch.Tensor, scale: torch.Tensor | None,
                inplace: bool = False) -> torch.Tensor:
    """``y * scale`` broadcast over each row's trailing dims (None: ``y``); ``inplace``
    overwrites ``y`` (a fresh output), else a new tensor."""
    if scale is None:
        return y
    scale = scale.view((-1,) + (1,) * (y.dim() - 1))
    return y.mul_(scale) if inplace else y * scale


class _DstCat(torch.autograd.Function):
    """``[x[:num_dst] | scale * (A @ x)]`` where the sums ``A @ x`` were computed outside
    autograd; the gradient of both halves goes to ``x`` (see :func:`spmm_cat`)."""

    @staticmethod
    def forward(ctx, adj: Adjacency, x: torch.Tensor, raw: torch.Tensor,  # type: ignore[override]
                values: torch.Tensor | None, scale: torch.Tensor | None) -> torch.Tensor:
        ctx.adj, ctx.values, ctx.scale = adj, values, scale  # (nnz,) / (num_dst,) or None
        out = x.new_empty(adj.num_dst, 2 * x.shape[1])  # (num_dst, 2 F)
        out[:, : x.shape[1]].copy_(x[: adj.num_dst])
        return _aggregate_into(out, raw, scale)  # raw: the unscaled sums A @ x

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        adj: Adjacency = ctx.adj
        f = grad.shape[1] // 2
        grad_x = csr_matmul(kernel_csr(adj, ctx.values, transpose=True),
                            _scale_rows(grad[:, f:], ctx.scale), adj.num_src)  # (num_src, F)
        grad_x[: adj.num_dst] += grad[:, :f]
        return None, grad_x, None, None, None


class _SpMM(torch.autograd.Function):
    """Y = A @ X with A = CSR(adj, values); gradients for X and values.

    One head: values (nnz,) or None (all ones), X (num_src, F). H heads: values (nnz, H),
    X (num_src, H, F), each head its own product (the kernel runs once per head, the SDDMM
    once for all). ``scale`` (num_dst,) or None scales the result's rows (``reduce="mean"``).
    """

    @staticmethod
    def forward(ctx, adj: Adjacency, values: torch.Tensor | None,  # type: ignore[override]
                x: torch.Tensor, scale: torch.Tensor | None) -> torch.Tensor:
        ctx.adj, ctx.scale = adj, scale
        ctx.save_for_backward(values, x if ctx.needs_input_grad[1] else None)
        if values is None or values.dim() == 1:
            out = csr_matmul(kernel_csr(adj, values), x, adj.num_dst)  # (num_dst, F)
        else:
            out = _per_head(_kernel_index(adj, False), values.detach().t(), x, adj.num_dst)
        return _scale_rows(out, scale, inplace=True)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        adj: Adjacency = ctx.adj
        values, x = ctx.saved_tensors
        grad = _scale_rows(grad, ctx.scale)  # d(D^-1 A X) = A^T (D^-1 dY)
        grad_values = grad_x = None
        if ctx.needs_input_grad[2]:
            if values is None or values.dim() == 1:
                grad_x = csr_matmul(kernel_csr(adj, values, transpose=True), grad,
                                    adj.num_src)  # (num_src, F)
            else:
                t_values = values.detach()[adj.transposed().perm].t()  # (H, nnz), A^T order
                grad_x = _per_head(_kernel_index(adj, True), t_values, grad,
                                   adj.num_src)  # (num_src, H, F)
        if ctx.needs_input_grad[1]:
            grad_values = sddmm(adj, grad, x)  # (nnz,) or (nnz, H)
        return None, grad_values, grad_x, None


def _per_head(index: tuple[torch.Tensor, torch.Tensor], values: torch.Tensor, x: torch.Tensor,
              num_rows: int) -> torch.Tensor:
    """(num_rows, H, F) = stack_h CSR(index, values[h]) @ x[:, h]; values (H, nnz)."""
    indptr, indices = index
    values = values.contiguous()  # (H, nnz)
    xt = x.detach().transpose(0, 1).contiguous()  # (H, num_cols, F)
    heads = [csr_matmul(KernelCSR(indptr, indices, values[h]), xt[h], num_rows)
             for h in range(values.shape[0])]
    return torch.stack(heads, dim=1)  # (num_rows, H, F)


class KernelCSR(NamedTuple):
    """What the SpMM kernel reads: int32 (or int64) row pointers and columns, and values
    (None: all ones)."""

    indptr: torch.Tensor  # (rows + 1,)
    indices: torch.Tensor  # (nnz,)
    values: torch.Tensor | None  # (nnz,)


def kernel_csr(adj: Adjacency, values: torch.Tensor | None,
               transpose: bool = False) -> KernelCSR:
    """``A`` (or ``A^T``) with entries ``values`` (given in A's CSR order; None: all ones),
    for the kernel.

    Indices are int32 when they fit (the kernel then reads half the bytes), built once per
    Adjacency. For ``A^T`` the values are permuted into its CSR order; that permutation is
    cached while the same constant ``values`` tensor comes back (normalised values, ones),
    so a training loop does it once.
    """
    indptr, indices = _kernel_index(adj, transpose)
    if values is None or not transpose:
        return KernelCSR(indptr, indices, None if values is None else values.detach())
    last = adj._cache.get("t_values")
    if isinstance(last, tuple) and last[0] is values:
        return KernelCSR(indptr, indices, last[1])
    permuted = values.detach()[adj.transposed().perm]  # (nnz,) in A^T's CSR order
    if not values.requires_grad:
        adj._cache["t_values"] = (values, permuted)
    return KernelCSR(indptr, indices, permuted)


def _kernel_index(adj: Adjacency, transpose: bool) -> tuple[torch.Tensor, torch.Tensor]:
    """(indptr, indices) of A or A^T for the kernel: int32 when nnz < 2^31, cached."""
    def build() -> tuple[torch.Tensor, torch.Tensor]:
        if transpose:
            indptr, indices = adj.transposed_index()
            if indptr is adj.indptr and indices is adj.indices:  # a symmetric structure
                return _kernel_index(adj, False)
        else:
            indptr, indices = adj.indptr, adj.indices
        if adj.nnz < 2**31 - 1:
            return indptr.int(), indices.int()
        return indptr, indices

    return adj.cached(("kernel_index", transpose), build)  # type: ignore[return-value]


def csr_matmul(a: KernelCSR, x: torch.Tensor, num_rows: int) -> torch.Tensor:
    """Dense (num_rows, F) = CSR ``a`` @ x, for x (num_cols, F).

    The kernel is ``embedding_bag(mode="sum", per_sample_weights=values)``: one bag per CSR
    row, gathering and weighting rows of ``x``. It is exactly a CSR SpMM, parallel over rows,
    and on this project's 2-core CPU it measured 2-6x faster than ``torch.sparse.mm`` on CSR
    tensors (MKL) for 7 to 128 features (docs/sparse.md); on CUDA it is a native kernel too.
    """
    if a.indices.shape[0] == 0 or x.shape[0] == 0 or x.shape[1] == 0:
        return x.new_zeros(num_rows, x.shape[1])
    # detach(): inside an autograd Function we only want the kernel; a ``x`` that requires
    # grad would make embedding_bag also build the bookkeeping of its own backward.
    return F.embedding_bag(a.indices, x.detach().contiguous(), a.indptr, mode="sum",
                           per_sample_weights=a.values, include_last_offset=True)


def edge_gather(adj: Adjacency, x: torch.Tensor) -> torch.Tensor:
    """``x[adj.indices]``: each entry's source row, (num_src, *) -> (nnz, *), in CSR order.

    The start of a per-edge message (GINE's ``x_j + e_ji``). The gradient of ``x`` sums each
    source's entries through ``A^T``'s CSR (:func:`csr_matmul` on the transposed positions:
    parallel over sources), not by a scatter into ``x``'s rows. The result is a fresh tensor
    that its backward does not read, so a caller may update it in place.
    """
    _check_edges_of(adj, x, "edge_gather", "x", adj.num_src)
    return _EdgeGather.apply(adj, x)


def edge_sum(adj: Adjacency, messages: torch.Tensor) -> torch.Tensor:
    """``out[i] = sum of messages[e] over A's entries e in row i``: (nnz, *) -> (num_dst, *).

    For messages that depend on the edge, not only on its source (GINE's
    ``ReLU(x_j + e_ji)``), which :func:`spmm` cannot express. ``messages`` is in CSR order, so
    each row's messages are contiguous: the sum is the SpMM kernel (:func:`csr_matmul`) over
    the entries' own positions, parallel over rows; the gradient of a message is its row's
    (a gather). Memory O(nnz * F).
    """
    _check_edges_of(adj, messages, "edge_sum", "messages", adj.nnz)
    return _EdgeSum.apply(adj, messages)


def _check_edges_of(adj: Adjacency, t: torch.Tensor, fn: str, what: str, rows: int) -> None:
    if t.shape[0] != rows:
        raise DataError(f"{fn}: {t.shape[0]} rows of {what} for an adjacency that needs "
                        f"{rows}")
    if not _same_device(t.device, adj.device):
        raise DeviceError(f"{fn}: {what} on {t.device}, adjacency on {adj.device}; move both "
                          f"to one device")


def _edge_index(adj: Adjacency, transpose: bool) -> KernelCSR:
    """The kernel's CSR whose entries are A's CSR positions: ``(indptr, arange(nnz))`` for
    A's rows, ``(indptr of A^T, perm)`` for A^T's; int32 when they fit, cached."""
    def build() -> KernelCSR:
        if transpose:
            t = adj.transposed()
            indptr, pos = t.indptr, t.perm
        else:
            indptr = adj.indptr
            pos = torch.arange(adj.nnz, dtype=torch.int64, device=adj.device)
        if adj.nnz < 2**31 - 1:
            indptr, pos = indptr.int(), pos.int()
        return KernelCSR(indptr, pos, None)

    return adj.cached(("edge_index", transpose), build)  # type: ignore[return-value]


class _EdgeGather(torch.autograd.Function):
    @staticmethod
    def forward(ctx, adj: Adjacency, x: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.adj, ctx.shape = adj, x.shape
        return x.detach().index_select(0, adj.indices)  # (nnz, *)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        adj: Adjacency = ctx.adj
        flat = grad.reshape(grad.shape[0], -1)  # (nnz, prod(*))
        out = csr_matmul(_edge_index(adj, transpose=True), flat, adj.num_src)
        return None, out.reshape(ctx.shape)


class _EdgeSum(torch.autograd.Function):
    @staticmethod
    def forward(ctx, adj: Adjacency, messages: torch.Tensor) -> torch.Tensor:  # type: ignore[override]
        ctx.adj = adj
        flat = messages.reshape(messages.shape[0], -1)  # (nnz, prod(*))
        out = csr_matmul(_edge_index(adj, transpose=False), flat, adj.num_dst)
        # (nnz, F) messages give the kernel's fresh tensor, which callers may update in
        # place (GINE adds the own term); other shapes a view of it
        return out if messages.dim() == 2 else out.reshape(adj.num_dst, *messages.shape[1:])

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        return None, grad.index_select(0, ctx.adj.row_index)  # (nnz, *)


def sddmm(adj: Adjacency, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``(a @ b^T)`` at A's nonzeros: ``out[e] = <a[dst(e)], b[src(e)]>`` over the last dim.

    :param a: (num_dst, *, F). :param b: (num_src, *, F) (e.g. ``*`` = heads).
    :returns: (nnz, *). Chunked over edges so that at most ``SDDMM_CHUNK_ELEMENTS`` products
        are materialised at once: memory O(chunk), never O(N^2).
    """
    rows, cols = adj.row_index, adj.indices
    nnz, per_edge = adj.nnz, max(1, math.prod(a.shape[1:]))
    chunk = max(1, SDDMM_CHUNK_ELEMENTS // per_edge)
    if nnz <= chunk:
        return (a[rows] * b[cols]).sum(-1)  # (nnz, *)
    out = a.new_empty((nnz,) + tuple(a.shape[1:-1]))
    for start in range(0, nnz, chunk):
        stop = min(nnz, start + chunk)
        torch.sum(a[rows[start:stop]] * b[cols[start:stop]], -1, out=out[start:stop])
    return out
