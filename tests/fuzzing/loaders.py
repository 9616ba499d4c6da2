"""Strategies of malformed input for every first-party loader.

Each strategy draws a small file (or folder) in the loader's format that is valid, slightly
wrong or badly broken, the loader's options (some of them wrong), and often an exporter, so
that a run that gets through writes outputs (which then need a complete ``run.json``).
"""

from __future__ import annotations

import io
import math
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from hypothesis import strategies as st

from fuzzing.case import Case, mangled, section

# --- pieces ---------------------------------------------------------------------------------

ODD_TEXT = ["", "NA", "nan", "NaN", "null", "inf", "-inf", "1.5", "1e400", "0x1f", " 3", "-0",
            "é", "a b", '"q"', "\t", "#", "1,5", "true"]
ids = st.one_of(st.integers(-3, 12), st.integers(2**63 - 2, 2**64 + 2),
                st.sampled_from(["a", "b", "c", "node_1", *ODD_TEXT]),
                st.text(alphabet="abc,; \t\"'#é\\", max_size=4))
numbers = st.one_of(st.floats(allow_nan=True, allow_infinity=True, width=32),
                    st.integers(-2, 5), st.sampled_from(ODD_TEXT))
DELIMS = ["\t", ",", " ", ";", "|"]


def _text(value: Any) -> str:
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return str(value)


def _export(draw: st.DrawFn) -> str:
    """Maybe an exporter after the load (a run that succeeds then writes files)."""
    what = draw(st.sampled_from([None, None, "graph", "embeddings"]))
    if what is None:
        return ""
    return section("export", {"type": draw(st.sampled_from(["parquet", "csv", "npy"])),
                              "what": what}, array=True)


def _pipeline(load: dict[str, Any], draw: st.DrawFn) -> bytes:
    head = section("pipeline", {"name": "fuzz", "seed": 0, "device": "cpu"})
    return (head + section("load", load) + _export(draw)).encode()


COMMON_NAMES = ("artifact", "load", "export")
"""An error in an option names its section ([load], [export]); an exporter of something no
stage made names the artifact."""


# --- edgelist -------------------------------------------------------------------------------

@st.composite
def delimited_table(draw: st.DrawFn, *, min_columns: int = 0, header: list[str] | None = None,
                    rows: int = 8) -> bytes:
    delim = draw(st.sampled_from(DELIMS))
    width = draw(st.integers(max(min_columns, 1), 4))
    lines = []
    if header is not None:
        lines.append(delim.join(header))
    for _ in range(draw(st.integers(0, rows))):
        n = draw(st.sampled_from([width, width, width, max(width - 1, 0), width + 1]))
        fields = [_text(draw(st.one_of(ids, numbers))) for _ in range(n)]
        lines.append(delim.join(fields))
        if draw(st.integers(0, 9)) == 0:
            lines.append(draw(st.sampled_from(["# comment", "", "%x", "  "])))
    text = "\n".join(lines) + draw(st.sampled_from(["\n", "", "\n\n"]))
    return draw(mangled(text.encode("utf-8", errors="surrogatepass")))


@st.composite
def node_table_file(draw: st.DrawFn, name: str) -> tuple[str, bytes]:
    """A node table as CSV or Parquet: duplicate / missing ids, NaN features, odd labels."""
    n = draw(st.integers(0, 6))
    node_ids = [draw(ids) for _ in range(n)]
    feats = [[draw(st.floats(allow_nan=True, allow_infinity=True, width=32)) for _ in range(2)]
             for _ in range(n)]
    labels = [draw(st.one_of(st.integers(-1, 3), st.sampled_from(["x", "y", ""]))) for _ in range(n)]
    if draw(st.booleans()):
        lines = ["id,x1,x2,label,train_mask"] + [
            f"{_text(i)},{_text(f[0])},{_text(f[1])},{_text(lab)},{draw(st.sampled_from(['true', '1', 'x', '']))}"
            for i, f, lab in zip(node_ids, feats, labels)]
        return f"{name}.csv", draw(mangled("\n".join(lines).encode()))
    import pyarrow as pa

    id_values = [str(i) for i in node_ids] if draw(st.booleans()) else \
        [i if isinstance(i, int) and -2**63 <= i < 2**63 else 0 for i in node_ids]
    columns: dict[str, Any] = {"id": id_values}
    if draw(st.booleans()):
        width = draw(st.integers(0, 3))
        columns["feat"] = [[float(v) for v in f[: width if draw(st.booleans()) else 2]]
                           for f in feats]
    else:
        columns["x1"] = [f[0] for f in feats]
    if draw(st.booleans()):
        columns["label"] = [str(x) for x in labels] if draw(st.booleans()) else \
            [float(x) if isinstance(x, int) else 0.5 for x in labels]
    if draw(st.booleans()):
        columns["val_mask"] = [draw(st.sampled_from(["yes", "no"])) for _ in range(n)]
    return f"{name}.parquet", draw(mangled(_parquet_bytes(pa.table(columns))))


def _parquet_bytes(table: Any) -> bytes:
    import pyarrow as pa
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


@st.composite
def edgelist(draw: st.DrawFn) -> Case:
    header = draw(st.booleans())
    names = ["src", "dst", "w", "x"]
    data = draw(delimited_table(header=names[: draw(st.integers(1, 4))] if header else None))
    column = st.one_of(st.integers(-1, 4), st.sampled_from(["src", "dst", "w", "nope"]))
    load: dict[str, Any] = {"type": "edgelist", "path": "edges.txt"}
    options = {
        "delimiter": st.sampled_from(["auto", "tab", "comma", "space", ";", "|", "xx", ""]),
        "header": st.booleans(), "comment": st.sampled_from(["#", "", "%", "//"]),
        "directed": st.booleans(), "source": column, "target": column, "weight_column": column,
        "on_nan": st.sampled_from(["error", "zero", "maybe"]),
    }
    for key, strategy in options.items():
        if draw(st.booleans()):
            load[key] = draw(strategy)
    if header and "header" not in load:
        load["header"] = True
    files = {"edges.txt": data}
    if draw(st.integers(0, 3)) == 0:
        table, table_data = draw(node_table_file("nodes"))
        files[table] = table_data
        load["nodes"] = table
    names = ("edges.txt", "nodes.", *options, "delimiter", "column")
    return Case("edgelist", files, _pipeline(load, draw), names=COMMON_NAMES + names)


# --- parquet --------------------------------------------------------------------------------

ARROW_COLUMNS = ["int", "str", "float", "bool", "null", "list", "mixed_ints_as_str", "big"]


def _arrow_column(kind: str, n: int, draw: st.DrawFn) -> Any:
    import pyarrow as pa

    if kind == "int":
        return pa.array([draw(st.integers(-2, 8)) for _ in range(n)], pa.int64())
    if kind == "str":
        return pa.array([_text(draw(ids)) for _ in range(n)], pa.string())
    if kind == "float":
        return pa.array([draw(st.floats(allow_nan=True, allow_infinity=True)) for _ in range(n)])
    if kind == "bool":
        return pa.array([draw(st.booleans()) for _ in range(n)])
    if kind == "null":
        return pa.nulls(n)
    if kind == "list":
        return pa.array([[draw(st.integers(0, 3))] for _ in range(n)])
    if kind == "big":
        return pa.array([draw(st.integers(0, 2**64 - 1)) for _ in range(n)], pa.uint64())
    return pa.array([str(draw(st.integers(0, 5))) if draw(st.booleans()) else None
                     for _ in range(n)], pa.string())


@st.composite
def parquet(draw: st.DrawFn) -> Case:
    import pyarrow as pa

    n = draw(st.integers(0, 8))
    columns = {}
    for name in draw(st.lists(st.sampled_from(["src", "dst", "weight", "a", "b"]), min_size=0,
                              max_size=4, unique=True)):
        columns[name] = _arrow_column(draw(st.sampled_from(ARROW_COLUMNS)), n, draw)
    edges = _parquet_bytes(pa.table(columns) if columns else pa.table({"x": pa.nulls(0)}))
    files = {"g/edges.parquet": draw(mangled(edges))}
    if draw(st.booleans()):
        name, data = draw(node_table_file("g/nodes"))
        if name.endswith(".csv"):
            name = "g/nodes.parquet"  # a CSV under a .parquet name: corrupt
        files[name] = data
    load: dict[str, Any] = {"type": "parquet"}
    where = draw(st.sampled_from(["folder", "file_as_path", "edges", "edges_nodes", "both",
                                  "missing"]))
    if where == "folder":
        load["path"] = "g"
    elif where == "file_as_path":
        load["path"] = "g/edges.parquet"
    elif where in ("edges", "edges_nodes"):
        load["edges"] = "g/edges.parquet"
        if where == "edges_nodes":
            load["nodes"] = "g/nodes.parquet"
    elif where == "both":
        load.update(path="g", edges="g/edges.parquet")
    else:
        load["path"] = "nowhere"
    for key in ("src_column", "dst_column", "weight_column"):
        if draw(st.integers(0, 3)) == 0:
            load[key] = draw(st.sampled_from(["src", "dst", "weight", "a", "b", "zz"]))
    if draw(st.booleans()):
        load["directed"] = draw(st.booleans())
    names = ("edges.parquet", "nodes.parquet", "nowhere", "path", "edges", "src_column",
             "dst_column", "weight_column")
    return Case("parquet", files, _pipeline(load, draw), names=COMMON_NAMES + names)


# --- planetoid ------------------------------------------------------------------------------

PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")


def _planetoid_files() -> dict[str, bytes]:
    from graphflow.testing import planetoid_dir

    root = planetoid_dir()
    out = {}
    for part in PARTS:
        path = root / f"ind.cora.{part}"
        if path.is_file():
            out[part] = path.read_bytes()
    return out


_PLANETOID: dict[str, bytes] | None = None


@st.composite
def planetoid(draw: st.DrawFn) -> Case:
    """Cora's raw files with one part truncated, flipped, emptied, replaced or missing
    (pickles are only cut or flipped, never built from arbitrary bytes)."""
    global _PLANETOID
    if _PLANETOID is None:
        _PLANETOID = _planetoid_files()
    files = {f"raw/ind.cora.{p}": data for p, data in _PLANETOID.items()}
    part = draw(st.sampled_from(PARTS))
    key = f"raw/ind.cora.{part}"
    action = draw(st.sampled_from(["truncate", "flip", "empty", "missing", "garbage_index"]))
    if action == "missing" or key not in files:
        files.pop(key, None)
    elif action == "garbage_index" and part == "test.index":
        lines = [_text(draw(st.one_of(st.integers(-5, 5000), st.sampled_from(ODD_TEXT))))
                 for _ in range(draw(st.integers(0, 6)))]
        files[key] = draw(mangled("\n".join(lines).encode()))
    elif action == "empty":
        files[key] = b""
    elif action == "flip" and files[key]:
        data = bytearray(files[key])
        i = draw(st.integers(0, len(data) - 1))
        data[i] ^= draw(st.integers(1, 255))
        files[key] = bytes(data)
    else:
        files[key] = files[key][: draw(st.integers(0, max(len(files[key]) - 1, 0)))]
    load = {"type": "planetoid", "name": "cora", "root": "raw", "download": False,
            "cache_dir": "cache"}
    return Case("planetoid", files, _pipeline(load, draw),
                names=COMMON_NAMES + ("ind.cora", "raw", "cora", "root"))


# --- mat ------------------------------------------------------------------------------------

@st.composite
def _matrix(draw: st.DrawFn, n: int) -> Any:
    import scipy.sparse as sp

    kind = draw(st.sampled_from(["square", "square", "rect", "empty", "nan", "3d", "text",
                                 "sparse_nan", "column", "bool", "cell", "struct"]))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    if kind == "square":
        return sp.random(n, n, density=0.4, random_state=rng, format="csc")
    if kind == "rect":
        return sp.random(n, n + 1, density=0.4, random_state=rng, format="csc")
    if kind == "empty":
        return sp.csc_matrix((n, n))
    if kind == "nan":
        m = rng.random((n, max(n // 2, 1)))
        m[0, 0] = draw(st.sampled_from([np.nan, np.inf, -np.inf]))
        return m
    if kind == "3d":
        return rng.random((2, 2, 2))
    if kind == "text":
        return np.array(["abc", "def"])
    if kind == "sparse_nan":
        m = sp.random(n, n, density=0.5, random_state=rng, format="csc")
        m.data[:1] = np.nan
        return m
    if kind == "column":
        return rng.integers(-1, 3, size=(n, 1))
    if kind == "cell":  # nested arrays: scipy reads them recursively
        cell = np.empty((1, 2), dtype=object)
        cell[0, 0], cell[0, 1] = sp.eye(n, format="csc"), "x"
        return cell
    if kind == "struct":
        return {"adj": sp.eye(n, format="csc"), "ids": rng.integers(0, 9, size=(n, 1))}
    return rng.random((n, n)) > 0.5


MAT_HEADER = b"MATLAB 5.0 MAT-file, Platform: fuzz, Created on: Thu Jan  1 00:00:00 1970"


def fixed_mat_header(data: bytes) -> bytes:
    """``savemat``'s output with its 116 bytes of header text replaced by a fixed text:
    scipy writes the wall-clock time there ("Created on: ..."), which would make the same
    seed give other bytes on every run. Level 4 files (no text header) are left alone."""
    if data.startswith(b"MATLAB 5.0"):
        return MAT_HEADER.ljust(116) + data[116:]
    return data


@st.composite
def mat(draw: st.DrawFn) -> Case:
    import scipy.io

    n = draw(st.integers(1, 6))
    variables = {name: draw(_matrix(n)) for name in
                 draw(st.lists(st.sampled_from(["network", "group", "feat", "other"]),
                               min_size=1, max_size=4, unique=True))}
    buffer = io.BytesIO()
    version = draw(st.sampled_from(["5", "4"]))
    if any(isinstance(v, dict) or getattr(v, "ndim", 2) > 2
           or getattr(v, "dtype", None) in (bool, object) for v in variables.values()):
        version = "5"  # MATLAB 4 files hold 2-D numbers only
    scipy.io.savemat(buffer, variables, format=version,
                     do_compression=version == "5" and draw(st.booleans()))
    data = draw(mangled(fixed_mat_header(buffer.getvalue())))
    if draw(st.integers(0, 9)) == 0:
        data = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, HDF5 schema 1.00 ." + bytes(100)
    load: dict[str, Any] = {"type": "mat", "path": "graph.mat"}
    for key, choices in (("adjacency", ["network", "group", "nope"]),
                         ("labels", ["group", "", "network", "nope"]),
                         ("features", ["", "feat", "other", "nope"]),
                         ("on_nan", ["error", "zero"])):
        if draw(st.booleans()):
            load[key] = draw(st.sampled_from(choices))
    return Case("mat", {"graph.mat": data}, _pipeline(load, draw),
                names=COMMON_NAMES + ("graph.mat", "network", "group", "feat", "other", "nope"))


# --- networkx -------------------------------------------------------------------------------

def _graphml(draw: st.DrawFn) -> str:
    nodes = [_text(draw(ids)) for _ in range(draw(st.integers(0, 5)))]
    attr_type = draw(st.sampled_from(["double", "int", "string", "boolean", "float"]))
    lines = ['<?xml version="1.0" encoding="UTF-8"?>',
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns">',
             f'<key id="w" for="edge" attr.name="weight" attr.type="{attr_type}"/>',
             f'<key id="l" for="node" attr.name="label" attr.type="{attr_type}"/>',
             f'<graph edgedefault="{draw(st.sampled_from(["undirected", "directed", "x"]))}">']
    for node in nodes:
        label = _text(draw(numbers))
        lines.append(f'<node id="{node}"><data key="l">{label}</data></node>')
    for _ in range(draw(st.integers(0, 6))):
        a, b = (_text(draw(st.one_of(st.sampled_from(nodes or ["z"]), ids))) for _ in range(2))
        lines.append(f'<edge source="{a}" target="{b}"><data key="w">'
                     f"{_text(draw(numbers))}</data></edge>")
    lines += ["</graph>", "</graphml>"]
    return "\n".join(lines)


def _gml(draw: st.DrawFn) -> str:
    out = ["graph [", f"  directed {draw(st.sampled_from(['0', '1', 'x']))}"]
    for i in range(draw(st.integers(0, 4))):
        out.append(f'  node [ id {draw(st.sampled_from([str(i), str(i), "a", "-1"]))} '
                   f'label "{_text(draw(ids))}" feat {_text(draw(numbers))} ]')
    for _ in range(draw(st.integers(0, 5))):
        out.append(f"  edge [ source {_text(draw(st.integers(-1, 4)))} target "
                   f"{_text(draw(st.integers(-1, 4)))} weight {_text(draw(numbers))} ]")
    out.append("]")
    return "\n".join(out)


def _lines(draw: st.DrawFn, width: tuple[int, int]) -> str:
    rows = []
    for _ in range(draw(st.integers(0, 6))):
        fields = [_text(draw(st.one_of(ids, numbers)))
                  for _ in range(draw(st.integers(*width)))]
        rows.append(draw(st.sampled_from([" ", "\t", ","])).join(fields))
    return "\n".join(rows)


@st.composite
def networkx(draw: st.DrawFn) -> Case:
    fmt = draw(st.sampled_from(["graphml", "gml", "adjlist", "edgelist"]))
    text = {"graphml": lambda: _graphml(draw), "gml": lambda: _gml(draw),
            "adjlist": lambda: _lines(draw, (1, 4)),
            "edgelist": lambda: _lines(draw, (1, 4))}[fmt]()
    suffix = {"graphml": ".graphml", "gml": ".gml", "adjlist": ".adjlist", "edgelist": ".edges"}
    file_suffix = suffix[fmt] if draw(st.integers(0, 4)) else draw(st.sampled_from(
        [".txt", ".xml", ".dat", ".gml"]))
    name = f"graph{file_suffix}"
    load: dict[str, Any] = {"type": "networkx", "path": name}
    if draw(st.booleans()):
        load["format"] = draw(st.sampled_from(["auto", "graphml", "gml", "adjlist", "edgelist"]))
    for key, choices in (("label", ["auto", "", "label", "nope"]),
                         ("features", [[], ["feat"], ["label"], ["nope"]]),
                         ("weight", ["weight", "", "nope"]), ("on_nan", ["error", "zero"])):
        if draw(st.booleans()):
            load[key] = draw(st.sampled_from(choices))
    if draw(st.integers(0, 9)) == 0:
        load = {"type": "networkx", "graph": draw(st.sampled_from(
            ["karate_club", "karate", "les_miserables"]))}
        if draw(st.booleans()):
            load["path"] = name
    data = draw(mangled(text.encode("utf-8", errors="surrogatepass")))
    return Case("networkx", {name: data}, _pipeline(load, draw),
                names=COMMON_NAMES + (name, "format", "label", "feature", "graph", "weight", "attribute"))


# --- dgl ------------------------------------------------------------------------------------

@st.composite
def dgl_file(draw: st.DrawFn, damage_bytes: bool = True) -> Case:
    """DGL files with odd content; with ``damage_bytes``, also cut or corrupted bytes (which
    crash DGL's C++ reader: ``graphflow.io.dglfile`` checks the container and probes the
    file in a bounded child process before loading it)."""
    import torch

    from graphflow.compat.dgl import dgl
    from graphflow.io import dglfile

    n = draw(st.integers(1, 6))
    e = draw(st.integers(0, 8))
    src = torch.tensor([draw(st.integers(0, n - 1)) for _ in range(e)], dtype=torch.int64)
    dst = torch.tensor([draw(st.integers(0, n - 1)) for _ in range(e)], dtype=torch.int64)
    kind = draw(st.sampled_from(["plain", "plain", "hetero", "two"]))
    if kind == "hetero":
        graphs = [dgl.heterograph({("a", "r", "b"): (src, dst)})]
    else:
        g = dgl.graph((src, dst), num_nodes=n)
        if draw(st.booleans()):
            # a generator of its own: the global one's state depends on the cases before
            gen = torch.Generator().manual_seed(draw(st.integers(0, 2**16)))
            feat = torch.randn(n, 2, generator=gen)
            feat[0, 0] = draw(st.sampled_from([float("nan"), float("inf"), 1.0]))
            g.ndata["feat"] = feat
        if draw(st.booleans()):
            g.ndata["label"] = torch.tensor([draw(st.integers(-1, 3)) for _ in range(n)])
        if draw(st.booleans()):
            g.ndata["train_mask"] = torch.tensor([draw(st.integers(0, 2)) for _ in range(n)])
        if e and draw(st.booleans()):
            g.edata["weight"] = torch.tensor([draw(st.floats(allow_nan=True,
                                                             allow_infinity=True, width=32))
                                              for _ in range(e)])
        graphs = [g, g] if kind == "two" else [g]
    labels: dict[str, Any] = {}
    extra = draw(st.sampled_from(["none", "ids", "bad_offsets", "bad_meta", "short_ids"]))
    if extra == "ids":
        labels[dglfile.IDS_INT] = torch.arange(n) * 7
    elif extra == "short_ids":
        labels[dglfile.IDS_INT] = torch.arange(max(n - 1, 0))
    elif extra == "bad_offsets":
        labels[dglfile.IDS_OFFSETS] = torch.tensor([0, 5, 2][: n + 1], dtype=torch.int64)
        labels[dglfile.IDS_BYTES] = torch.tensor([97, 98], dtype=torch.uint8)
    elif extra == "bad_meta":
        labels[dglfile.META] = torch.tensor([0xFF, 0x7B], dtype=torch.uint8)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.bin"
        dgl.save_graphs(str(path), graphs, labels or None)
        data = path.read_bytes()
    # DGL 2.1 leaves its 4096-byte header uninitialised after the 32 bytes it fills (the
    # file carries whatever memory held: pointers, CPU flags), so the same graph gives
    # other bytes in every process; zero it, as a fresh file's page would read.
    head = dglfile.HEADER_BYTES
    if len(data) >= head:
        data = data[:32] + bytes(head - 32) + data[head:]
    if damage_bytes:
        data = draw(mangled(data))
    load: dict[str, Any] = {"type": "dgl", "path": "graph.bin"}
    if draw(st.booleans()):
        load["index"] = draw(st.integers(-2, 2))
    return Case("dgl", {"graph.bin": data}, _pipeline(load, draw),
                names=COMMON_NAMES + ("graph.bin", "index"))


# --- synthetic ------------------------------------------------------------------------------

SMALL_INTS = st.one_of(st.integers(-3, 60), st.sampled_from([2**63, -2**63 - 1, 2**64]))
ODD_FLOATS = st.one_of(st.floats(-2, 2), st.sampled_from([math.nan, math.inf, -math.inf, 0.0]))
ODD_VALUES = st.one_of(st.text(max_size=4), st.booleans(), st.lists(st.integers(0, 3), max_size=2))


@st.composite
def synthetic(draw: st.DrawFn) -> Case:
    load: dict[str, Any] = {"type": "synthetic"}
    if draw(st.booleans()):
        load["kind"] = draw(st.sampled_from(["sbm", "powerlaw", "rmat"]))
    for key, strategy in (("nodes", SMALL_INTS), ("classes", SMALL_INTS),
                          ("features", SMALL_INTS), ("edges", SMALL_INTS), ("seed", SMALL_INTS),
                          ("p_in", ODD_FLOATS), ("p_out", ODD_FLOATS), ("signal", ODD_FLOATS),
                          ("train", st.one_of(ODD_FLOATS, SMALL_INTS)),
                          ("val", st.one_of(ODD_FLOATS, SMALL_INTS)),
                          ("test", st.one_of(ODD_FLOATS, SMALL_INTS))):
        if draw(st.integers(0, 2)) == 0:
            load[key] = draw(st.one_of(strategy, strategy, strategy, ODD_VALUES))
    keys = ("nodes", "classes", "features", "edges", "seed", "p_in", "p_out", "signal", "train",
            "val", "test", "kind", "split")
    return Case("synthetic", {}, _pipeline(load, draw), names=COMMON_NAMES + keys)


LOADER_STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Case]]] = {
    "edgelist": edgelist, "parquet": parquet, "planetoid": planetoid, "mat": mat,
    "networkx": networkx, "dgl": dgl_file, "synthetic": synthetic,
}
