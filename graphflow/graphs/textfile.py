"""Numeric text files of the TU Dortmund format: one row per line, values separated by commas.

:func:`read_numbers` parses with pyarrow's CSV reader (vectorised, multithreaded). When pyarrow
refuses the file, the first bad line is found and named (a second pass over the lines, on the
error path only).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from graphflow.errors import DataError


def read_numbers(path: Path, *, integer: bool, columns: int | None = None) -> np.ndarray:
    """The file's values as an (rows, cols) array (int64 or float64).

    :param columns: the number of values each line must hold (default: the first line's).
    :raises DataError: a line with another number of values, or a value that is not a number,
        naming the file and line.
    """
    if not path.is_file():
        raise DataError(f"{path} not found")
    dtype = pa.int64() if integer else pa.float64()
    with open(path, "rb") as fh:
        first = fh.readline()
    if not first.strip():
        if path.stat().st_size == 0:
            return np.zeros((0, columns or 1), dtype=np.int64 if integer else np.float64)
        _locate(path, integer, columns)
    width = columns if columns is not None else len(first.split(b","))
    names = [f"c{i}" for i in range(width)]
    try:
        table = pacsv.read_csv(
            path, read_options=pacsv.ReadOptions(column_names=names),
            parse_options=pacsv.ParseOptions(delimiter=",", ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types={n: dtype for n in names}))
    except pa.ArrowInvalid:
        _locate(path, integer, width)
        raise  # _locate always raises; this keeps type checkers content
    out = np.empty((table.num_rows, width), dtype=np.int64 if integer else np.float64)
    for i, name in enumerate(names):
        col = table.column(name)
        if col.null_count:
            row = int(np.flatnonzero(col.is_null().to_numpy(zero_copy_only=False))[0])
            raise DataError(f"{path} line {row + 1}: an empty value; every line needs {width} "
                            f"numbers")
        out[:, i] = col.to_numpy()
    return out


def _locate(path: Path, integer: bool, width: int | None) -> None:
    """Raise the DataError naming the first malformed line of ``path``."""
    kind = "an integer" if integer else "a number"
    with open(path, encoding="utf-8", errors="replace") as fh:
        for number, line in enumerate(fh, start=1):
            values = line.strip().split(",")
            if width is None:
                width = len(values)
            if not line.strip():
                raise DataError(f"{path} line {number}: an empty line; every line needs "
                                f"{width} value{'s' if width > 1 else ''}")
            if len(values) != width:
                raise DataError(f"{path} line {number}: {len(values)} values, expected {width} "
                                f"(as on the first line)")
            for value in values:
                try:
                    int(value) if integer else float(value)
                except ValueError:
                    raise DataError(f"{path} line {number}: {value.strip()!r} is not "
                                    f"{kind}") from None
    raise DataError(f"{path} could not be parsed as comma-separated numbers")
