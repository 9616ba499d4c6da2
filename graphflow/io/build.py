"""Public builders of :class:`~graphflow.graph.GraphData` for loaders: edges (+ node data) in,
a checked graph with its original ids out.

* :func:`from_edges`: source / destination ids as NumPy arrays, torch tensors, pyarrow arrays
  or Python lists (integers or strings), optional weights, node ids, features, labels, masks.
* :func:`from_tables`: an edge table and an optional node table (pyarrow tables, dicts of
  columns, pandas data frames), with the column conventions of the ``edgelist`` and
  ``parquet`` loaders (which are built on it).

Both go through the one assembly path (:func:`graphflow.io.assemble.assemble`): ids mapped to
``0..N-1`` and kept for the exporters, null / unknown / out-of-range ids, non-finite weights
and features (``on_nan``), labels and masks, each rejected with a :class:`DataError` naming
the row. ``GraphData.from_edges`` and ``GraphData.from_tables`` are these functions.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.io.assemble import Assembled, EdgeColumns, assemble
from graphflow.io.ids import Where
from graphflow.io.nodes import NodeTable, OnNan, node_table
from graphflow.io.node_split import MASKS

ArrayLike = Any
"""A column: ``np.ndarray``, ``torch.Tensor``, ``pa.Array`` / ``pa.ChunkedArray`` or a list."""
Info = Callable[[str], None]

IN_MEMORY = "(in memory)"


def from_edges(src: ArrayLike, dst: ArrayLike, *, weight: ArrayLike | None = None,
               num_nodes: int | None = None, node_ids: ArrayLike | None = None,
               feat: ArrayLike | None = None, label: ArrayLike | None = None,
               masks: Mapping[str, ArrayLike] | None = None, classes: Sequence[str] | None = None,
               directed: bool = True, name: str = "graph", on_nan: OnNan = "error",
               info: Info | None = None) -> GraphData:
    """A graph from edge endpoint ids, and optional per-node data.

    The nodes are, in this order of precedence:

    * ``node_ids`` (unique integers or strings): node ``i`` is ``node_ids[i]``, and every
      endpoint must be one of them;
    * ``0..num_nodes-1``: endpoints must be integers in that range;
    * without either, with per-node data: ``0..len(data)-1`` (integer endpoints);
    * else the nodes the edges mention, numbered in order of first appearance (integer ids
      that already are ``0..N-1`` keep their values).

    :param src: (E,) source node ids, integers or strings.
    :param dst: (E,) destination node ids, of the same kind.
    :param weight: (E,) edge weights, becomes ``edata["weight"]``.
    :param feat: (N, F) node features (row ``i`` is node ``i``), becomes ``ndata["feat"]``.
    :param label: (N,) class ids (``-1`` unlabelled) or class names (strings, numbered in
        sorted order, the names kept in ``meta["classes"]``), or (N, C) 0/1 multi-label targets.
    :param masks: ``{"train_mask": (N,) bool, ...}`` (``train_mask``, ``val_mask``,
        ``test_mask``).
    :param classes: the class names of integer labels, for exporters.
    :param directed: False: each edge is undirected; both directions are stored and a pair
        given twice (in either direction) is kept once, with its first weight.
    :param on_nan: NaN/inf features: ``"error"`` or ``"zero"`` (replace by 0).
    :param info: where to tell the user about repairs (``ctx.info`` in a loader).
    :raises DataError: lengths that disagree, null, unknown or out-of-range ids, non-finite
        weights or features, labels or masks of the wrong length.
    """
    where = _rows("edge")
    s, d = column(src, "src"), column(dst, "dst")
    _same_length(len(d), len(s), "dst", "every edge needs both ends")
    w = None
    if weight is not None:
        w = column(weight, "weight")
        _same_length(len(w), len(s), "weight", "one weight per edge")
    edges = EdgeColumns(src=s, dst=d, weight=w, where=where, source=f"from_edges {IN_MEMORY}")
    per_node = {"feat": feat, "label": label, **{f"masks[{k!r}]": v
                                                 for k, v in (masks or {}).items()}}
    per_node = {k: v for k, v in per_node.items() if v is not None}
    ids = None if node_ids is None else column(node_ids, "node_ids")
    if ids is not None:
        n, whose = len(ids), "node_ids"
    elif num_nodes is not None:
        if num_nodes < 1:
            raise DataError(f"from_edges: num_nodes = {num_nodes}; a graph needs at least "
                            f"one node")
        n, whose = int(num_nodes), f"num_nodes = {num_nodes}"
    elif per_node:
        first = next(iter(per_node))
        n, whose = _length(per_node[first]), f"{first}'s rows"
    else:
        return _finish(assemble(edges, None, directed=directed, name=name, on_nan=on_nan), info)
    for key, value in per_node.items():
        if _length(value) != n:
            raise DataError(f"from_edges: {key} has {_length(value)} rows for {n} nodes "
                            f"({whose}); give one row per node")
    if ids is None:
        for end, col in (("source", s), ("target", d)):
            if not (pa.types.is_integer(col.type) or pa.types.is_null(col.type)):
                raise DataError(f"from_edges: {end} ids are {col.type}, but without node_ids the "
                                f"nodes are 0..{n - 1}; pass node_ids to name the node of "
                                f"each row of the node data")
    nodes = _node_data(ids if ids is not None else pa.array(np.arange(n, dtype=np.int64)),
                       feat, label, masks, classes)
    built = assemble(edges, nodes, directed=directed, name=name, on_nan=on_nan,
                     num_nodes=n if ids is None else None)
    return _finish(built, info)


def from_tables(edges: Any, nodes: Any | None = None, *, src: str = "src", dst: str = "dst",
                weight: str | None = None, id_column: str = "id", label_column: str = "label",
                feature_columns: Sequence[str] | None = None,
                classes: Sequence[str] | None = None, directed: bool = True,
                name: str = "graph", on_nan: OnNan = "error",
                edge_rows: Where | None = None, node_rows: Where | None = None,
                edges_source: str = f"edge table {IN_MEMORY}",
                nodes_source: str = IN_MEMORY, info: Info | None = None) -> GraphData:
    """A graph from an edge table and an optional node table.

    Tables are ``pa.Table`` s, dicts of columns (lists, NumPy arrays, tensors; a 2-D array
    becomes a list column) or pandas data frames. The node table, when given, fixes the node
    order (row ``i`` is node ``i``) and carries ``id_column``, features (``feature_columns``;
    default: its list column, ``feat`` if several, else every numeric column besides id, label
    and masks), ``label_column`` and the bool ``train_mask`` / ``val_mask`` / ``test_mask``;
    every edge must name a node of the table. See :func:`from_edges` for the other arguments.

    :param src: / :param dst: the edge table's id columns; :param weight: its weight column.
    :param edge_rows: / :param node_rows: name row ``i`` in messages (``"edges.tsv:12"``);
        default ``"<source>, row i"``.
    :param edges_source: / :param nodes_source: name the tables in messages.
    """
    table = as_table(edges, edges_source)
    wanted = {"src": src, "dst": dst, **({"weight": weight} if weight is not None else {})}
    for role, name_ in wanted.items():
        if name_ not in table.column_names:
            raise DataError(f"{edges_source}: no {role} column {name_!r}; columns: "
                            f"{', '.join(table.column_names)}")
    edge_cols = EdgeColumns(src=table.column(src), dst=table.column(dst),
                            weight=table.column(weight) if weight is not None else None,
                            where=edge_rows or (lambda r: f"{edges_source}, row {r}"),
                            source=edges_source)
    node_data = None
    if nodes is not None:
        node_data = node_table(as_table(nodes, f"node table {nodes_source}"),
                               where=node_rows or (lambda r: f"{nodes_source}, row {r}"),
                               source=nodes_source, id_column=id_column,
                               label_column=label_column, feature_columns=feature_columns)
        if classes and node_data.label is not None and node_data.classes is None:
            node_data.classes = [str(c) for c in classes]
    return _finish(assemble(edge_cols, node_data, directed=directed, name=name, on_nan=on_nan),
                   info)


# ---------------------------------------------------------------------- inputs to Arrow
def column(values: ArrayLike, what: str) -> pa.Array | pa.ChunkedArray:
    """One column as a pyarrow array: ids, weights, labels or masks (1-D)."""
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return values
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    if isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise DataError(f"{what} must be one-dimensional, got shape {values.shape}")
        if values.dtype.kind in "US":
            values = values.astype(object)  # pyarrow takes NumPy text as objects
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError) as exc:
        raise DataError(f"{what}: cannot read it as a column of numbers or strings: "
                        f"{exc}") from None


def matrix(values: ArrayLike, what: str) -> pa.Array:
    """A 2-D array (N, F) as a ``fixed_size_list<float32>`` column (no per-row work)."""
    if isinstance(values, torch.Tensor):
        values = values.detach().cpu().numpy()
    array = np.asarray(values)
    if array.ndim != 2:
        raise DataError(f"{what} must be a 2-D (N, F) array, got shape {array.shape}")
    if array.dtype.kind not in "biuf":
        raise DataError(f"{what} must hold numbers, not {array.dtype}")
    flat = pa.array(np.ascontiguousarray(array, dtype=np.float32).reshape(-1))
    return pa.FixedSizeListArray.from_arrays(flat, array.shape[1])


def as_table(table: Any, source: str) -> pa.Table:
    """A ``pa.Table`` from a table, a record batch, a dict of columns or a pandas data frame."""
    if isinstance(table, pa.Table):
        return table
    if isinstance(table, pa.RecordBatch):
        return pa.Table.from_batches([table])
    if type(table).__module__.split(".")[0] == "pandas":
        return pa.Table.from_pandas(table, preserve_index=False)
    if isinstance(table, Mapping):
        columns = {str(k): matrix(v, f"{source} column {k!r}") if _ndim(v) == 2
                   else column(v, f"{source} column {k!r}") for k, v in table.items()}
        lengths = {k: len(v) for k, v in columns.items()}
        if len(set(lengths.values())) > 1:
            shown = ", ".join(f"{k}: {n}" for k, n in lengths.items())
            raise DataError(f"{source}: columns of different lengths ({shown})")
        return pa.table(columns)
    raise DataError(f"{source}: expected a pyarrow table, a dict of columns or a pandas data "
                    f"frame, got {type(table).__name__}")


def _ndim(values: Any) -> int:
    if isinstance(values, (torch.Tensor, np.ndarray)):
        return values.ndim
    if isinstance(values, (pa.Array, pa.ChunkedArray)):
        return 1
    return np.ndim(values) if isinstance(values, list) and values and \
        isinstance(values[0], (list, tuple)) else 1


def _length(values: Any) -> int:
    return int(values.shape[0]) if hasattr(values, "shape") else len(values)


def _same_length(n: int, expected: int, what: str, why: str) -> None:
    if n != expected:
        raise DataError(f"from_edges: {what} has {n} values but src has {expected}; {why}")


def _rows(kind: str) -> Where:
    return lambda r: f"{kind} {r}"


def _node_data(ids: pa.Array | pa.ChunkedArray, feat: Any, label: Any,
               masks: Mapping[str, Any] | None, classes: Sequence[str] | None) -> NodeTable:
    """The per-node arguments of :func:`from_edges` as a node table, read by the loaders'
    own :func:`graphflow.io.nodes.node_table`."""
    columns: dict[str, Any] = {"id": ids}
    for key, value in (masks or {}).items():
        if key not in MASKS:
            raise DataError(f"from_edges: unknown mask {key!r}; masks: {', '.join(MASKS)}")
        columns[key] = column(value, f"masks[{key!r}]")
    if label is not None:
        columns["label"] = matrix(label, "label") if _ndim(label) == 2 else column(label,
                                                                                     "label")
    if feat is not None:
        columns["feat"] = matrix(feat, "feat")
    table = node_table(pa.table(columns), where=_rows("node"), source=f"from_edges {IN_MEMORY}",
                       feature_columns=["feat"] if feat is not None else [])
    if classes and table.label is not None and table.classes is None:
        table.classes = [str(c) for c in classes]
    return table


def _finish(built: Assembled, info: Info | None) -> GraphData:
    """Tell the user about repairs made while building."""
    if info is not None:
        if built.zeroed:
            info(f'on_nan = "zero": set {built.zeroed} NaN/inf feature values to 0')
        if built.dropped:
            info(f"undirected: merged {built.dropped} repeated node pairs")
    return built.data


__all__ = ["from_edges", "from_tables", "column", "matrix", "as_table"]
