"""Rows of a feature table, not yet gathered: ``table[index]`` as a (table, index) pair.

A sampled minibatch's first layer reads ``feat[input_nodes]``: tens of thousands of random
rows of a table of millions. Gathering them into a fresh (num_input, F) tensor and then
aggregating that copy reads every row twice and writes it once. A first layer that aggregates
(SAGE's mean) can instead read the table directly: the SpMM's column ids become
``index[adj.indices]`` (one int gather over the edges), and only the destinations' own rows
are copied. :func:`~graphflow.sparse.spmm` and :func:`~graphflow.sparse.spmm_cat` take an
:class:`IndexedRows` for ``x``; everything else calls :meth:`IndexedRows.materialize`
(``graphflow.sparse.features`` does for ``linear``, ``dropout`` and ``to_dense``).

A sampler hands these out only to a model that says it takes them (``accepts_rows``, see
``GNNStack``), and only when the table is already on the model's device: it is then the
same arithmetic on the same rows, in the same order, as on the gathered copy.
"""

from __future__ import annotations

import torch

from graphflow.errors import DataError


class IndexedRows:
    """``table[index]``, gathered only when something needs the dense tensor.

    :ivar table: (N, F) floating-point tensor (features of every node).
    :ivar index: int64 (n,) row ids in ``[0, N)``, on ``table``'s device.
    """

    def __init__(self, table: torch.Tensor, index: torch.Tensor):
        if table.dim() != 2 or not table.dtype.is_floating_point:
            raise DataError(f"indexed rows need a 2-D float table, got {table.dtype} "
                            f"{tuple(table.shape)}")
        if index.dim() != 1 or index.device != table.device:
            raise DataError(f"indexed rows need a 1-D index on the table's device "
                            f"({table.device}), got {tuple(index.shape)} on {index.device}")
        self.table = table
        self.index = index

    @property
    def shape(self) -> torch.Size:
        return torch.Size((self.index.shape[0], self.table.shape[1]))

    @property
    def dtype(self) -> torch.dtype:
        return self.table.dtype

    @property
    def device(self) -> torch.device:
        return self.table.device

    def dim(self) -> int:
        return 2

    def __len__(self) -> int:
        return int(self.index.shape[0])

    def __getitem__(self, item: slice) -> IndexedRows:
        """Rows ``item`` (a slice), still not gathered."""
        if not isinstance(item, slice):
            raise TypeError(f"IndexedRows takes a slice of rows, got {type(item).__name__}; "
                            f"call materialize() for anything else")
        return IndexedRows(self.table, self.index[item])

    def materialize(self) -> torch.Tensor:
        """The gathered (n, F) tensor (differentiable to ``table`` when it requires grad)."""
        return self.table.index_select(0, self.index)

    def to(self, *args, **kwargs) -> torch.Tensor:
        """The gathered tensor, moved or cast as ``torch.Tensor.to`` does."""
        return self.materialize().to(*args, **kwargs)

    def __repr__(self) -> str:
        return f"IndexedRows({tuple(self.shape)} of a {tuple(self.table.shape)} table)"


def materialize(x: object) -> object:
    """``x.materialize()`` for :class:`IndexedRows`, else ``x`` itself."""
    return x.materialize() if isinstance(x, IndexedRows) else x
