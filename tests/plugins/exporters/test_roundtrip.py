"""Graph exports read back by the loaders: structure, data, ids and class names survive."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.io.parquet import read_run_metadata

EDGES = "# source target weight\nalice\tbob\t1.5\nbob\tcarol\t2\ncarol\talice\t0.5\ndave\tbob\t1\n"


@pytest.fixture
def source(tmp_path: Path) -> str:
    (tmp_path / "e.tsv").write_text(EDGES)
    pq.write_table(pa.table({
        "id": ["alice", "bob", "carol", "dave", "erin"],
        "feat": pa.array([[float(i), -float(i), 0.5] for i in range(5)],
                         pa.list_(pa.float32())),
        "label": ["cat", "dog", "cat", None, "dog"],
    }), tmp_path / "n.parquet")
    return ('[pipeline]\nname = "rt"\n[load]\ntype = "edgelist"\npath = "e.tsv"\n'
            'weight_column = 2\nnodes = "n.parquet"\n[[transform]]\ntype = "split"\n'
            "train = 2\nval = 1\ntest = 1\n")


def same_graph(a, b) -> None:
    assert a.ids.to_arrow().to_pylist() == b.ids.to_arrow().to_pylist()
    ga, gb = a.graph, b.graph
    assert [t.tolist() for t in ga.edges()] == [t.tolist() for t in gb.edges()]
    assert set(ga.ndata) == set(gb.ndata) and set(ga.edata) == set(gb.edata)
    for name in ga.ndata:
        assert torch.equal(ga.ndata[name], gb.ndata[name]), name
        assert ga.ndata[name].dtype == gb.ndata[name].dtype, name
    for name in ga.edata:
        assert torch.equal(ga.edata[name], gb.edata[name]), name
    assert a.meta.get("classes") == b.meta.get("classes") == ["cat", "dog"]


def test_edgelist_to_parquet_graph_to_parquet_loader(run_toml, source, tmp_path):
    first = run_toml(source + '[[export]]\ntype = "parquet"\nwhat = "graph"\npath = "g"\n')
    written = [o["path"] for o in first.record["outputs"]]
    assert written[:2] == [str(tmp_path / "g" / "edges.parquet"),
                           str(tmp_path / "g" / "nodes.parquet")]
    edges = pq.read_table(tmp_path / "g" / "edges.parquet")
    assert edges.column_names == ["src", "dst", "weight"]
    assert edges.column("src").to_pylist()[:2] == ["alice", "bob"]  # original ids
    nodes = pq.read_table(tmp_path / "g" / "nodes.parquet")
    assert nodes.schema.field("feat").type == pa.list_(pa.float32(), 3)
    assert read_run_metadata(tmp_path / "g" / "nodes.parquet")["classes"] == ["cat", "dog"]
    second = run_toml('[load]\ntype = "parquet"\npath = "g"\n', name="back.toml")
    same_graph(first.ctx.data, second.ctx.data)


def test_dgl_save_to_dgl_loader(run_toml, source, tmp_path):
    first = run_toml(source + '[[export]]\ntype = "dgl"\npath = "g.bin"\n')
    second = run_toml('[load]\ntype = "dgl"\npath = "g.bin"\n', name="back.toml")
    same_graph(first.ctx.data, second.ctx.data)
    assert second.ctx.data.name == "e"


def test_csv_graph_to_edgelist_loader(run_toml, source, tmp_path):
    first = run_toml(source + '[[export]]\ntype = "csv"\nwhat = "graph"\npath = "g"\n')
    header = (tmp_path / "g" / "nodes.csv").read_text().splitlines()[0]
    assert header == '"id","feat_0","feat_1","feat_2","label","train_mask","val_mask","test_mask"'
    second = run_toml('[load]\ntype = "edgelist"\npath = "g/edges.csv"\nheader = true\n'
                      'source = "src"\ntarget = "dst"\nweight_column = "weight"\n'
                      'directed = true\nnodes = "g/nodes.csv"\n', name="back.toml")
    a, b = first.ctx.data, second.ctx.data
    assert a.ids.to_arrow().to_pylist() == b.ids.to_arrow().to_pylist()
    assert torch.equal(a.graph.ndata["feat"], b.graph.ndata["feat"])
    assert torch.equal(a.graph.ndata["label"], b.graph.ndata["label"])
    assert torch.equal(a.graph.edata["weight"], b.graph.edata["weight"])


def test_dgl_file_written_by_dgl_itself(run_toml, tmp_path):
    from graphflow.compat.dgl import dgl

    g = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])))
    g.ndata["feat"] = torch.randn(3, 4)
    dgl.save_graphs(str(tmp_path / "plain.bin"), [g, g])
    data = run_toml('[load]\ntype = "dgl"\npath = "plain.bin"\nindex = 1\n').ctx.data
    assert data.ids.is_identity and data.num_edges == 3
    assert torch.equal(data.graph.ndata["feat"], g.ndata["feat"])


def test_bad_dgl_files(run_toml, tmp_path):
    from graphflow.errors import DataError

    (tmp_path / "junk.bin").write_bytes(b"definitely not a DGL graph" * 4)
    with pytest.raises(DataError, match=r"junk.bin is not a graph file written by "
                                        r"dgl.save_graphs"):
        run_toml('[load]\ntype = "dgl"\npath = "junk.bin"\n')
    from graphflow.compat.dgl import dgl

    dgl.save_graphs(str(tmp_path / "one.bin"), [dgl.graph(([0], [1]))])
    with pytest.raises(DataError, match=r"one.bin holds 1 graph\(s\); index = 3 is out of "
                                        r"range"):
        run_toml('[load]\ntype = "dgl"\npath = "one.bin"\nindex = 3\n')
