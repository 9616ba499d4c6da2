"""Original ids → internal ids, for the nodes and pairs users name at predict time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import torch

from graphflow.errors import DataError
from graphflow.graph import NodeIds


def lookup(ids: NodeIds | pa.Array, values: pa.Array | list[Any], *, what: str = "node id",
           member: str = "a node of the graph") -> torch.Tensor:
    """int64 internal ids (positions in ``ids``: node ids, or a collection's graph ids) of
    the original ``values``, in order.

    :raises DataError: an id that is not ``member`` (the first one, and how many).
    """
    if not isinstance(values, (pa.Array, pa.ChunkedArray)):
        values = pa.array(values)
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    known = ids.to_arrow() if isinstance(ids, NodeIds) else ids
    if values.null_count:
        raise DataError(f"{what}s include an empty value; give every id")
    if values.type != known.type:
        try:
            values = pc.cast(values, known.type)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
            values, known = pc.cast(values, pa.string()), pc.cast(known, pa.string())
    index = pc.index_in(values, value_set=known)
    missing = index.is_null().to_numpy(zero_copy_only=False)
    if missing.any():
        first = values[int(np.flatnonzero(missing)[0])].as_py()
        count = int(missing.sum())
        raise DataError(f"{what} {first!r} is not {member}"
                        + (f" ({count:,} unknown ids in all)" if count > 1 else "")
                        + "; use ids of the loaded graph")
    return torch.from_numpy(index.to_numpy(zero_copy_only=False).astype(np.int64))


def read_id_file(path: Path, kind: str = "node") -> pa.Array:
    """The ``id`` column (or the only column) of a Parquet, CSV or text file of ``kind``
    (node or graph) ids; a text file (``.txt``) has one id per line, without a header."""
    path = Path(path)
    if not path.is_file():
        raise DataError(f"{kind} id file not found: {path}")
    try:
        if path.suffix.lower() in (".parquet", ".pq"):
            import pyarrow.parquet as pq

            table = pq.read_table(path)
        else:
            import pyarrow.csv as pcsv

            header = path.suffix.lower() != ".txt"
            table = pcsv.read_csv(path, read_options=pcsv.ReadOptions(
                autogenerate_column_names=not header))
    except (pa.ArrowInvalid, OSError) as exc:
        raise DataError(f"{path}: cannot read {kind} ids ({str(exc).splitlines()[0][:150]})") \
            from None
    if "id" in table.column_names:
        return table.column("id").combine_chunks()
    if table.num_columns == 1:
        return table.column(0).combine_chunks()
    raise DataError(f"{path}: no id column (columns: {', '.join(table.column_names)}); name "
                    f"the {kind} id column id")
