import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphflow.errors import ConfigError, DataError


def test_edges_and_nodes_files_with_custom_columns(run_toml, tmp_path):
    pq.write_table(pa.table({"a": [10, 20, 30], "b": [20, 30, 10], "w": [0.5, 1.0, 2.0]}),
                   tmp_path / "e.parquet")
    pq.write_table(pa.table({"node": [30, 20, 10], "x1": [1.0, 2.0, 3.0], "x2": [0, 1, 0]}),
                   tmp_path / "n.parquet")
    data = run_toml('[load]\ntype = "parquet"\nedges = "e.parquet"\nnodes = "n.parquet"\n'
                    'src_column = "a"\ndst_column = "b"\nweight_column = "w"\n'
                    'id_column = "node"\n').ctx.data
    assert data.ids.to_arrow().to_pylist() == [30, 20, 10]
    assert [t.tolist() for t in data.graph.edges()] == [[2, 1, 0], [1, 0, 2]]
    assert data.graph.edata["weight"].tolist() == [0.5, 1.0, 2.0]
    assert data.graph.ndata["feat"].tolist() == [[1.0, 0.0], [2.0, 1.0], [3.0, 0.0]]


def test_errors(run_toml, tmp_path):
    pq.write_table(pa.table({"src": ["a"], "dst": ["b"]}), tmp_path / "e.parquet")
    with pytest.raises(DataError, match=r"edge table .*e.parquet: no column 'cost' for the "
                                        r"weight; columns: src, dst"):
        run_toml('[load]\ntype = "parquet"\nedges = "e.parquet"\nweight_column = "cost"\n')
    with pytest.raises(DataError, match=r"graph folder not found: .*nowhere"):
        run_toml('[load]\ntype = "parquet"\npath = "nowhere"\n')
    # path names a file: say that path takes a folder and where a single table goes.
    with pytest.raises(DataError, match=r"path = .*e.parquet is a file, but path takes a graph "
                                        r"folder \(holding edges.parquet and optionally "
                                        r"nodes.parquet\); for a single edge table write "
                                        r'edges = ".*e.parquet" instead of path'):
        run_toml('[load]\ntype = "parquet"\npath = "e.parquet"\n')
    with pytest.raises(ConfigError, match=r'give either path = "graph folder" or edges'):
        run_toml('[load]\ntype = "parquet"\n')
    (tmp_path / "fake.parquet").write_text("not parquet")
    with pytest.raises(DataError, match=r"fake.parquet is not a readable Parquet file"):
        run_toml('[load]\ntype = "parquet"\nedges = "fake.parquet"\n')


def test_a_file_given_as_path_through_validate(cli, tmp_path):
    pq.write_table(pa.table({"src": [0], "dst": [1]}), tmp_path / "edges.parquet")
    (tmp_path / "p.toml").write_text('[load]\ntype = "parquet"\npath = "edges.parquet"\n')
    code, _, err = cli("validate", tmp_path / "p.toml")
    assert code == 1 and "path takes a graph folder" in err and "edges = " in err
