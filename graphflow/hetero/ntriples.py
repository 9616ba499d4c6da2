"""A vectorised N-Triples reader (``.nt``, ``.nt.gz``).

Each statement is one line, ``subject predicate object .``: the subject an IRI (``<...>``)
or a blank node (``_:b1``), the predicate an IRI, the object an IRI, a blank node or a literal
(``"text"``, ``"text"@en``, ``"1994"^^<http://www.w3.org/2001/XMLSchema#gYear>``). Empty
lines and ``#`` comments are skipped. Arrow's CSV reader splits the lines, and one RE2
regular expression in Arrow (``pyarrow.compute.extract_regex``) splits the statements: no
Python loop over lines; only the distinct literals that hold escapes (``\\"``, ``\\n``,
``\\u00e9``...) are decoded one by one. A line that is not a statement is reported with its
line number.
"""

from __future__ import annotations

import gzip
import re
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.csv as pacsv

from graphflow.errors import DataError

IRI, BLANK, LITERAL = 0, 1, 2
"""Kinds of terms (:attr:`Triples.subject_kind` / :attr:`Triples.object_kind`)."""

_IRI = r"<[^>]*>"
_BLANK = r"_:[^ \t]+"
_LITERAL = r'"(?:[^"\\]|\\.)*"(?:@[A-Za-z0-9-]+|\^\^<[^>]*>)?'
_STATEMENT = (rf"^[ \t]*(?P<s>{_IRI}|{_BLANK})[ \t]+(?P<p>{_IRI})[ \t]+"
              rf"(?P<o>{_IRI}|{_BLANK}|{_LITERAL})[ \t]*\.[ \t]*(?:#.*)?$")
_LEXICAL = r'^"(?P<v>(?:[^"\\]|\\.)*)"'
_ESCAPE = re.compile(r'\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)')
_ECHAR = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'",
          "\\": "\\"}


@dataclass
class Triples:
    """Statements as columns, row ``i`` being the ``i``-th statement of the file.

    ``subject`` / ``object``: IRIs without their brackets, blank nodes as written (``_:b1``),
    literals as their value (escapes decoded, no quotes, language or datatype).
    ``object_raw``: the object exactly as written (tells ``"1"`` from ``"1"^^<...#int>``).
    ``line``: the line of each statement, from 1.
    """

    path: Path
    subject: pa.Array
    predicate: pa.Array
    object: pa.Array
    object_raw: pa.Array
    subject_kind: np.ndarray
    object_kind: np.ndarray
    line: np.ndarray

    def __len__(self) -> int:
        return len(self.subject)

    def where(self, row: int) -> str:
        return f"{self.path}:{int(self.line[row])}"

    def take(self, rows: np.ndarray) -> Triples:
        index = pa.array(rows.astype(np.int64))
        return Triples(self.path, self.subject.take(index), self.predicate.take(index),
                       self.object.take(index), self.object_raw.take(index),
                       self.subject_kind[rows], self.object_kind[rows], self.line[rows])


def read_ntriples(path: Path) -> Triples:
    """Read an N-Triples file (gzip-compressed when it ends in ``.gz``).

    :raises DataError: a missing or unreadable file, a line that is not a statement.
    """
    column = _lines(path)
    stripped = pc.utf8_trim_whitespace(column)
    keep = pc.and_(pc.not_equal(stripped, ""), pc.invert(pc.starts_with(stripped, "#")))
    line = np.flatnonzero(keep.to_numpy(zero_copy_only=False)) + 1
    column = column.filter(keep)
    if len(column) == 0:
        raise DataError(f"{path}: no statements (expected N-Triples lines "
                        f"'<subject> <predicate> <object> .')")
    parts = pc.extract_regex(column, _STATEMENT)
    if parts.null_count:
        bad = int(np.flatnonzero(parts.is_null().to_numpy(zero_copy_only=False))[0])
        shown = column[bad].as_py()
        shown = shown if len(shown) <= 120 else shown[:117] + "..."
        raise DataError(f"{path}:{int(line[bad])}: not an N-Triples statement: {shown!r} "
                        f"(expected '<subject> <predicate> <object> .', one per line)")
    s, p, o = (parts.field(k) for k in ("s", "p", "o"))
    s_kind, s_value = _terms(s)
    o_kind, o_value = _terms(o)
    return Triples(path=path, subject=s_value, predicate=_unbracket(p), object=o_value,
                   object_raw=o, subject_kind=s_kind, object_kind=o_kind, line=line)


def _lines(path: Path) -> pa.Array:
    """Every line of the file (blank ones included, so row ``i`` is line ``i + 1``).

    Arrow's multithreaded CSV reader splits the lines (gzip by the suffix), with a delimiter,
    ``\\x01``, that statements do not hold; a file that has one, or is not UTF-8, is read
    line by line in Python instead, which names the bad byte."""
    if not path.is_file():
        raise DataError(f"N-Triples file not found: {path}")
    try:
        table = pacsv.read_csv(
            path, read_options=pacsv.ReadOptions(column_names=["line"]),
            parse_options=pacsv.ParseOptions(delimiter="\x01", quote_char=False,
                                             escape_char=False, ignore_empty_lines=False),
            convert_options=pacsv.ConvertOptions(column_types={"line": pa.string()},
                                                 strings_can_be_null=False,
                                                 quoted_strings_can_be_null=False))
        return table.column("line").combine_chunks()
    except (pa.ArrowInvalid, OSError):
        return pa.array(_read_text(path).splitlines(), type=pa.large_string())


def _read_text(path: Path) -> str:
    if not path.is_file():
        raise DataError(f"N-Triples file not found: {path}")
    try:
        raw = path.read_bytes()
        if path.suffix.lower() == ".gz":
            raw = gzip.decompress(raw)
        return raw.decode("utf-8")
    except (OSError, EOFError, zlib.error) as exc:
        raise DataError(f"{path}: cannot read it ({exc}); is it a gzip-compressed "
                        f"N-Triples file?") from None
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise DataError(f"{path}:{line}: not UTF-8 text (byte {exc.start} of the file); "
                        f"N-Triples files are UTF-8") from None


def _unbracket(iris: pa.Array) -> pa.Array:
    return pc.utf8_slice_codeunits(iris, 1, -1)


def _terms(terms: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """Kinds and values of a column of terms (IRIs, blank nodes, literals)."""
    kind = np.full(len(terms), IRI, dtype=np.int8)
    kind[pc.starts_with(terms, "_:").to_numpy(zero_copy_only=False)] = BLANK
    literal = pc.starts_with(terms, '"').to_numpy(zero_copy_only=False)
    kind[literal] = LITERAL
    values = pc.if_else(pa.array(kind == IRI), _unbracket(terms), terms)
    if literal.any():
        lexical = _lexical(terms.filter(pa.array(literal)))
        values = pc.replace_with_mask(values, pa.array(literal), lexical)
    return kind, values


def _lexical(literals: pa.Array) -> pa.Array:
    """The values of literals: quotes, language and datatype dropped, escapes decoded."""
    values = pc.extract_regex(literals, _LEXICAL).field("v")
    escaped = pc.match_substring(values, "\\").to_numpy(zero_copy_only=False)
    if not escaped.any():
        return values
    unique = pc.unique(values.filter(pa.array(escaped)))
    decoded = pa.array([_unescape(v) for v in unique.to_pylist()], type=values.type)
    position = pc.index_in(values, value_set=unique)
    return pc.if_else(pc.is_null(position), values, decoded.take(position.fill_null(0)))


def _unescape(text: str) -> str:
    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        if code[0] in "uU" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ECHAR.get(code, code)

    return _ESCAPE.sub(one, text)
