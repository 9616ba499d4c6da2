"""Sparse input features: keep a mostly-zero feature matrix in CSR and multiply it sparsely.

Bag-of-words features (Planetoid: ~1% nonzero) make ``x @ W`` of the first layer the most
expensive step of a small GCN when ``x`` is dense. :func:`as_features` keeps ``x`` as
:class:`SparseFeatures` when its density is below a threshold; every layer's linear transform
goes through :func:`matmul` / :func:`linear`, which run ``X @ W`` through :func:`spmm` (the
features are a (N x F_in) sparse matrix there). The gradient for ``W`` is ``X^T @ G``, from
the transposed CSR that is built once; ``X`` itself never needs a gradient, since sparse
features are only ever the input of the first layer.

The default threshold comes from ``benchmarks/gcn.py --density-sweep``; see docs/sparse.md.
"""

from __future__ import annotations

from typing import Union

import torch

from graphflow.sparse.dropout import dropout as fast_dropout
from graphflow.errors import ConfigError, DataError, DeviceError
from graphflow.sparse import gemm
from graphflow.sparse.adjacency import Adjacency
from graphflow.sparse.ops import spmm
from graphflow.sparse.indexed_rows import IndexedRows, materialize

DEFAULT_DENSITY_THRESHOLD = 0.1


class SparseFeatures:
    """Node features (N, F) in CSR: row ``i`` holds the nonzero features of node ``i``.

    :ivar structure: the sparsity pattern as an :class:`Adjacency` with ``num_dst = N`` rows
        and ``num_src = F`` columns (its transposed CSR is cached for the weight gradient).
    :ivar values: (nnz,) the nonzero values in CSR order.
    """

    def __init__(self, structure: Adjacency, values: torch.Tensor):
        if values.shape != (structure.nnz,):
            raise DataError(f"sparse features need {structure.nnz} values, got "
                            f"{tuple(values.shape)}")
        self.structure = structure
        self.values = values

    @classmethod
    def from_dense(cls, x: torch.Tensor) -> SparseFeatures:
        """The nonzeros of a dense (N, F) float tensor (on its device)."""
        if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.dtype.is_floating_point:
            raise DataError(f"sparse features are made from a 2-D float tensor, got "
                            f"{type(x).__name__} {tuple(getattr(x, 'shape', ()))}")
        x = x.detach()
        rows, cols = x.nonzero(as_tuple=True)  # (nnz,) each, row-major order
        indptr = torch.zeros(x.shape[0] + 1, dtype=torch.int64, device=x.device)
        torch.cumsum(torch.bincount(rows, minlength=x.shape[0]), 0, out=indptr[1:])
        eids = torch.arange(cols.shape[0], device=x.device)
        return cls(Adjacency(indptr, cols, eids, x.shape[1], x.shape[0]), x[rows, cols])

    @classmethod
    def from_csr(cls, indptr: torch.Tensor, indices: torch.Tensor, values: torch.Tensor,
                 num_features: int) -> SparseFeatures:
        """Wrap an existing CSR (e.g. from ``scipy.sparse.csr_matrix``) without densifying."""
        indptr, indices = indptr.long(), indices.long()
        if indices.numel() and (int(indices.min()) < 0 or int(indices.max()) >= num_features):
            raise DataError(f"sparse feature column out of range for {num_features} features")
        eids = torch.arange(indices.shape[0], device=indices.device)
        n = indptr.shape[0] - 1
        return cls(Adjacency(indptr, indices, eids, num_features, n), values)

    # ------------------------------------------------------------------ tensor-like facts
    @property
    def shape(self) -> torch.Size:
        return torch.Size((self.structure.num_dst, self.structure.num_src))

    def size(self, dim: int | None = None) -> torch.Size | int:
        return self.shape if dim is None else self.shape[dim]

    def dim(self) -> int:
        return 2

    @property
    def dtype(self) -> torch.dtype:
        return self.values.dtype

    @property
    def device(self) -> torch.device:
        return self.values.device

    @property
    def nnz(self) -> int:
        return self.structure.nnz

    @property
    def density(self) -> float:
        n, f = self.shape
        return self.nnz / max(1, n * f)

    def __len__(self) -> int:
        return self.structure.num_dst

    def __repr__(self) -> str:
        n, f = self.shape
        return (f"SparseFeatures(shape=({n}, {f}), nnz={self.nnz}, density={self.density:.4f}, "
                f"dtype={self.dtype}, device={self.device})")

    # ------------------------------------------------------------------ conversions
    def to_dense(self) -> torch.Tensor:
        """(N, F) dense tensor (differentiable w.r.t. :attr:`values`)."""
        s = self.structure
        out = self.values.new_zeros(self.shape)
        return out.index_put((s.row_index, s.indices), self.values, accumulate=True)

    def to(self, device: torch.device | str | None = None,
           dtype: torch.dtype | None = None) -> SparseFeatures:
        values = self.values.to(device=device, dtype=dtype)
        structure = self.structure if device is None else self.structure.to(device)
        if values is self.values and structure is self.structure:
            return self
        return SparseFeatures(structure, values)

    def with_values(self, values: torch.Tensor) -> SparseFeatures:
        """Same pattern (and cached transpose), new values: e.g. after dropout."""
        return SparseFeatures(self.structure, values)

    def head(self, n: int) -> SparseFeatures:
        """The first ``n`` rows (the destination prefix of a block's sources)."""
        s = self.structure
        if n == s.num_dst:
            return self
        if not 0 <= n <= s.num_dst:
            raise DataError(f"cannot take the first {n} rows of {s.num_dst} sparse rows")
        end = int(s.indptr[n])
        sub = Adjacency(s.indptr[: n + 1], s.indices[:end], s.eids[:end], s.num_src, n)
        return SparseFeatures(sub, self.values[:end])

    def index_select(self, index: torch.Tensor) -> SparseFeatures:
        """Rows ``index`` (int64 (B,)), in that order: the features of a minibatch."""
        s = self.structure
        index = index.to(s.device).long()
        starts = s.indptr[index]  # (B,)
        lens = s.indptr[index + 1] - starts  # (B,)
        indptr = torch.zeros(index.shape[0] + 1, dtype=torch.int64, device=s.device)
        torch.cumsum(lens, 0, out=indptr[1:])
        total = int(indptr[-1])
        # Position of each kept entry in the source CSR: row start + offset within the row.
        pos = torch.repeat_interleave(starts - indptr[:-1], lens, output_size=total) \
            + torch.arange(total, device=s.device)  # (nnz_out,)
        sub = Adjacency(indptr, s.indices[pos], torch.arange(total, device=s.device),
                        s.num_src, index.shape[0])
        return SparseFeatures(sub, self.values[pos])

    def __getitem__(self, key: slice | torch.Tensor) -> SparseFeatures:
        if isinstance(key, slice) and key.start in (None, 0) and key.step in (None, 1):
            return self.head(len(self) if key.stop is None else min(key.stop, len(self)))
        if isinstance(key, torch.Tensor) and key.dim() == 1 and not key.dtype.is_floating_point:
            if key.dtype == torch.bool:
                key = key.nonzero().flatten()
            return self.index_select(key)
        raise DataError("sparse features support x[:n] and x[index_tensor] only")


Features = Union[torch.Tensor, SparseFeatures, IndexedRows]
"""What a first layer may receive: dense, sparse (:class:`SparseFeatures`), or rows of a table
not yet gathered (:class:`~graphflow.sparse.indexed_rows.IndexedRows`, only for layers that declare
``accepts_rows``; :func:`linear`, :func:`matmul`, :func:`dropout` and :func:`to_dense` gather
them)."""


def as_features(x: Features, threshold: float = DEFAULT_DENSITY_THRESHOLD) -> Features:
    """``x`` as :class:`SparseFeatures` when its density (nonzeros / size) is below
    ``threshold``, else ``x`` unchanged. ``threshold <= 0`` keeps every matrix dense."""
    if not 0 <= threshold <= 1:
        raise ConfigError(f"the sparse-feature density threshold must lie in [0, 1], got "
                          f"{threshold}")
    if isinstance(x, SparseFeatures) or threshold == 0:
        return x
    if not isinstance(x, torch.Tensor) or x.dim() != 2 or not x.dtype.is_floating_point:
        return x
    if density(x) < threshold:
        return SparseFeatures.from_dense(x)
    return x


def density(x: torch.Tensor) -> float:
    """Fraction of nonzero entries of a tensor."""
    return int(torch.count_nonzero(x)) / max(1, x.numel())


def matmul(x: Features, weight: torch.Tensor) -> torch.Tensor:
    """``x @ weight``: (N, F_in) x (F_in, F_out) -> (N, F_out), sparse when ``x`` is."""
    if isinstance(x, SparseFeatures):
        _check_weight(x, weight, weight.shape[0])
        return spmm(x.structure, weight, x.values.to(weight.dtype))
    return gemm.linear(materialize(x), weight.t())  # (N, F_out)


def linear(x: Features, weight: torch.Tensor, bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear`` for either kind of features: weight (F_out, F_in), as in ``nn.Linear``."""
    if isinstance(x, SparseFeatures):
        _check_weight(x, weight, weight.shape[-1])
        out = spmm(x.structure, weight.t(), x.values.to(weight.dtype))  # (N, F_out)
        return out if bias is None else out.add_(bias)
    return gemm.linear(materialize(x), weight, bias)


def _check_weight(x: SparseFeatures, weight: torch.Tensor, in_dim: int) -> None:
    if weight.device != x.device and not (weight.device.type == x.device.type == "cpu"):
        raise DeviceError(f"sparse features are on {x.device} but the layer weight is on "
                          f"{weight.device}; move the features with .to('{weight.device}')")
    if in_dim != x.shape[1]:
        raise DataError(f"sparse features have {x.shape[1]} columns but the layer expects "
                        f"{in_dim} input features")


def dropout(x: Features, p: float, training: bool) -> Features:
    """Dropout (:func:`graphflow.sparse.dropout.dropout`, torch's contract with a faster CPU mask);
    on sparse features it drops (and rescales) the stored values only; indexed rows stay
    ungathered when nothing is dropped."""
    if isinstance(x, (SparseFeatures, IndexedRows)) and (not training or p == 0):
        return x
    if isinstance(x, SparseFeatures):
        return x.with_values(fast_dropout(x.values, p, training))
    return fast_dropout(materialize(x), p, training)


def to_dense(x: Features) -> torch.Tensor:
    """A dense tensor either way (for layers whose transform is a user module)."""
    return x.to_dense() if isinstance(x, SparseFeatures) else materialize(x)
