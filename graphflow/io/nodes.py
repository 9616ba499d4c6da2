"""Node tables: one row per node with its id, features, label and masks (Parquet or CSV).

Columns (names configurable where noted):

* ``id`` (``id_column``): the node id, integer or string; unique.
* features (``feature_columns``): one list column (``list<float>`` or
  ``fixed_size_list<float>``) or several numeric columns. By default, the one list column if
  there is one (``feat`` if there are several), else every numeric column besides the id,
  label and masks.
* ``label`` (``label_column``, optional): strings become class ids ``0..C-1`` in sorted order,
  the names kept in ``NodeTable.classes``; integers are class ids (their names taken from
  the ``graphflow`` metadata of a Parquet file graphflow wrote); a null is ``-1``
  (unlabelled). A list column is multi-label: ``list<int|string>`` becomes 0/1 targets,
  ``list<float>`` / ``fixed_size_list<float>`` is taken as the (N, C) targets.
* ``train_mask``, ``val_mask``, ``test_mask`` (optional, bool).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from graphflow.errors import DataError
from graphflow.io.delimited import read_delimited
from graphflow.io.ids import Where, check_no_nulls, check_unique
from graphflow.io.parquet import read_parquet, read_run_metadata
from graphflow.io.node_split import MASKS
PARQUET_SUFFIXES = (".parquet", ".pq")
OnNan = Literal["error", "zero"]


@dataclass
class NodeTable:
    """What a node table holds, row ``i`` being node ``i`` of the table."""

    ids: pa.Array
    where: Where
    source: str
    feat: torch.Tensor | None = None
    label: torch.Tensor | None = None
    classes: list[str] | None = None
    masks: dict[str, torch.Tensor] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass
class NodeFile:
    """A node table as read from a file, not yet interpreted (see :func:`node_table`)."""

    table: pa.Table
    where: Where
    source: str
    classes: list[str] | None = None  # class names a graphflow-written Parquet file carries


def read_node_file(path: Path, *, id_column: str = "id", delimiter: str | None = None,
                   comment: str = "") -> NodeFile:
    """Read a node table from Parquet (``.parquet`` / ``.pq``) or delimited text with a header.

    :raises DataError: missing or unreadable file.
    """
    what = "node table"
    if path.suffix.lower() in PARQUET_SUFFIXES:
        read = read_parquet(path, what=what)
        classes = read_run_metadata(path).get("classes")  # written by the parquet exporter
        return NodeFile(read.table, read.where, str(path),
                        [str(c) for c in classes] if classes else None)
    text = read_delimited(path, delimiter=delimiter, header=True, comment=comment,
                          ids=[id_column], what=what)
    return NodeFile(text.table, text.where, str(path))


def read_node_table(path: Path, *, id_column: str = "id", label_column: str = "label",
                    feature_columns: Sequence[str] | None = None, delimiter: str | None = None,
                    comment: str = "") -> NodeTable:
    """Read and interpret a node table file (:func:`read_node_file`, then :func:`node_table`).

    :raises DataError: missing file or column, duplicate or empty ids, unusable features.
    """
    read = read_node_file(path, id_column=id_column, delimiter=delimiter, comment=comment)
    out = node_table(read.table, where=read.where, source=read.source, id_column=id_column,
                     label_column=label_column, feature_columns=feature_columns)
    if read.classes and out.label is not None and out.classes is None:
        out.classes = read.classes
    return out


def node_table(table: pa.Table, *, where: Where, source: str, id_column: str = "id",
               label_column: str = "label",
               feature_columns: Sequence[str] | None = None) -> NodeTable:
    """Interpret the columns of an already read node table."""
    names = table.column_names
    if id_column not in names:
        raise DataError(f"node table {source}: no id column {id_column!r}; columns: "
                        f"{', '.join(names)} (set id_column)")
    if table.num_rows == 0:
        raise DataError(f"node table {source} has no rows")
    ids = table.column(id_column).combine_chunks()
    if not (pa.types.is_integer(ids.type) or pa.types.is_string(ids.type)
            or pa.types.is_large_string(ids.type)):
        ids = ids.cast(pa.string())
    check_no_nulls(ids, "node id", where)
    check_unique(ids, where=where)
    out = NodeTable(ids=ids, where=where, source=source)
    for mask in MASKS:
        if mask in names:
            out.masks[mask] = _bool_column(table.column(mask), mask, source)
    if label_column in names:
        out.label, out.classes = _labels(table.column(label_column), label_column, source)
    skip = {id_column, label_column, *MASKS}
    out.feat = _features(table, feature_columns, skip, source)
    return out


def _numpy(column: pa.ChunkedArray | pa.Array) -> np.ndarray:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return column.to_numpy(zero_copy_only=False)


def _bool_column(column: pa.ChunkedArray, name: str, source: str) -> torch.Tensor:
    if not (pa.types.is_boolean(column.type) or pa.types.is_integer(column.type)):
        raise DataError(f"node table {source}: column {name!r} must be boolean (or 0/1), "
                        f"not {column.type}")
    values = _numpy(column.fill_null(False if pa.types.is_boolean(column.type) else 0))
    return torch.from_numpy(values.astype(bool))


def _is_list(t: pa.DataType) -> bool:
    return pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t)


def _is_numeric(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_boolean(t)


def list_matrix(column: pa.ChunkedArray | pa.Array, name: str, source: str) -> np.ndarray:
    """A list column of equal-length numeric lists as a float32 (N, D) matrix."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if column.null_count:
        row = int(np.flatnonzero(_numpy(column.is_null()))[0])
        raise DataError(f"node table {source}: column {name!r} is empty in row {row}")
    n = len(column)
    if pa.types.is_fixed_size_list(column.type):
        width = column.type.list_size
    else:
        lengths = _numpy(pc.list_value_length(column))
        width = int(lengths[0]) if n else 0
        odd = np.flatnonzero(lengths != width)
        if len(odd):
            raise DataError(f"node table {source}: column {name!r} has lists of different "
                            f"lengths: row 0 has {width}, row {int(odd[0])} has "
                            f"{int(lengths[odd[0]])}")
    values = pc.list_flatten(column)
    if not _is_numeric(values.type):
        raise DataError(f"node table {source}: column {name!r} holds {values.type}, "
                        f"not numbers")
    return _numpy(values).astype(np.float32).reshape(n, width)


def _features(table: pa.Table, chosen: Sequence[str] | None, skip: set[str],
              source: str) -> torch.Tensor | None:
    names = table.column_names
    if chosen is not None:
        missing = [c for c in chosen if c not in names]
        if missing:
            raise DataError(f"node table {source}: no feature column {missing[0]!r}; "
                            f"columns: {', '.join(names)}")
        columns = list(chosen)
    else:
        lists = [c for c in names if c not in skip and _is_list(table.column(c).type)]
        if len(lists) > 1 and "feat" in lists:
            lists = ["feat"]
        if len(lists) > 1:
            raise DataError(f"node table {source}: several list columns ({', '.join(lists)}); "
                            f"set feature_columns to the one holding the features")
        columns = lists or [c for c in names
                            if c not in skip and _is_numeric(table.column(c).type)]
    if not columns:
        return None
    if len(columns) == 1 and _is_list(table.column(columns[0]).type):
        return torch.from_numpy(list_matrix(table.column(columns[0]), columns[0], source))
    parts = []
    for name in columns:  # over columns, not rows
        column = table.column(name)
        if not _is_numeric(column.type):
            raise DataError(f"node table {source}: feature column {name!r} holds "
                            f"{column.type}, not numbers")
        parts.append(_numpy(column.cast(pa.float32())))
    return torch.from_numpy(np.column_stack(parts).astype(np.float32, copy=False))


def _labels(column: pa.ChunkedArray, name: str, source: str
            ) -> tuple[torch.Tensor, list[str] | None]:
    t = column.type
    if _is_list(t):
        return _multilabel(column, name, source)
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_dictionary(t):
        column = column.cast(pa.string())
        classes = pc.unique(column.drop_null()).sort()
        codes = pc.index_in(column, value_set=classes).fill_null(-1)
        return torch.from_numpy(_numpy(codes).astype(np.int64)), classes.to_pylist()
    if pa.types.is_integer(t):
        return torch.from_numpy(_numpy(column.fill_null(-1)).astype(np.int64)), None
    if pa.types.is_floating(t):
        values = _numpy(column)
        finite = values[np.isfinite(values)]
        if np.array_equal(finite, np.round(finite)):
            return torch.from_numpy(np.where(np.isnan(values), -1, values).astype(np.int64)), None
    raise DataError(f"node table {source}: label column {name!r} holds {t}; labels must be "
                    f"class names (strings), class ids (integers) or lists of them")


def _multilabel(column: pa.ChunkedArray, name: str, source: str
                ) -> tuple[torch.Tensor, list[str] | None]:
    column = column.combine_chunks()
    values_type = column.type.value_type
    if pa.types.is_floating(values_type):  # (N, C) targets as written by the exporters
        return torch.from_numpy(list_matrix(column, name, source)), None
    column = column.fill_null([]) if column.null_count else column
    values = pc.list_flatten(column)
    rows = _numpy(pc.list_parent_indices(column)).astype(np.int64)
    classes = None
    if pa.types.is_string(values_type) or pa.types.is_large_string(values_type):
        uniq = pc.unique(values).sort()
        classes = uniq.to_pylist()
        cols = _numpy(pc.index_in(values, value_set=uniq)).astype(np.int64)
        width = len(classes)
    elif pa.types.is_integer(values_type):
        cols = _numpy(values).astype(np.int64)
        if len(cols) and cols.min() < 0:
            raise DataError(f"node table {source}: label column {name!r} has a negative class")
        width = int(cols.max()) + 1 if len(cols) else 0
    else:
        raise DataError(f"node table {source}: label column {name!r} holds lists of "
                        f"{values_type}; use class ids, class names or 0/1 floats")
    target = np.zeros((len(column), width), dtype=np.float32)
    target[rows, cols] = 1.0
    return torch.from_numpy(target), classes


def check_finite(feat: torch.Tensor, *, on_nan: OnNan, where: Where, ids: pa.Array
                 ) -> tuple[torch.Tensor, int]:
    """Deal with NaN / inf features: raise (``error``) or zero them (``zero``).

    :returns: the features and how many values were zeroed.
    """
    bad = ~torch.isfinite(feat)
    if not bad.any():
        return feat, 0
    if on_nan == "zero":
        count = int(bad.sum())
        return torch.where(bad, torch.zeros((), dtype=feat.dtype), feat), count
    row, col = (int(i) for i in torch.nonzero(bad)[0])
    value = float(feat[row, col])
    raise DataError(f"{where(row)}: feature {col} of node {ids[row].as_py()!r} is {value}; "
                    f'clean the data or set on_nan = "zero" in [load]')
