import os
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.errors import ConfigError, DataError

EDGES = "# who follows whom\nalice\tbob\t1.0\nbob\tcarol\t2\n\ncarol\talice\t0.5\ndave\talice\t1\n"


def _pipeline(tmp_path: Path, edges: str = EDGES, extra: str = "", name: str = "e.tsv") -> str:
    (tmp_path / name).write_text(edges)
    return f'[load]\ntype = "edgelist"\npath = "{name}"\n{extra}\n'


def _nodes(tmp_path: Path, **columns) -> None:
    pq.write_table(pa.table(columns), tmp_path / "nodes.parquet")


def test_string_ids_with_a_parquet_node_table(run_toml, tmp_path):
    _nodes(tmp_path, id=["erin", "dave", "carol", "bob", "alice"],
           feat=pa.array([[float(i), 1.0] for i in range(5)], pa.list_(pa.float32())),
           label=["x", "y", None, "x", "y"])
    text = _pipeline(tmp_path, extra='weight_column = 2\nnodes = "nodes.parquet"\n'
                                     "directed = true")
    data = run_toml(text).ctx.data
    g = data.graph
    assert data.ids.to_arrow().to_pylist() == ["erin", "dave", "carol", "bob", "alice"]
    src, dst = g.edges()
    ids = data.ids.to_arrow().to_pylist()
    assert [(ids[s], ids[d]) for s, d in zip(src.tolist(), dst.tolist())] == [
        ("alice", "bob"), ("bob", "carol"), ("carol", "alice"), ("dave", "alice")]
    assert g.edata["weight"].tolist() == [1.0, 2.0, 0.5, 1.0]
    assert g.ndata["feat"][:, 0].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    assert data.meta["classes"] == ["x", "y"]
    assert g.ndata["label"].tolist() == [0, 1, -1, 0, 1]
    assert g.in_degrees()[0] == 0  # erin: a node of the table without edges


def test_undirected_integer_ids_and_csv_header(run_toml, tmp_path):
    text = _pipeline(tmp_path, "src,dst,w\n0,1,1\n1,0,5\n1,2,2\n", 'header = true\n'
                     'source = "src"\ntarget = "dst"\nweight_column = "w"', name="e.csv")
    data = run_toml(text).ctx.data
    assert data.ids.is_identity and data.num_nodes == 3
    assert data.num_edges == 4  # 0-1 given twice is kept once, in both directions
    assert data.graph.edata["weight"].tolist() == [1.0, 2.0, 1.0, 2.0]


def test_info_line_tells_about_merged_pairs(run_toml, tmp_path, capsys):
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    path = tmp_path / "p.toml"
    path.write_text(_pipeline(tmp_path, "a b\nb a\n"))
    host = create_host()
    run_pipeline(load_config(path, host.registry, out_dir=tmp_path / "out"), host)
    assert "undirected: merged 1 repeated node pairs" in capsys.readouterr().err


@pytest.mark.parametrize(("edges", "extra", "message"), [
    ("a b\nb c d\n", "", r"e.tsv:2: expected 2 space-separated fields, found 3: 'b c d'"),
    ("a\tb\t1\nb\tc\tlots\n", "weight_column = 2",
     r"e.tsv:2: weight 'lots' is not a number \(column 'f2'\)"),
    # NaN / inf weights are rejected, naming the value as written and its line.
    ("a\tb\t1\n# note\nb\tc\tnan\n", "weight_column = 2",
     r"e.tsv:3: weight 'nan' is not a finite number \(column 'f2'\)"),
    ("a\tb\t1\nb\tc\t-inf\n", "weight_column = 2",
     r"e.tsv:2: weight '-inf' is not a finite number"),
    ("a\tb\t1e400\n", "weight_column = 2", r"e.tsv:1: weight '1e400' is not a finite number"),
    ("a\tb\tNA\n", "weight_column = 2", r"e.tsv:1: weight 'NA' is not a finite number"),
    ("a\tb\t1\nb\tc\t\n", "weight_column = 2", r"e.tsv:2: empty edge weight"),
    ("from\tto\na\tb\n", 'header = true\nsource = "src"',
     r"no column 'src' for the src; columns: from, to"),
    ("# nothing\n", "", r"e.tsv has no data: only comments or blank lines"),
    ("from\tto\n", "header = true", r"edge list .*e.tsv has no edges; the graph would be empty"),
    ("a\tb\nb\tzed\n", 'nodes = "nodes.parquet"',
     r"e.tsv:2: edge target 'zed' is not in the node table .*nodes.parquet"),
    ("a\tb\n", 'nodes = "nodes.parquet"', r"nodes.parquet, row 2: node id 'a' appears again"),
])
def test_bad_input_names_file_and_line(run_toml, tmp_path, edges, extra, message):
    _nodes(tmp_path, id=["a", "b", "a"] if "again" in message else ["a", "b"],
           x=[1.0, 2.0, 3.0] if "again" in message else [1.0, 2.0])
    with pytest.raises(DataError, match=message) as info:
        run_toml(_pipeline(tmp_path, edges, extra))
    assert str(info.value).startswith("[load] edgelist: ")


def test_nan_features_error_or_zero(run_toml, tmp_path):
    _nodes(tmp_path, id=["a", "b"], x=[1.0, float("nan")])
    text = _pipeline(tmp_path, "a\tb\n", 'nodes = "nodes.parquet"')
    with pytest.raises(DataError, match=r"nodes.parquet, row 1: feature 0 of node 'b' is nan"):
        run_toml(text)
    data = run_toml(text + 'on_nan = "zero"\n').ctx.data
    assert torch.equal(data.graph.ndata["feat"], torch.tensor([[1.0], [0.0]]))


def test_missing_file_and_unknown_delimiter(run_toml, tmp_path, cli):
    with pytest.raises(DataError, match=r"edge list not found: .*missing.tsv"):
        run_toml('[load]\ntype = "edgelist"\npath = "missing.tsv"\n')
    with pytest.raises(ConfigError, match=r'\[load\] edgelist: delimiter = "pipe": use "auto", '
                                          r'"tab", "comma", "space" or a single character'):
        run_toml(_pipeline(tmp_path, extra='delimiter = "pipe"'))
    path = tmp_path / "v.toml"
    path.write_text('[load]\ntype = "edgelist"\npath = "missing.tsv"\n')
    code, out, err = cli("validate", path)
    assert code == 1 and "edge list not found" in err


def test_malformed_line_through_the_cli(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(_pipeline(tmp_path, "a b\nb c\nc d e\n"))
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1
    assert "e.tsv:3: expected 2 space-separated fields, found 3" in err
    assert "Traceback" not in err + out


def test_malformed_line_through_a_real_process(tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(_pipeline(tmp_path, "a b\nb c\nc d e\n"))
    exe = Path(sys.executable).with_name("graphflow")
    proc = subprocess.run([str(exe), "run", str(path), "--out-dir", str(tmp_path / "out")],
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 1
    assert "e.tsv:3: expected 2 space-separated fields, found 3: 'c d e'" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout
