"""Delimited text tables (CSV, TSV, space separated) through pyarrow's multithreaded reader.

:func:`read_delimited` memory-maps the file, skips leading comment and blank lines, sniffs the
delimiter when asked to, and hands the rest to ``pyarrow.csv.read_csv`` without copying it.
pyarrow has no comment syntax: comment lines after the first data line are cut out with one
vectorised pass (numpy) before parsing.

pyarrow's errors carry no line number when it parses in parallel, so on failure we find the
line ourselves, again vectorised: the table knows which line each of its rows came from
(:meth:`Delimited.where`), and a malformed line is found by counting delimiters per line.
"""

from __future__ import annotations

import csv
import mmap
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from graphflow.errors import DataError, first_line

DELIMITERS = {"tab": "\t", "comma": ",", "space": " "}
"""Delimiter names accepted in TOML, besides ``auto`` and any single character."""

BLOCK_SIZE = 8 << 20
"""Bytes per parse block: large enough to amortise, small enough to keep both cores busy."""

_CONVERSION = re.compile(
    r"In CSV column #(\d+): CSV conversion error to (\S+): invalid value '(.*)'", re.S)
_COLUMNS = re.compile(r"Expected (\d+) columns, got (\d+)")


def delimiter_char(name: str) -> str | None:
    """The character for a delimiter option (None for ``auto``); ``ValueError`` if unknown."""
    if name == "auto":
        return None
    if name in DELIMITERS:
        return DELIMITERS[name]
    if len(name) == 1 and name not in "\"\r\n":
        return name
    raise ValueError(f'delimiter = "{name}": use "auto", "tab", "comma", "space" or a single '
                     f"character such as \";\"")


def delimiter_name(char: str) -> str:
    for name, c in DELIMITERS.items():
        if c == char:
            return name
    return repr(char)


@dataclass
class Delimited:
    """A parsed text table, with the line each row came from for messages."""

    path: Path
    table: pa.Table
    delimiter: str
    header: bool
    comment: str
    _data_lines: np.ndarray | None = field(default=None, repr=False)

    def line(self, row: int) -> int:
        """1-based line number of table row ``row``."""
        if self._data_lines is None:
            self._data_lines = _LineScan(_map(self.path), self.comment).data_lines()
        return row_line(self._data_lines, row, self.header)

    def where(self, row: int) -> str:
        """``path:line`` of table row ``row``."""
        return f"{self.path}:{self.line(row)}"


def read_delimited(path: Path, *, delimiter: str | None, header: bool, comment: str = "",
                   select: Mapping[str, str | int] | None = None,
                   types: Mapping[str, pa.DataType] | None = None,
                   ids: Sequence[str] = (), what: str = "table") -> Delimited:
    """Read a delimited text file.

    :param delimiter: one character, or None to sniff tab, comma or space from the first line.
    :param header: whether the first (non-comment) line names the columns.
    :param comment: lines starting with this string are skipped ("" for none).
    :param select: ``{role: column}``, a column given by header name or 0-based position; the
        result has one column per role, named after the role. None keeps every column
        (header names, or ``f0, f1, ...``).
    :param types: pyarrow types for some roles (e.g. ``{"weight": pa.float32()}``); a value
        that does not convert is reported with its line.
    :param ids: roles holding node ids: integers or strings, anything else is read as text.
    :param what: how messages name the file ("edge list", "node table").
    :raises DataError: file missing or empty, unknown column, malformed line, bad value.
    """
    mm = _map(path, what)
    comment_b = comment.encode()
    start, first = _first_line(mm, comment_b)
    if first is None:
        raise DataError(f"{what} {path} has no data: only comments or blank lines")
    if b"\r" in first:  # \r\n was stripped: a lone \r ends lines (classic Mac OS)
        line = mm[:start].count(b"\n") + 1
        raise DataError(f"{what} {path}:{line}: lines end in a bare carriage return (CR); "
                        f"convert the file to LF line ends (e.g. with dos2unix -c mac)")
    if delimiter is None:
        delimiter = _sniff(first)
    names = _header_names(first, delimiter, path, what) if header else \
        [f"f{i}" for i in range(len(_split(first, delimiter)))]
    roles = _resolve(select, names, path, what) if select is not None else {n: n for n in names}
    scan: _LineScan | None = None
    data: pa.Buffer | np.ndarray = pa.py_buffer(mm)[start:]
    if comment_b and _has_comment_lines(mm, comment_b, start):
        scan = _LineScan(mm, comment)
        data = scan.without_comments()
    table_types = {roles[r]: t for r, t in (types or {}).items() if r in roles}
    read = _Reader(path, data, delimiter, header, names, list(roles.values()), table_types)
    try:
        table = read.table(what, comment, ids=[roles[r] for r in ids if r in roles],
                           roles=roles)
    except pa.ArrowException as exc:  # what _Reader does not recognise (a duplicate name...)
        raise DataError(f"{what} {path}: cannot parse it ({first_line(exc)})") from None
    table = table.select(list(roles.values())).rename_columns(list(roles))
    out = Delimited(path=path, table=table, delimiter=delimiter, header=header,
                    comment=comment, _data_lines=scan.data_lines() if scan else None)
    for role, t in (types or {}).items():
        if role in roles and pa.types.is_floating(t):
            _check_finite(out, read, role, roles[role], what)
    return out


def _check_finite(read: Delimited, reader: _Reader, role: str, name: str, what: str) -> None:
    """Raise a ``DataError`` naming the line and the text of the first value of a numeric
    column that is not a finite number: ``nan``, ``inf``, ``1e400``, ``NA``... (pyarrow reads
    some of those as null, some as infinities). Empty fields are left to the caller."""
    column = read.table.column(role)
    values = column.to_numpy() if column.null_count == 0 else \
        column.cast(pa.float64()).fill_null(np.nan).to_numpy()
    bad = ~np.isfinite(values)
    if not bad.any():
        return
    text = reader._read({name: pa.string()}, [name]).column(name)
    text = pc.utf8_trim_whitespace(text).to_numpy(zero_copy_only=False)
    rows = np.flatnonzero(bad & (text != ""))
    if len(rows):
        row = int(rows[0])
        raise DataError(f"{what} {read.where(row)}: {role} {text[row]!r} is not a finite "
                        f"number (column {name!r}); use finite numbers only")


def row_line(data_lines: np.ndarray, row: int, header: bool) -> int:
    """1-based line of table row ``row`` given the 0-based numbers of the data lines."""
    return int(data_lines[row + int(header)]) + 1


def _map(path: Path, what: str = "file") -> mmap.mmap:
    if not path.exists():
        raise DataError(f"{what} not found: {path}")
    if path.is_dir():
        raise DataError(f"{what} {path} is a folder; expected a file")
    if path.stat().st_size == 0:
        raise DataError(f"{what} {path} is empty")
    try:
        with open(path, "rb") as fh:
            return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    except OSError as exc:
        raise DataError(f"cannot read {what} {path}: {exc.strerror or exc}") from None


def _first_line(mm: mmap.mmap, comment: bytes) -> tuple[int, bytes | None]:
    """Offset and text of the first line that is neither blank nor a comment."""
    pos, size = 0, len(mm)
    while pos < size:  # over leading comment lines only
        end = mm.find(b"\n", pos)
        end = size if end < 0 else end
        line = mm[pos:end].rstrip(b"\r")
        if line and not (comment and line.startswith(comment)):
            return pos, line
        pos = end + 1
    return size, None


def _has_comment_lines(mm: mmap.mmap, comment: bytes, start: int, probes: int = 64) -> bool:
    """Whether a line after ``start`` may start with ``comment``.

    Searches for the comment's first byte (a fast memchr; ``#`` is rare in edge lists) and
    checks that a hit starts a line. After ``probes`` hits inside fields it answers True and
    lets the exact, vectorised line scan decide.
    """
    pos = start
    for _ in range(probes):  # over hits of the comment character, at most `probes`
        hit = mm.find(comment[:1], pos)
        if hit < 0:
            return False
        if mm[hit - 1:hit] == b"\n" and mm[hit:hit + len(comment)] == comment:
            return True
        pos = hit + 1
    return True


def _sniff(line: bytes) -> str:
    """Tab, comma or space: the first found in the first line (comma for one column)."""
    for char in ("\t", ",", " "):
        if char.encode() in line:
            return char
    return ","  # a single column


def _split(line: bytes, delimiter: str) -> list[str]:
    text = line.decode("utf-8", errors="replace")
    if not text:
        return [""]
    try:
        return next(csv.reader([text], delimiter=delimiter))
    except csv.Error:  # a NUL byte, a stray quote...: plain splitting still counts columns
        return text.split(delimiter)


def _header_names(line: bytes, delimiter: str, path: Path, what: str) -> list[str]:
    line = line.removeprefix(b"\xef\xbb\xbf")  # a UTF-8 BOM, which pyarrow skips too
    try:
        line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DataError(f"{what} {path}: the header line is not UTF-8 text (byte "
                        f"0x{line[exc.start]:02x}); save the file as UTF-8") from None
    return [name.strip() for name in _split(line, delimiter)]


def _resolve(select: Mapping[str, str | int], names: list[str], path: Path,
             what: str) -> dict[str, str]:
    """``{role: column name in the file}``; two roles may not share a column."""
    out: dict[str, str] = {}
    for role, column in select.items():
        if isinstance(column, int):
            if not 0 <= column < len(names):
                raise DataError(f"{what} {path}: no column {column} for the {role} "
                                f"(the first line has {len(names)} columns, counted from 0)")
            out[role] = names[column]
        elif column in names:
            out[role] = column
        else:
            raise DataError(f"{what} {path}: no column {column!r} for the {role}; columns: "
                            f"{', '.join(names)}")
        other = next((r for r, c in out.items() if c == out[role] and r != role), None)
        if other is not None:
            raise DataError(f"{what} {path}: the {other} and the {role} are both column "
                            f"{out[role]!r}; give them different columns")
    return out


class _Reader:
    """One ``pyarrow.csv.read_csv`` call, with errors turned into ``file:line`` messages."""

    def __init__(self, path: Path, data: pa.Buffer | np.ndarray, delimiter: str, header: bool,
                 names: list[str], columns: list[str], types: dict[str, pa.DataType]):
        self.path, self.data, self.delimiter, self.header = path, data, delimiter, header
        self.names, self.columns, self.types = names, columns, types

    def _read(self, types: dict[str, pa.DataType], columns: list[str]) -> pa.Table:
        source = pa.BufferReader(self.data if isinstance(self.data, pa.Buffer)
                                 else pa.py_buffer(self.data))
        return pacsv.read_csv(
            source,
            read_options=pacsv.ReadOptions(use_threads=True, block_size=BLOCK_SIZE,
                                           column_names=None if self.header else self.names),
            parse_options=pacsv.ParseOptions(delimiter=self.delimiter, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(include_columns=columns, column_types=types,
                                                 strings_can_be_null=False),
        )

    def table(self, what: str, comment: str, *, ids: list[str], roles: dict[str, str]
              ) -> pa.Table:
        """Read; a column pyarrow inferred as numbers that later holds text is re-read as text
        (ids, and columns without a declared type); a declared type that fails is an error."""
        types = dict(self.types)
        for _ in range(len(self.columns) + 1):  # at most one retry per column
            try:
                table = self._read(types, self.columns)
            except pa.ArrowInvalid as exc:
                types[self._failed(exc, what, comment, roles)] = pa.string()
                continue
            odd = [c for c in ids if not _id_type(table.column(c).type)]
            if not odd:
                return table
            types.update({c: pa.string() for c in odd})  # 1.5, dates...: keep the text
        return self._read(types, self.columns)

    def _failed(self, exc: pa.ArrowInvalid, what: str, comment: str,
                roles: dict[str, str]) -> str:
        """Raise a ``DataError`` for ``exc``, or return a column to re-read as text."""
        message = str(exc)
        conversion = _CONVERSION.search(message)
        if conversion:
            index, to_type, value = int(conversion[1]), conversion[2], conversion[3]
            name = self.names[index]  # pyarrow counts the file's columns
            if name not in self.types:
                return name  # 12 in the first block, "n7" later: the column is text
            role = next((r for r, c in roles.items() if c == name), name)
            rows = self._read({name: pa.string()}, [name]).column(name)
            row = pc.index(rows, value).as_py()
            where = str(self.path)
            if row is not None and row >= 0:
                lines = _LineScan(_map(self.path), comment).data_lines()
                where = f"{self.path}:{row_line(lines, row, self.header)}"
            kind = "a number" if pa.types.is_floating(self.types.get(name, pa.null())) or \
                pa.types.is_integer(self.types.get(name, pa.null())) else to_type
            raise DataError(f"{what} {where}: {role} {value!r} is not {kind} "
                            f"(column {name!r})") from None
        columns = _COLUMNS.search(message)
        if columns:
            line, found = _LineScan(_map(self.path), comment).bad_field_count(self.delimiter)
            if line is not None:
                expected = int(columns[1])
                text = _line_text(self.path, line)
                raise DataError(
                    f"{what} {self.path}:{line}: expected {expected} "
                    f"{delimiter_name(self.delimiter)}-separated fields, found {found}: "
                    f"{text!r}") from None
        raise DataError(f"{what} {self.path}: cannot parse it ({first_line(exc)})") from None


def _id_type(t: pa.DataType) -> bool:
    return pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)


def _line_text(path: Path, line: int, limit: int = 80) -> str:
    with open(path, "rb") as fh:
        for i, raw in enumerate(fh, start=1):  # error path only: stops at the bad line
            if i == line:
                text = raw.rstrip(b"\r\n").decode("utf-8", errors="replace")
                return text if len(text) <= limit else text[:limit] + "..."
    return ""


class _LineScan:
    """Line boundaries of a file as numpy arrays: which lines hold data, fields per line."""

    def __init__(self, buffer: mmap.mmap | bytes, comment: str):
        self.arr = np.frombuffer(buffer, dtype=np.uint8)
        newlines = np.flatnonzero(self.arr == ord("\n"))
        self.starts = np.concatenate([[0], newlines + 1])
        self.ends = np.concatenate([newlines, [len(self.arr)]])
        if len(self.starts) > 1 and self.starts[-1] == len(self.arr):  # trailing newline
            self.starts, self.ends = self.starts[:-1], self.ends[:-1]
        last = self.arr[np.maximum(self.ends - 1, 0)]
        self.stripped = self.ends - ((self.ends > self.starts) & (last == ord("\r")))
        blank = self.stripped == self.starts
        commented = np.zeros(len(self.starts), dtype=bool)
        if comment:
            c = comment.encode()
            long_enough = self.stripped - self.starts >= len(c)
            commented = long_enough.copy()
            for k, byte in enumerate(c):  # over the comment's characters
                idx = np.minimum(self.starts + k, len(self.arr) - 1)
                commented &= self.arr[idx] == byte
        self.data = ~blank & ~commented

    def data_lines(self) -> np.ndarray:
        """0-based numbers of the lines that hold data (header included)."""
        return np.flatnonzero(self.data)

    def without_comments(self) -> np.ndarray:
        """The file's bytes with comment and blank lines cut out (newlines kept)."""
        keep_line = self.data
        lengths = self.ends - self.starts + 1  # with the newline
        per_byte = np.repeat(keep_line, lengths)[: len(self.arr)]
        return self.arr[per_byte]

    def bad_field_count(self, delimiter: str) -> tuple[int | None, int]:
        """First data line whose field count differs from the first's, and that count."""
        lines = self.data_lines()
        if len(lines) == 0:
            return None, 0
        delims = np.flatnonzero(self.arr == ord(delimiter))
        counts = (np.searchsorted(delims, self.stripped[lines])
                  - np.searchsorted(delims, self.starts[lines])) + 1
        bad = np.flatnonzero(counts != counts[0])
        if len(bad) == 0:
            return None, 0
        return int(lines[bad[0]]) + 1, int(counts[bad[0]])
