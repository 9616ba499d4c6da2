"""Transforms on typed graphs: per type where that makes sense, one clear line otherwise."""

import pytest
import torch

from graphflow.errors import DataError
from graphflow.manager import create_host

TABLES = """
[load]
type = "tables"
reverse = true
[[load.nodes]]
type = "user"
path = "users.csv"
[[load.nodes]]
type = "item"
path = "items.csv"
[[load.edges]]
relation = "follows"
src_type = "user"
dst_type = "user"
path = "follows.csv"
weight = "weight"
[[load.edges]]
relation = "buys"
src_type = "user"
dst_type = "item"
path = "buys.csv"
"""


@pytest.fixture
def typed(run_toml, tmp_path):
    """``typed(transforms)``: the typed graph loaded from small tables, then transformed."""
    (tmp_path / "users.csv").write_text("id,a,b,label\nu1,1,3,0\nu2,2,2,1\nu3,0,0,0\nu4,4,0,1\n")
    (tmp_path / "items.csv").write_text("id,a,b,c\ni1,1,1,2\ni2,3,0,1\n")
    (tmp_path / "follows.csv").write_text("src,dst,weight\nu1,u2,1\nu2,u2,2\nu3,u1,3\n")
    (tmp_path / "buys.csv").write_text("src,dst\nu1,i1\nu4,i2\n")
    return lambda transforms="": run_toml(TABLES + transforms).ctx.data


NORMALIZE = '[[transform]]\ntype = "normalize_features"\n'


def test_normalize_features_per_type(typed):
    g = typed(NORMALIZE).graph
    assert g.nodes["user"].data["feat"].tolist() == [[0.25, 0.75], [0.5, 0.5], [0, 0], [1, 0]]
    assert torch.allclose(g.nodes["item"].data["feat"].sum(1), torch.ones(2))
    one = typed(NORMALIZE + 'node_type = "item"\n')
    assert one.graph.nodes["user"].data["feat"][0].tolist() == [1.0, 3.0]
    assert one.typed_ids["user"].to_arrow().to_pylist() == ["u1", "u2", "u3", "u4"]
    with pytest.raises(DataError, match='node_type = "shop" is not a node type'):
        typed(NORMALIZE + 'node_type = "shop"\n')


LOOPS = '[[transform]]\ntype = "self_loops"\n'


def test_self_loops_on_relations_within_a_type(typed):
    out = typed(LOOPS + "fill = 0.5\n").graph
    s, d = out.edges(etype="follows")
    assert list(zip(s.tolist(), d.tolist())) == [(0, 1), (1, 1), (2, 0), (0, 0), (2, 2),
                                                 (3, 3)]  # u2 had its loop already
    assert out.edges["follows"].data["weight"].tolist() == [1, 2, 3, 0.5, 0.5, 0.5]
    assert out.num_edges("buys") == 2  # user -> item: no loops
    assert out.num_edges("rev-follows") == 6  # also user -> user
    mean = typed(LOOPS + 'fill = 0.5\nedge_data = "mean"\n').graph  # the weight takes fill
    assert mean.edges["follows"].data["weight"].tolist() == [1, 2, 3, 0.5, 0.5, 0.5]
    removed = typed(LOOPS + 'mode = "remove"\nrelations = ["follows"]\n').graph
    assert removed.num_edges("follows") == 2 and removed.num_edges("rev-follows") == 3
    with pytest.raises(DataError, match='relation "buys" joins user to item'):
        typed(LOOPS + 'relations = ["buys"]\n')


def test_dedup_within_each_relation(typed, tmp_path):
    (tmp_path / "follows.csv").write_text("src,dst,weight\nu1,u2,1\nu1,u2,2\nu3,u1,3\n"
                                         "u1,u2,4\n")
    g = typed('[[transform]]\ntype = "dedup"\nweights = "sum"\n').graph
    s, d = g.edges(etype="follows")
    assert list(zip(s.tolist(), d.tolist())) == [(0, 1), (2, 0)]
    assert g.edges["follows"].data["weight"].tolist() == [7.0, 3.0]
    assert g.num_edges("rev-follows") == 2 and g.num_edges("buys") == 2


def test_split_draws_masks_on_the_target_type(typed):
    out = typed('[[transform]]\ntype = "split"\ntrain = 0.5\nval = 0.25\ntest = 0.25\n').graph
    masks = [out.nodes["user"].data[m] for m in ("train_mask", "val_mask", "test_mask")]
    assert int(masks[0].sum()) >= 1 and int(sum(m.int() for m in masks).max()) == 1
    assert "train_mask" not in out.nodes["item"].data


def test_other_transforms_refuse_typed_graphs_in_one_line(run_toml, tmp_path):
    (tmp_path / "a.csv").write_text("src,dst\nx,y\n")
    (tmp_path / "b.csv").write_text("src,dst\ny,x\n")
    text = ('[load]\ntype = "tables"\n[[load.nodes]]\ntype = "t"\n'
            '[[load.edges]]\nrelation = "a"\nsrc_type = "t"\ndst_type = "t"\npath = "a.csv"\n'
            '[[load.edges]]\nrelation = "b"\nsrc_type = "t"\ndst_type = "t"\npath = "b.csv"\n'
            '[[transform]]\ntype = "largest_component"\n')
    with pytest.raises(DataError, match=r'transform "largest_component" works on graphs with '
                                        r'one node type and one relation, but .* has 1 node '
                                        r'types and 2 relations'):
        run_toml(text)


def test_every_registered_transform_says_whether_it_takes_typed_graphs():
    names = {info.name for info in create_host().registry.by_kind("transform")
             if info.cls.typed}
    assert names == {"dedup", "link_split", "normalize_features", "self_loops", "split"}
