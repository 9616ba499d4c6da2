"""Typed node and edge tables (CSV, TSV or Parquet), one table per node type and per relation,
described in TOML (in the spirit of GraphStorm's graph construction JSON)::

    [[load.nodes]]
    type = "author"
    path = "authors.csv"          # id, features, label, masks
    [[load.nodes]]
    type = "venue"                # no table: the ids its edges name, no data

    [[load.edges]]
    relation = "writes"
    src_type = "author"
    dst_type = "paper"
    path = "writes.parquet"       # src, dst (+ weight)

The file format follows the suffix: ``.parquet`` / ``.pq`` is Parquet, anything else
delimited text with a header (the delimiter sniffed, or given). Messages name the file and the
line (text) or row (Parquet).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.hetero.build import REVERSE_PREFIX, RelationEdges, typed_graph
from graphflow.io.delimited import delimiter_char, read_delimited
from graphflow.io.nodes import PARQUET_SUFFIXES, NodeTable, OnNan, node_table, read_node_file
from graphflow.io.parquet import read_parquet
from graphflow.options import option

SPLITS = {"train": "train_mask", "val": "val_mask", "valid": "val_mask",
          "validation": "val_mask", "test": "test_mask"}


@dataclass
class NodeTableSpec:
    """One ``[[load.nodes]]`` table: the nodes of one type."""

    type: str = option(doc="The node type.")
    path: Path | None = option(
        None, "The node table (.csv, .tsv, .parquet). None: the type's nodes are the ids its "
              "edges name, without data.")
    id: str = option("id", "The id column (integers or strings, unique).")
    features: list[str] | None = option(
        None, "Feature columns. Default: the list column (feat if several), else every "
              "numeric column besides id, label, split and masks; [] for none.")
    label: str = option("label", "The label column, used when present (strings become class "
                                 "ids in sorted order; integers are class ids; empty = "
                                 "unlabelled).")
    split: str = option(
        "", 'A column naming each node\'s split ("train", "val" or "test"; empty: none), '
            "read into train_mask / val_mask / test_mask. Bool columns train_mask, val_mask "
            "and test_mask are read as they are.")
    delimiter: str = option("auto", 'Text tables: "auto", "tab", "comma", "space" or a '
                                    "character.")

    def __post_init__(self) -> None:
        if not self.type:
            raise ValueError("type must name the node type")
        delimiter_char(self.delimiter)


@dataclass
class EdgeTableSpec:
    """One ``[[load.edges]]`` table: the edges of one relation."""

    relation: str = option(doc="The relation (edge type) name.")
    src_type: str = option(doc="The node type of the sources.")
    dst_type: str = option(doc="The node type of the targets.")
    path: Path = option(doc="The edge table (.csv, .tsv, .parquet).")
    src: str = option("src", "The source id column.")
    dst: str = option("dst", "The target id column.")
    weight: str = option("", 'The weight column; "" for none (a column named weight is then '
                             "not read).")
    reverse: bool | None = option(None, "Add rev-<relation> (targets to sources, same weights); "
                                        "default: the loader's reverse.")
    delimiter: str = option("auto", 'Text tables: "auto", "tab", "comma", "space" or a '
                                    "character.")

    def __post_init__(self) -> None:
        for key in ("relation", "src_type", "dst_type"):
            if not getattr(self, key):
                raise ValueError(f"{key} must not be empty")
        delimiter_char(self.delimiter)

    @property
    def canonical(self) -> tuple[str, str, str]:
        return (self.src_type, self.relation, self.dst_type)


def read_typed_tables(nodes: list[NodeTableSpec], edges: list[EdgeTableSpec], *,
                      reverse: bool = False, target: str = "", name: str = "graph",
                      on_nan: OnNan = "error") -> GraphData:
    """The typed graph the tables describe (one type and one relation: a homogeneous one).

    :raises DataError: a node type declared twice, an edge table naming an undeclared node
        type, two tables of one canonical relation, an endpoint missing from its type's node
        table (file and line or row, and the id), and every error of the table readers.
    """
    if not nodes:
        raise DataError("[[load.nodes]]: declare at least one node type (type = ...; path is "
                        "optional)")
    if not edges:
        raise DataError("[[load.edges]]: give at least one edge table")
    tables: dict[str, NodeTable | None] = {}
    for spec in nodes:  # over tables
        if spec.type in tables:
            raise DataError(f"[[load.nodes]]: node type {spec.type!r} is declared twice; "
                            f"give each type one table")
        tables[spec.type] = read_nodes(spec) if spec.path is not None else None
    relations = [read_edges(e) for e in edges]
    reverses = [RelationEdges(r.dst_type, REVERSE_PREFIX + r.relation, r.src_type, r.dst, r.src,
                              r.weight, r.where, f"{r.source} (reversed)")
                for r, e in zip(relations, edges)
                if (e.reverse if e.reverse is not None else reverse)]
    return typed_graph(tables, relations + reverses, name=name, target=target or None,
                       on_nan=on_nan)


def read_nodes(spec: NodeTableSpec) -> NodeTable:
    """One node table, with its split column read into masks."""
    assert spec.path is not None
    read = read_node_file(spec.path, id_column=spec.id, delimiter=delimiter_char(spec.delimiter))
    table = read.table
    masks = {}
    if spec.split:
        if spec.split not in table.column_names:
            raise DataError(f"node table {spec.path}: no split column {spec.split!r}; columns: "
                            f"{', '.join(table.column_names)}")
        masks = _split_masks(table.column(spec.split), spec, read.where)
        table = table.drop_columns([spec.split])
    out = node_table(table, where=read.where, source=str(spec.path), id_column=spec.id,
                     label_column=spec.label, feature_columns=spec.features)
    if read.classes and out.label is not None and out.classes is None:
        out.classes = read.classes
    for mask, values in masks.items():
        if mask in out.masks:
            raise DataError(f"node table {spec.path}: both a {mask} column and split = "
                            f"{spec.split!r}; keep one")
        out.masks[mask] = values
    return out


def _split_masks(column: pa.ChunkedArray, spec: NodeTableSpec, where) -> dict[str, torch.Tensor]:
    values = pc.utf8_lower(pc.utf8_trim_whitespace(column.cast(pa.string()).fill_null("")))
    allowed = pa.array(["", *SPLITS])
    bad = pc.invert(pc.is_in(values, value_set=allowed)).combine_chunks()
    if pc.any(bad).as_py():
        row = int(np.flatnonzero(bad.to_numpy(zero_copy_only=False))[0])
        raise DataError(f"{where(row)}: split {column[row].as_py()!r} is not train, val or "
                        f"test (or empty)")
    out = {}
    for name, mask in SPLITS.items():
        hit = torch.from_numpy(pc.equal(values, name).combine_chunks().to_numpy(
            zero_copy_only=False).astype(bool))
        out[mask] = out[mask] | hit if mask in out else hit
    return {m: v for m, v in out.items() if v.any()}


def read_edges(spec: EdgeTableSpec) -> RelationEdges:
    """One edge table as the edges of its relation."""
    what = f"edge table ({spec.relation})"
    select = {"src": spec.src, "dst": spec.dst, **({"weight": spec.weight} if spec.weight
                                                    else {})}
    if spec.path.suffix.lower() in PARQUET_SUFFIXES:
        read = read_parquet(spec.path, select=select, what=what)
        table, where = read.table, read.where
    else:
        text = read_delimited(spec.path, delimiter=delimiter_char(spec.delimiter), header=True,
                              select=select, types={"weight": pa.float32()},
                              ids=["src", "dst"], what=what)
        table, where = text.table, text.where
    for role in ("src", "dst"):
        t = table.column(role).type
        if not (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
                or pa.types.is_null(t)):
            raise DataError(f"{what} {spec.path}: {select[role]!r} holds {t}; node ids must be "
                            f"integers or strings")
    return RelationEdges(spec.src_type, spec.relation, spec.dst_type, table.column("src"),
                         table.column("dst"),
                         table.column("weight") if "weight" in table.column_names else None,
                         where=where, source=f"edge table {spec.path}")
