import numpy as np
import pyarrow as pa
import pytest
import torch

from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.hetero.build import RelationEdges, typed_graph


def _small(reverse: bool = False) -> GraphData:
    return typed_graph(
        nodes={"user": {"id": ["u1", "u2", "u3"], "feat": np.arange(6.0).reshape(3, 2),
                        "label": ["a", "b", "a"], "train_mask": [True, False, True]},
               "item": None},
        edges={("user", "clicks", "item"): (["u1", "u2", "u3", "u1"], ["i9", "i7", "i9", "i7"],
                                            [1.0, 2.0, 3.0, 4.0]),
               ("user", "follows", "user"): (["u1", "u3"], ["u2", "u2"])},
        reverse=reverse, name="shop")


def test_typed_graph_holds_types_ids_and_data():
    data = _small()
    g = data.graph
    assert data.is_typed and sorted(g.ntypes) == ["item", "user"]
    assert g.num_nodes("user") == 3 and g.num_nodes("item") == 2
    assert data.typed_ids["user"].to_arrow().to_pylist() == ["u1", "u2", "u3"]
    assert data.typed_ids["item"].to_arrow().to_pylist() == ["i9", "i7"]  # first appearance
    assert data.ids.is_identity and len(data.ids) == 5
    s, d = g.edges(etype=("user", "clicks", "item"))
    assert s.tolist() == [0, 1, 2, 0] and d.tolist() == [0, 1, 0, 1]
    assert g.edges[("user", "clicks", "item")].data["weight"].tolist() == [1, 2, 3, 4]
    assert "weight" not in g.edges[("user", "follows", "user")].data
    assert g.nodes["user"].data["feat"].dtype == torch.float32
    assert g.nodes["user"].data["label"].tolist() == [0, 1, 0]
    assert g.nodes["user"].data["train_mask"].tolist() == [True, False, True]
    assert "feat" not in g.nodes["item"].data
    assert data.meta["target"] == "user" and data.meta["classes"] == ["a", "b"]
    assert data.num_classes == 2 and not data.multilabel


def test_reverse_relations_mirror_edges_and_weights():
    g = _small(reverse=True).graph
    assert ("item", "rev-clicks", "user") in g.canonical_etypes
    assert ("user", "rev-follows", "user") in g.canonical_etypes
    s, d = g.edges(etype=("item", "rev-clicks", "user"))
    assert s.tolist() == [0, 1, 0, 1] and d.tolist() == [0, 1, 2, 0]
    assert g.edges[("item", "rev-clicks", "user")].data["weight"].tolist() == [1, 2, 3, 4]


def test_summary_lists_types_and_relations():
    data = _small()
    assert data.summary() == ("5 nodes of 2 types (item 2, user 3), 6 edges of 2 relations, "
                              "features on user (2), 2 classes on user")
    assert (("user", "clicks", "item"), 4) in data.relations()


def test_one_type_one_relation_is_the_homogeneous_graph():
    edges = {("paper", "cites", "paper"): (np.array([0, 1, 2]), np.array([1, 2, 0]))}
    data = typed_graph(nodes={"paper": None}, edges=edges)
    assert not data.is_typed and data.typed_ids is None
    reference = GraphData.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]))
    assert data.graph.ntypes == reference.graph.ntypes
    assert torch.equal(torch.stack(data.graph.edges()), torch.stack(reference.graph.edges()))
    assert data.ids.is_identity and len(data.ids) == 3


def test_with_graph_keeps_typed_ids_and_refuses_a_new_node_set():
    data = _small()
    same = data.with_graph(data.graph)
    assert same.typed_ids["user"] is data.typed_ids["user"]
    smaller = data.graph.subgraph({"user": [0, 1], "item": [0, 1]})
    with pytest.raises(DataError, match="changes the node set of a typed graph"):
        data.with_graph(smaller)
    ids = {"user": NodeIds(2, pa.array(["u1", "u2"])), "item": data.typed_ids["item"]}
    assert len(data.with_graph(smaller, typed_ids=ids).ids) == 4


def test_typed_ids_must_match_the_graph():
    data = _small()
    with pytest.raises(ValueError, match="type 'user'"):
        GraphData(graph=data.graph, ids=data.ids,
                  typed_ids={"user": NodeIds.identity(2), "item": NodeIds.identity(2)})


def test_unknown_node_type_is_named():
    with pytest.raises(DataError, match=r"names the target node type 'itme'.*did you mean "
                                        r'"item".*node types: user, item'):
        typed_graph(nodes={"user": None, "item": None},
                    edges={("user", "clicks", "itme"): (["u"], ["i"])})


def test_missing_endpoint_names_row_and_id():
    edges = [RelationEdges("user", "clicks", "item", pa.array(["u1", "u9"]), pa.array(["i", "i"]),
                           where=lambda r: f"clicks.csv:{r + 2}", source="edge table clicks.csv")]
    with pytest.raises(DataError, match=r"clicks.csv:3: edge source 'u9' is not in the node "
                                        r"table of type 'user'"):
        typed_graph(nodes={"user": {"id": ["u1", "u2"]}, "item": None}, edges=edges)


def test_duplicate_canonical_relation_is_refused():
    rel = [RelationEdges("user", "follows", "user", pa.array([1]), pa.array([2]), source="a.csv"),
           RelationEdges("user", "follows", "user", pa.array([2]), pa.array([1]), source="b.csv")]
    with pytest.raises(DataError, match=r"b.csv: the relation \('user', 'follows', 'user'\) is "
                                        r"also given by a.csv"):
        typed_graph(nodes={"user": None}, edges=rel)
    rev = [RelationEdges("a", "r", "b", pa.array([1]), pa.array([2]), source="r.csv"),
           RelationEdges("b", "rev-r", "a", pa.array([2]), pa.array([1]), source="rev.csv")]
    with pytest.raises(DataError, match="r.csv \\(its reverse\\)"):
        typed_graph(nodes={"a": None, "b": None}, edges=rev, reverse=True)


def test_non_finite_weight_is_refused():
    with pytest.raises(DataError, match="edge weight nan is not a finite number"):
        typed_graph(nodes={"a": None, "b": None},
                    edges={("a", "r", "b"): ([1, 2], [3, 4], [1.0, float("nan")]),
                           ("b", "s", "a"): ([3], [1])})
