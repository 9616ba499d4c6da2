"""The ``tables`` loader: typed node and edge tables (CSV / Parquet) described in TOML."""

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.errors import ConfigError, DataError

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _write(tmp_path: Path) -> None:
    (tmp_path / "users.csv").write_text("id,age,score,label,split\n"
                                        "u1,20,0.5,fan,train\nu2,30,1.5,critic,test\n"
                                        "u3,40,2.5,fan,val\n")
    pq.write_table(pa.table({"id": ["i7", "i9"],
                             "feat": pa.array([[1.0, 0.0, 2.0], [0.0, 1.0, 3.0]])}),
                   tmp_path / "items.parquet")
    (tmp_path / "rates.csv").write_text("user,item,stars\nu1,i7,5\nu2,i9,3\nu3,i7,1\n")
    (tmp_path / "follows.tsv").write_text("src\tdst\nu1\tu2\nu3\tu2\n")
    pq.write_table(pa.table({"src": ["i7"], "dst": ["s1"]}), tmp_path / "sold_by.parquet")


HEAD = """
[load]
type = "tables"
reverse = true
[[load.nodes]]
type = "user"
path = "users.csv"
split = "split"
[[load.nodes]]
type = "item"
path = "items.parquet"
[[load.nodes]]
type = "shop"
[[load.edges]]
relation = "rates"
src_type = "user"
dst_type = "item"
path = "rates.csv"
src = "user"
dst = "item"
weight = "stars"
[[load.edges]]
relation = "follows"
src_type = "user"
dst_type = "user"
path = "follows.tsv"
reverse = false
"""
SOLD = """
[[load.edges]]
relation = "sold_by"
src_type = "item"
dst_type = "shop"
path = "sold_by.parquet"
"""


def _load(run_toml, tmp_path, text):
    return run_toml(text).ctx.data  # the pipeline file lands in tmp_path, beside the tables


def test_tables_load_a_typed_graph(run_toml, tmp_path):
    _write(tmp_path)
    data = _load(run_toml, tmp_path, HEAD + SOLD)
    g = data.graph
    assert data.is_typed and sorted(g.ntypes) == ["item", "shop", "user"]
    assert sorted(g.canonical_etypes) == [
        ("item", "rev-rates", "user"), ("item", "sold_by", "shop"),
        ("shop", "rev-sold_by", "item"), ("user", "follows", "user"),
        ("user", "rates", "item")]
    assert data.typed_ids["user"].to_arrow().to_pylist() == ["u1", "u2", "u3"]
    assert data.typed_ids["shop"].to_arrow().to_pylist() == ["s1"]
    users = g.nodes["user"].data
    assert users["feat"].tolist() == [[20, 0.5], [30, 1.5], [40, 2.5]]  # numeric columns
    assert users["label"].tolist() == [1, 0, 1] and data.meta["classes"] == ["critic", "fan"]
    assert users["train_mask"].tolist() == [True, False, False]
    assert users["val_mask"].tolist() == [False, False, True]
    assert users["test_mask"].tolist() == [False, True, False]
    assert g.nodes["item"].data["feat"].shape == (2, 3)
    assert "feat" not in g.nodes["shop"].data
    s, d = g.edges(etype="rates")
    assert s.tolist() == [0, 1, 2] and d.tolist() == [0, 1, 0]
    assert g.edges["rev-rates"].data["weight"].tolist() == [5.0, 3.0, 1.0]
    assert data.meta["target"] == "user" and data.num_classes == 2


def test_cli_loads_and_summarises_or_fails_in_one_line(cli, tmp_path):
    _write(tmp_path)
    (tmp_path / "pipeline.toml").write_text(HEAD + SOLD)
    code, out, err = cli("run", tmp_path / "pipeline.toml", "--out-dir", tmp_path / "out")
    assert code == 0, err
    assert "6 nodes of 3 types (item 2, shop 1, user 3), 10 edges of 5 relations" in out + err
    (tmp_path / "pipeline.toml").write_text(HEAD + SOLD.replace('"shop"', '"shops"'))
    code, out, err = cli("run", tmp_path / "pipeline.toml", "--out-dir", tmp_path / "out")
    assert code == 1 and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1 and "not a node type" in err


def test_unknown_node_type(run_toml, tmp_path):
    _write(tmp_path)
    with pytest.raises(DataError, match=r"relation 'sold_by' names the target node type "
                                        r"'shops'.*did you mean \"shop\""):
        _load(run_toml, tmp_path, HEAD + SOLD.replace('dst_type = "shop"', 'dst_type = "shops"'))


def test_endpoint_missing_from_its_node_table_names_file_line_and_id(run_toml, tmp_path):
    _write(tmp_path)
    (tmp_path / "rates.csv").write_text("user,item,stars\nu1,i7,5\nu2,i8,3\n")
    with pytest.raises(DataError, match=r"rates.csv:3: edge target 'i8' is not in the node "
                                        r"table of type 'item'"):
        _load(run_toml, tmp_path, HEAD)


def test_two_tables_of_one_relation(run_toml, tmp_path):
    _write(tmp_path)
    with pytest.raises(DataError, match=r"the relation \('item', 'sold_by', 'shop'\) is also "
                                        r"given by edge table"):
        _load(run_toml, tmp_path, HEAD + SOLD + SOLD)


def test_nested_option_errors_name_the_table(run_toml, tmp_path):
    _write(tmp_path)
    with pytest.raises(ConfigError, match=r"load.edges.2.relaton: unknown option.*did you mean "
                                          r"\"relation\""):
        _load(run_toml, tmp_path, HEAD + SOLD.replace("relation =", "relaton ="))


def test_one_type_one_relation_is_homogeneous(run_toml, tmp_path):
    _write(tmp_path)
    text = ('[load]\ntype = "tables"\n[[load.nodes]]\ntype = "user"\npath = "users.csv"\n'
            '[[load.edges]]\nrelation = "follows"\nsrc_type = "user"\ndst_type = "user"\n'
            'path = "follows.tsv"\n')
    data = _load(run_toml, tmp_path, text)
    assert not data.is_typed and data.typed_ids is None
    assert data.ids.to_arrow().to_pylist() == ["u1", "u2", "u3"]
    assert data.graph.edges()[0].tolist() == [0, 2]


def test_example_loads(run_toml):
    text = (EXAMPLES / "typed_tables.toml").read_text().replace(
        '"data/typed/', f'"{EXAMPLES}/data/typed/')
    text = text.split("\n[model]")[0]  # loading only (tests/hetero/test_rgcn.py trains)
    data = run_toml(text).ctx.data
    g = data.graph
    assert sorted(g.ntypes) == ["author", "paper", "venue"]
    assert len(g.canonical_etypes) == 8  # four relations and their reverses
    assert g.nodes["paper"].data["feat"].shape == (120, 6)
    assert torch.allclose(g.nodes["paper"].data["feat"].mean(0), torch.zeros(6), atol=1e-5)
    assert g.edges["coauthor"].data["weight"].min() >= 1
    assert data.meta["target"] == "paper" and data.num_classes == 3
