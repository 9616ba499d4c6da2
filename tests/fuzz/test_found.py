"""Bad input the fuzzer found that once crashed or said something unhelpful: each now gets one
line that names the file, line or key (checked through the same in-process checker)."""

from __future__ import annotations

import base64
import io
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fuzzing import Case, run_case
from fuzzing.case import section

HEAD = section("pipeline", {"name": "found", "device": "cpu"})


def _parquet(table: pa.Table) -> bytes:
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink)
    return sink.getvalue().to_pybytes()


def _dgl_with_short_ids() -> bytes:
    import tempfile
    from pathlib import Path

    import torch

    from graphflow.compat.dgl import dgl
    from graphflow.io.dglfile import IDS_INT

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.bin"
        g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 2])))
        dgl.save_graphs(str(path), [g], {IDS_INT: torch.tensor([5, 6])})  # 2 ids, 3 nodes
        return path.read_bytes()


def _dgl_with_string_id_offsets_past_the_bytes() -> bytes:
    import tempfile
    from pathlib import Path

    import torch

    from graphflow.compat.dgl import dgl
    from graphflow.io.dglfile import IDS_BYTES, IDS_OFFSETS

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.bin"
        g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])))
        dgl.save_graphs(str(path), [g], {IDS_OFFSETS: torch.tensor([0, 5, 2]),
                                         IDS_BYTES: torch.tensor([97, 98], dtype=torch.uint8)})
        return path.read_bytes()


# Parquet files the fuzzer damaged (benchmarks/fuzz.py, seed 0): footer metadata that is not
# UTF-8, and a column of 4-bit integers Arrow does not read.
PARQUET_NOT_UTF8_METADATA = base64.b64decode(
    "UEFSMRUEFUwVTkwVBhUAEgAAJhgDAAAAYSBiAQdoInEiFAAAADEwODIyNzQwMzgwMzQxNjUzNTA0FQAVFBUYLBUG"
    "FRAVBhUGHDYAKANhIGIYAyJxIhERAAAACiQCAAAABgECAyQAFQQZLDUAGAZzY2hlbWEVAgAVDCUCGAOdc3QlAEwc"
    "AAAAFgYZHBkcJgAcFQwZNQAGEBkYA2RzdBUCFgYWvgEWxAEmciYIHDYAKANhIGIYAyJxIhERABksFQQVABUCABUA"
    "FRAVAgA8FjQZBhkmAAYAAAAWvgEWBiYIFsQBABkcGAxBUlJPVzpzImhlbWEYoAEvLy8vLzNBQUFBQVFBQUFBQUFB"
    "S0FBd0FCZ0FGQUFnQUNnQUFBQUFCQkFBTUFBQUFDQUFJQUFBQUJBQUlBQUFBQkFBQUFBRUFBQUFVQUFBQUVBQVVB"
    "QWdBQmdBSEFBd0FBQUFRQUJBQUFBQUFBQUVGRUFBQUFCZ0FBQUFFQUFBQUFBQUFBQU1BQUFCa2MzUUFCQUFFQUFR"
    "QUFBQUFBQUFBABggcGFycXVldC1jcHAtYXJyb3cgdmVyc2lvbiAyNi4wLjEZHBwAAABYAQAAUEFSMQ==")
PARQUET_4BIT_INTEGERS = base64.b64decode(
    "UEFSMRUEFQAVAkwVABUAEgAAABUAFQ4VEiwVBBUQFQYVBhwAAAAHGAIAAAAEAAAVBBVEFUhMFQTwABIAACKEFAAA"
    "ADEwNzgwMTc5NDIyNjU3OTQxNTA0BgAAAG5vZGVfMRUAFRIVFiwVBBUQFQYVBhw2ACgGbm9kZV8xGBQxMDd9MDE3"
    "OTQyMjY1Nzk0MTUwNBERAAAACSACAAAABAEBAwIVBBUgFSRMFQQVABIAABA8DNSdR8iSfuotO42FP8M7QxUAFRIV"
    "FiwVBBUQFQYVBhwYCC07jYU/wztDGAgM1J1HyJJ+6hYAKAgtO42FP8M7QxgIDNSdR8iSfuoREQAAAAkgAgAAAAQB"
    "AQMCFQQVIBUkTBUEFQASAAAQPAMAAAAAAAAAAAAAAAAAAAAVABUeFSIsFQQVEBUGFQYcGAgDAAAAAAAAABgIAAAA"
    "AAAAAAAWACgIAwAAAAAAAAAYCAAAAAAAAAAAEREAAAAPOAIAAAAEAAIAAAAEAwEDAhUEGXw1ABgGc2NoZW1hFQgA"
    "FQIlAhgDc3JjbLwAAAAVDCUCGANkc3QlAEwcAAAAFQolAhgBYQA1AhgBYhUCFQZMPAAAADUEGARsaXN0FQIAFQQl"
    "AhgHZWxlbWVudAAWBBkcGUwmABwVAhk1AAYQGRgDc3JjFQIWBBZQFlYmJiYIKSwVBBUAFQIAFQAVEBUCADwpBhkm"
    "BAAAAAAmABwVDBk1AAYQGRgDZHN0FQIWBBbcARbkASbCASZeHDYAKAZub2RlXzEYFDEwNzgwMTc5NDIyNjU3OTQx"
    "NTA0EREAGSwVBBUAFQIAFQAVEBUCADwWNBkGGSYABAAAACYAHBUKGTUABhAZGAFhFQIWBBbMARbUASaCAybCAhwY"
    "CC07jYU/wztDGAgM1J1HyJJ+6hYAKAgtO42FP8M7QxgIDNSdR8iSfuoREQAZLBUEFQAVAgAVABUQFQIAPCkGGSYA"
    "BAAAACYAHBUEGTUABhAZOAFiBGxpc3QHZWxlbWVudBUCFgQW2AEW4AEm1gQmlgQcGAgDAAAAAAAAABgIAAAAAAAA"
    "AAAWACgIAwAAAAAAAAAYCAAAAAAAAAAAEREAGSwVBBUAFQIAFQAVEBUCADwpJgQAGUYAAAAEAAAAFtAFFgQmCBbu"
    "BQAZHBgMQVJST1c6c2NoZW1hGJgDLy8vLy95Z0JBQUFRQUFBQUFBQUtBQXdBQmdBRkFBZ0FDZ0FBQUFBQkJBQU1B"
    "QUFBQ0FBSUFBQUFCQUFJQUFBQUJBQUFBQVFBQUFEUUFBQUFtQUFBQUdnQUFBQUVBQUFBVVAvLy93QUFBUXdVQUFB"
    "QUdBQUFBQVFBQUFBQkFBQUFFQUFBQUFFQUFBQmlBQUFBUlAvLy8zai8vLzhBQUFFQ0VBQUFBQ0FBQUFBRUFBQUFB"
    "QUFBQUFRQUFBQnBkR1Z0QUFBQUFBZ0FEQUFjQUFjQUNBQUFBQUFBQUFGQUFBQUFzUC8vL3dBQUFRTVFBQUFBR0FB"
    "QUFBUUFBQUFBQUFBQUFRQUFBR0VBQmdBSUFBWUFCZ0FBQUFBQUFnRGMvLy8vQUFBQkJSQUFBQUFVQUFBQUJBQUFB"
    "QUFBQUFBREFBQUFaSE4wQU16Ly8vOFFBQlFBQ0FBR0FBY0FEQUFBQUJBQUVBQUFBQUFBQVFFUUFBQUFHQUFBQUFR"
    "QUFBQUFBQUFBQXdBQUFITnlZd0FFQUFRQUJBQUFBQT09ABggcGFycXVldC1jcHAtYXJyb3cgdmVyc2lvbiAyNi4w"
    "LjEZTBwAABwAABwAABwAAAC+AwAAUEFSMQ==")


def _dgl_with_string_id_offsets_but_no_bytes() -> bytes:
    import tempfile
    from pathlib import Path

    import torch

    from graphflow.compat.dgl import dgl
    from graphflow.io.dglfile import IDS_OFFSETS

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.bin"
        g = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])))
        dgl.save_graphs(str(path), [g], {IDS_OFFSETS: torch.tensor([0, 1, 2])})
        return path.read_bytes()


def _mat() -> bytes:
    import scipy.io
    import scipy.sparse as sp

    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"network": sp.eye(3, format="csc")})
    return buffer.getvalue()


def _mat_huge_weight() -> bytes:
    import scipy.io
    import scipy.sparse as sp

    buffer = io.BytesIO()
    scipy.io.savemat(buffer, {"network": sp.csc_matrix([[0.0, 1e300], [2.0, 0.0]])})
    return buffer.getvalue()


GRAPHML_TEXT_WEIGHT = (
    b'<?xml version="1.0"?>\n<graphml xmlns="http://graphml.graphdrawing.org/xmlns">'
    b'<key id="w" for="edge" attr.name="weight" attr.type="string"/>'
    b'<graph edgedefault="undirected"><node id="a"/><node id="b"/>'
    b'<edge source="a" target="b"><data key="w">x</data></edge></graph></graphml>\n')


def _load(options: dict) -> bytes:
    return (HEAD + section("load", options)).encode()


CASES = {
    "int beyond 64 bits": (
        {}, _load({"type": "synthetic", "nodes": 2**64}),
        r"pipeline.toml: load.nodes: 18446744073709551616 is out of range; integers must lie "
        r"between -2\*\*63 and 2\*\*63 - 1"),
    "negative generator seed": (
        {}, _load({"type": "synthetic", "kind": "powerlaw", "nodes": 20, "edges": 40,
                   "seed": -1}), None),  # runs: numpy's seed is taken modulo 2**64
    "bare carriage returns": (
        {"e.txt": b"a b\rb c\r"}, _load({"type": "edgelist", "path": "e.txt"}),
        r"e.txt:1: lines end in a bare carriage return \(CR\); convert the file to LF"),
    "UTF-8 BOM before a header": (
        {"e.txt": b"\xef\xbb\xbfsrc,dst\na,b\n"},
        _load({"type": "edgelist", "path": "e.txt", "header": True, "source": "src",
               "target": "dst"}), None),
    "non-UTF-8 header": (
        {"e.txt": b"\xfe\xffsrc dst\na b\n"},
        _load({"type": "edgelist", "path": "e.txt", "header": True}),
        r"e.txt: the header line is not UTF-8 text \(byte 0xfe\); save the file as UTF-8"),
    "one column for source and target": (
        {"e.txt": b"src\na\n"}, _load({"type": "edgelist", "path": "e.txt", "header": True,
                                        "target": 0}),
        r"e.txt: the src and the dst are both column 'src'; give them different columns"),
    "non-UTF-8 pipeline": (
        {}, b'[load]\ntype = "synthetic"\n# caf\xe9\n',
        r"pipeline.toml:3: not UTF-8 text \(byte 0xe9\); save the pipeline file as UTF-8"),
    "[[pipeline]]": (
        {}, b'[[pipeline]]\nname = "x"\n[load]\ntype = "synthetic"\n',
        r"pipeline.toml: \[pipeline\] must be a table \(write \[pipeline\], not \[\[pipeline\]\]\)"),
    "control characters in a value": (
        {}, b'[load]\ntype = "synthetic"\nnodes = "a\\nb\\f"\n',
        r'load.nodes: expected int, got "a\\nb\\f" \(string\)'),
    "boolean node ids": (
        {"e.parquet": _parquet(pa.table({"src": [True], "dst": [False]}))},
        _load({"type": "parquet", "edges": "e.parquet"}),
        r"edge table .*e.parquet: 'src' holds bool; node ids must be integers or strings"),
    "truncated .mat": (
        {"g.mat": _mat()[:150]}, _load({"type": "mat", "path": "g.mat", "labels": ""}),
        r"g.mat is not a readable MATLAB file \(the element at byte 128 claims \d+ bytes; "
        r"the file ends \d+ bytes later\); save it again"),
    "edge list with more fields than networkx expects": (
        {"g.edges": b"a b 1 2\n"}, _load({"type": "networkx", "path": "g.edges"}),
        r"g.edges: cannot read it as edgelist \(IndexError: "),
    "DGL file with fewer stored ids than nodes": (
        {"g.bin": _dgl_with_short_ids()}, _load({"type": "dgl", "path": "g.bin"}),
        r"g.bin: the node ids or metadata graphflow stored with the graph are damaged "
        r"\(ValueError: 2 node ids for 3 nodes\); export the graph again"),
    "DGL string ids whose offsets run past their bytes (Arrow read out of bounds)": (
        {"g.bin": _dgl_with_string_id_offsets_past_the_bytes()},
        (HEAD + section("load", {"type": "dgl", "path": "g.bin"}) +
         section("export", {"type": "parquet", "what": "graph"}, array=True)).encode(),
        r"g.bin: the node ids or metadata graphflow stored with the graph are damaged "
        r"\(ArrowInvalid: "),
    "DGL string-id offsets without their bytes (was a KeyError)": (
        {"g.bin": _dgl_with_string_id_offsets_but_no_bytes()},
        _load({"type": "dgl", "path": "g.bin"}),
        r"g.bin: the node ids or metadata graphflow stored with the graph are damaged "
        r"\(ValueError: string node ids without their bytes \(graphflow_id_bytes\)\); export "
        r"the graph again"),
    "Parquet footer metadata that is not UTF-8 (was a UnicodeDecodeError)": (
        {"e.parquet": PARQUET_NOT_UTF8_METADATA},
        _load({"type": "parquet", "edges": "e.parquet", "directed": False}),
        r"edge table .*e.parquet is not a readable Parquet file \("),
    "Parquet column of 4-bit integers (was an ArrowNotImplementedError)": (
        {"e.parquet": PARQUET_4BIT_INTEGERS},
        _load({"type": "parquet", "edges": "e.parquet", "dst_column": "weight"}),
        r"edge table .*e.parquet.*(not a readable Parquet file|cannot read it) \("),
    ".mat weight beyond float32 (was a RuntimeWarning line, then inf weights)": (
        {"g.mat": _mat_huge_weight()}, _load({"type": "mat", "path": "g.mat", "labels": ""}),
        r"g.mat: 'network'\[0, 1\] = 1e\+300 is not a finite float32 edge weight"),
    "GraphML weights as text": (
        {"w.graphml": GRAPHML_TEXT_WEIGHT}, _load({"type": "networkx", "path": "w.graphml"}),
        r"w.graphml: edge attribute 'weight' must hold numbers \(ValueError: could not convert "
        r"string to float: 'x'\); set weight = \"\" to ignore it"),
    "walk sampler under node_classification": (
        {}, (HEAD + section("load", {"type": "synthetic", "nodes": 30}) +
             section("sample", {"type": "deepwalk", "walk_length": 3}) +
             section("model", {"type": "gcn"}) +
             section("train", {"type": "node_classification", "epochs": 1})).encode(),
        r'\[sample\] "deepwalk" returned Tensor, not a MiniBatch of blocks; this task needs a '
        r'block sampler such as type = "neighbor"'),
}


@pytest.mark.parametrize("name", list(CASES))
def test_found_input_gets_one_clear_line(name, tmp_path):
    files, pipeline, message = CASES[name]
    outcome = run_case(Case("found", files, pipeline), tmp_path / "case")
    assert outcome.ok, outcome.report()
    if message is None:
        assert outcome.code == 0, outcome.report()
    else:
        assert outcome.code == 1 and re.search(message, outcome.stderr), outcome.report()
        assert "--debug" not in outcome.stderr  # no cause chain: nothing more to see
