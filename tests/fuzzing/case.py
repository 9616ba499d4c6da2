"""A fuzz case (files + pipeline + overrides) and strategies that corrupt bytes."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

PIPELINE = "pipeline.toml"


@dataclass
class Case:
    """One generated input: what to write into a fresh folder and how to run it.

    :ivar component: the component (or config area) under test, for the per-component counts.
    :ivar files: ``{relative path: bytes}`` written beside the pipeline.
    :ivar pipeline: the pipeline file's bytes (may be malformed on purpose).
    :ivar overrides: ``--set`` values.
    :ivar names: a failure message must contain one of these (file names, keys, sections).
    """

    component: str
    files: dict[str, bytes]
    pipeline: bytes
    overrides: tuple[str, ...] = ()
    names: tuple[str, ...] = field(default=())

    def write(self, folder: Path) -> Path:
        """Write the files and the pipeline into ``folder``; return the pipeline's path."""
        folder.mkdir(parents=True, exist_ok=True)
        for name, data in self.files.items():
            path = folder / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        (folder / PIPELINE).write_bytes(self.pipeline)
        return folder / PIPELINE

    def describe(self) -> str:
        """A short, printable account of the case for reports."""
        files = {k: (v[:120] + (b"..." if len(v) > 120 else b"")) for k, v in self.files.items()}
        return (f"component={self.component} overrides={list(self.overrides)}\n"
                f"pipeline={self.pipeline[:600]!r}\nfiles={files!r}")


def toml_value(value: Any) -> str:
    """A Python value as TOML text (strings JSON-quoted, which TOML accepts for BMP text)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value != value:
            return "nan"
        if value in (float("inf"), float("-inf")):
            return "inf" if value > 0 else "-inf"
        return repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}"
    return json.dumps(str(value))


def section(name: str, options: dict[str, Any], *, array: bool = False) -> str:
    head = f"[[{name}]]" if array else f"[{name}]"
    return head + "\n" + "".join(f"{k} = {toml_value(v)}\n" for k, v in options.items())


NON_UTF8 = (b"\xff", b"\xfe\xff", b"\xc3\x28", b"\x80abc", b"\xed\xa0\x80", b"\x00")


@st.composite
def mangled(draw: st.DrawFn, data: bytes, *, allow_identity: bool = True) -> bytes:
    """``data``, or a corrupted copy: truncated, bytes flipped or inserted, non-UTF-8 bytes,
    other line endings, a BOM, or nothing at all."""
    kinds = ["truncate", "flip", "insert", "non_utf8", "crlf", "cr", "bom", "empty", "repeat"]
    if allow_identity:
        kinds.append("same")
    kind = draw(st.sampled_from(kinds))
    n = len(data)
    if kind == "same" or (n == 0 and kind not in ("insert", "non_utf8", "bom")):
        return data
    if kind == "truncate":
        return data[: draw(st.integers(0, max(n - 1, 0)))]
    if kind == "flip":
        out = bytearray(data)
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, n - 1))
            out[i] = draw(st.integers(0, 255))
        return bytes(out)
    if kind == "insert":
        i = draw(st.integers(0, n))
        return data[:i] + draw(st.binary(min_size=1, max_size=8)) + data[i:]
    if kind == "non_utf8":
        i = draw(st.integers(0, n))
        return data[:i] + draw(st.sampled_from(NON_UTF8)) + data[i:]
    if kind == "crlf":
        return data.replace(b"\n", b"\r\n")
    if kind == "cr":
        return data.replace(b"\n", b"\r")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "repeat":
        return data + data
    return b""
