"""Parquet in and out: batched reads with clear errors, atomic writes in row groups.

* :func:`read_parquet` reads the columns a loader needs, batch by batch, and names the file
  and the available columns when one is missing.
* :func:`write_parquet` writes a table with run metadata in its schema, ``row_group_size``
  rows per group, to a temporary file that is renamed into place only once complete.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from graphflow.errors import DataError, first_line
from graphflow.io.atomic import atomic_path

EDGES_FILE = "edges.parquet"
NODES_FILE = "nodes.parquet"
"""The two files of a graph folder (the ``parquet`` exporter's ``what = "graph"``, read back by
the ``parquet`` loader's ``path``)."""

BATCH_ROWS = 1 << 20
METADATA_KEY = b"graphflow"
"""Schema metadata key holding the run metadata (JSON) of files graphflow writes."""


@dataclass
class ParquetTable:
    """A table read from a Parquet file; rows are named ``file, row r`` in messages."""

    path: Path
    table: pa.Table

    def where(self, row: int) -> str:
        return f"{self.path}, row {row}"


def open_parquet(path: Path, what: str) -> pq.ParquetFile:
    if not path.exists():
        raise DataError(f"{what} not found: {path}")
    if path.is_dir():
        raise DataError(f"{what} {path} is a folder; expected a Parquet file")
    try:
        return pq.ParquetFile(path)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:  # damaged metadata: Arrow's
        # own errors, and names or keys that are not UTF-8
        raise DataError(f"{what} {path} is not a readable Parquet file "
                        f"({first_line(exc)})") from None


def read_parquet(path: Path, *, select: Mapping[str, str] | None = None,
                 optional: tuple[str, ...] = (), what: str = "table") -> ParquetTable:
    """Read ``select`` (``{role: column}``; None for every column) from a Parquet file.

    The result's columns are named after the roles. Roles in ``optional`` are left out when
    their column is absent; any other missing column is an error that lists the columns.
    """
    pf = open_parquet(path, what)
    names = pf.schema_arrow.names
    if select is None:
        roles = {n: n for n in names}
    else:
        roles = {}
        for role, column in select.items():
            if column in names:
                roles[role] = column
            elif role not in optional:
                raise DataError(f"{what} {path}: no column {column!r} for the {role}; columns: "
                                f"{', '.join(names)}")
    columns = list(roles.values())
    try:
        batches = list(pf.iter_batches(batch_size=BATCH_ROWS, columns=columns, use_threads=True))
        schema = pa.schema([pf.schema_arrow.field(c) for c in columns])
        table = pa.Table.from_batches(batches, schema=schema)
    except (pa.ArrowException, OSError, UnicodeDecodeError) as exc:
        raise DataError(f"{what} {path}: cannot read it ({first_line(exc)})") from None
    return ParquetTable(path=path, table=table.rename_columns(list(roles)))


def run_metadata(info: Mapping[str, Any]) -> dict[bytes, bytes]:
    """Schema metadata for ``info`` (JSON under the ``graphflow`` key)."""
    return {METADATA_KEY: json.dumps(info, default=str, sort_keys=True).encode()}


def read_run_metadata(path: Path) -> dict[str, Any]:
    """The run metadata a graphflow-written Parquet file carries ({} when none)."""
    meta = pq.read_schema(path).metadata or {}
    raw = meta.get(METADATA_KEY)
    return json.loads(raw) if raw else {}


def write_parquet(path: Path, table: pa.Table, *, metadata: Mapping[bytes, bytes] | None = None,
                  row_group_size: int = BATCH_ROWS) -> Path:
    """Write ``table`` atomically, ``row_group_size`` rows per row group."""
    schema = table.schema.with_metadata({**(table.schema.metadata or {}), **(metadata or {})})
    table = table.replace_schema_metadata(schema.metadata)
    with atomic_path(path) as tmp:
        with pq.ParquetWriter(tmp, schema) as writer:
            for start in range(0, max(table.num_rows, 1), row_group_size):  # over row groups
                writer.write_table(table.slice(start, row_group_size))
    return path
