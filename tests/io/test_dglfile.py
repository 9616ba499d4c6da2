"""Damaged DGL files: one line naming the file, never DGL's C++ reader crashing the process."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pyarrow as pa
import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.io import dglfile


@pytest.fixture
def good(tmp_path) -> tuple[Path, bytes]:
    """A tiny graph as dgl.save_graphs writes it: 5 nodes, edges 0->1, 1->2, 2->3."""
    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 3])), num_nodes=5)
    g.ndata["feat"] = torch.arange(10, dtype=torch.float32).reshape(5, 2)
    path = tmp_path / "good.bin"
    dgl.save_graphs(str(path), [g], {"extra": torch.arange(3)})
    return path, path.read_bytes()


def _damaged(tmp_path: Path, data: bytes | bytearray) -> Path:
    path = tmp_path / "graph.bin"
    path.write_bytes(bytes(data))
    return path


def _message(path: Path) -> str:
    with pytest.raises(DataError) as info:
        dglfile.load_graph(path)
    return str(info.value)


def test_a_good_file_passes_both_checks_and_loads(good, tmp_path):
    path, _ = good
    dglfile.check_container(path)
    dglfile.probe(path)
    data = dglfile.load_graph(path)
    assert (data.graph.num_nodes(), data.graph.num_edges()) == (5, 3)
    assert torch.equal(data.graph.ndata["feat"][4], torch.tensor([8.0, 9.0]))
    # graphflow's own files (ids and metadata in the labels) pass too
    ours = dglfile.save_graph(tmp_path / "ours.bin", GraphData(
        graph=data.graph, ids=NodeIds(5, pa.array(["a", "b", "c", "d", "e"])),
        name="five", meta={"classes": ["x"]}))
    back = dglfile.load_graph(ours)
    assert back.ids.to_arrow().to_pylist() == ["a", "b", "c", "d", "e"] and back.name == "five"


@pytest.mark.parametrize("cut", [0, 20, 4000, 4200, -30, -1])
def test_a_cut_file_names_the_file_and_says_it_is_cut(good, tmp_path, cut):
    _, data = good
    path = _damaged(tmp_path, data[:cut])
    message = _message(path)
    assert message.startswith(f"{path}")
    assert ("damaged or cut DGL file" in message and message.endswith("export the graph again")) \
        or "is not a graph file written by dgl.save_graphs" in message


def test_a_file_that_is_not_dgl_says_so(tmp_path):
    path = _damaged(tmp_path, b"src,dst\n" * 100)
    assert _message(path) == (f"{path} is not a graph file written by dgl.save_graphs "
                              f"(no DGL magic number at its start)")


def test_an_array_claiming_more_bytes_than_the_file_has_is_caught_before_dgl(good, tmp_path):
    _, data = good
    # the node feature array: shape (5, 2) float32, 40 bytes; make it claim 5 million rows
    header = struct.pack("<2q", 5, 2) + struct.pack("<q", 40)
    at = data.index(header)
    broken = bytearray(data)
    broken[at:at + 24] = struct.pack("<2q", 5_000_000, 2) + struct.pack("<q", 40_000_000)
    path = _damaged(tmp_path, broken)
    assert f"{path}: damaged or cut DGL file (an array of shape [5000000, 2] claims 40000000 " \
           f"bytes at byte" in _message(path)


def test_a_file_that_crashes_dgls_reader_is_one_line_and_the_process_lives(good, tmp_path, cli):
    _, data = good
    # the count of node type names (a vector<string>) set to 2**61: DGL's reader aborts
    at = data.rindex(struct.pack("<Q", 2) + b"_N") - 8
    broken = bytearray(data)
    broken[at:at + 8] = struct.pack("<Q", 1 << 61)
    path = _damaged(tmp_path, broken)
    dglfile.check_container(path)  # the layout is intact: only the probe can tell
    assert _message(path) == (f"{path}: DGL's reader crashed on this file (SIGABRT): it is "
                              f"damaged or cut; export the graph again")
    pipeline = tmp_path / "p.toml"
    pipeline.write_text(f'[load]\ntype = "dgl"\npath = "{path}"\n')
    code, out, err = cli("run", pipeline, "--out-dir", tmp_path / "out")
    assert code == 1
    assert err.strip().splitlines() == [f"graphflow: error: [load] dgl: {path}: DGL's reader "
                                        f"crashed on this file (SIGABRT): it is damaged or "
                                        f"cut; export the graph again"]


def test_edges_pointing_past_the_nodes_are_refused(good, tmp_path):
    _, data = good
    at = data.index(struct.pack("<3q", 1, 2, 3))  # the destinations
    broken = bytearray(data)
    broken[at + 16:at + 24] = struct.pack("<q", 99)
    path = _damaged(tmp_path, broken)
    assert _message(path) == (f"{path}: damaged DGL file: graph 0 has edges whose ends lie "
                              f"outside its 5 nodes; export the graph again")


def test_a_probe_past_its_bound_is_killed_and_reported(good):
    path, _ = good
    before = _children()
    with pytest.raises(DataError) as info:
        dglfile.probe(path, timeout=0.0)
    assert str(info.value) == (f"{path}: DGL's reader did not finish within 0s (a damaged or "
                               f"cut file); export the graph again")
    assert _children() == before  # the child was killed and reaped


def _children() -> set[int]:
    me = os.getpid()
    found = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if int(stat.read_text().rsplit(")", 1)[1].split()[1]) == me:
                found.add(int(stat.parent.name))
        except (OSError, ValueError, IndexError):
            continue
    return found
