"""GraphData.from_edges / from_tables: every input kind, and a clear message for each bad input."""

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import torch

from graphflow.errors import DataError
from graphflow.graph import GraphData


def edges_of(data):
    src, dst = data.graph.edges()
    return list(zip(src.tolist(), dst.tolist()))


def test_integer_ids_with_num_nodes_and_node_data():
    feat = torch.arange(12.0).view(4, 3)
    data = GraphData.from_edges(np.array([0, 1, 2]), np.array([1, 2, 0]), num_nodes=4,
                                feat=feat, label=[0, 1, 1, -1],
                                masks={"train_mask": [True, True, False, False]},
                                classes=["a", "b"], name="toy")
    g = data.graph
    assert data.ids.is_identity and data.num_nodes == 4 and data.name == "toy"  # node 3: isolated
    assert edges_of(data) == [(0, 1), (1, 2), (2, 0)]
    assert torch.equal(g.ndata["feat"], feat) and g.ndata["feat"].dtype == torch.float32
    assert g.ndata["label"].tolist() == [0, 1, 1, -1]
    assert g.ndata["train_mask"].tolist() == [True, True, False, False]
    assert data.meta["classes"] == ["a", "b"]


def test_string_ids_from_lists_torch_and_arrow_inputs():
    data = GraphData.from_edges(["u", "v", "w"], pa.array(["v", "w", "u"]),
                                weight=torch.tensor([1.0, 2.0, 3.0]))
    assert data.ids.to_arrow().to_pylist() == ["u", "v", "w"]
    assert data.graph.edata["weight"].tolist() == [1.0, 2.0, 3.0]
    # Node ids fix the order; string labels become sorted class ids with their names.
    data = GraphData.from_edges(np.array(["b", "c"]), np.array(["a", "a"]),
                                node_ids=["a", "b", "c"], label=["cat", "dog", "cat"],
                                feat=np.eye(3))
    assert edges_of(data) == [(1, 0), (2, 0)]
    assert data.graph.ndata["label"].tolist() == [0, 1, 0]
    assert data.meta["classes"] == ["cat", "dog"]


def test_undirected_edges_are_merged_and_reported():
    said = []
    data = GraphData.from_edges(torch.tensor([0, 1, 1]), torch.tensor([1, 0, 2]),
                                directed=False, info=said.append)
    assert sorted(edges_of(data)) == [(0, 1), (1, 0), (1, 2), (2, 1)]
    assert said == ["undirected: merged 1 repeated node pairs"]


def test_from_tables_takes_arrow_dicts_and_pandas():
    nodes = {"id": ["x", "y", "z"], "feat": torch.ones(3, 2), "label": [0, 1, 0],
             "train_mask": [True, False, True]}
    for edges in (pa.table({"s": ["x", "y"], "d": ["y", "z"], "w": [0.5, 2.0]}),
                  {"s": ["x", "y"], "d": ["y", "z"], "w": [0.5, 2.0]},
                  pd.DataFrame({"s": ["x", "y"], "d": ["y", "z"], "w": [0.5, 2.0]})):
        data = GraphData.from_tables(edges, nodes, src="s", dst="d", weight="w")
        assert edges_of(data) == [(0, 1), (1, 2)]
        assert data.graph.edata["weight"].tolist() == [0.5, 2.0]
        assert data.graph.ndata["feat"].shape == (3, 2)
        assert data.graph.ndata["train_mask"].tolist() == [True, False, True]
    with pytest.raises(DataError, match=r"^edge table \(in memory\): no weight column 'weight'; "
                                        r"columns: s, d, w$"):
        GraphData.from_tables(edges, src="s", dst="d", weight="weight")


@pytest.mark.parametrize("kwargs, message", [
    (dict(src=[0, 1, 2], dst=[1, 2]),
     r"^from_edges: dst has 2 values but src has 3; every edge needs both ends$"),
    (dict(src=[0, 1], dst=[1, 0], weight=[1.0]),
     r"^from_edges: weight has 1 values but src has 2; one weight per edge$"),
    (dict(src=["a", None, "c"], dst=["b", "c", "a"]), r"^edge 1: empty source node id$"),
    (dict(src=np.array([0, 1]), dst=np.array([1, 7]), num_nodes=4),
     r"^edge 1: target node id 7 is out of range for num_nodes = 4 \(ids 0..3\)$"),
    (dict(src=[0, -1], dst=[1, 0], feat=np.ones((3, 2))),
     r"^edge 1: source node id -1 is out of range for num_nodes = 3 \(ids 0..2\)$"),
    (dict(src=[0, 1], dst=[1, 2], feat=np.array([[1.0], [np.nan], [0.0]])),
     r"^node 1: feature 0 of node 1 is nan; clean the data or set on_nan = \"zero\""),
    (dict(src=[0, 1], dst=[1, 2], num_nodes=3, label=[0, 1]),
     r"^from_edges: label has 2 rows for 3 nodes \(num_nodes = 3\); give one row per node$"),
    (dict(src=["a"], dst=["b"], node_ids=["a", "b"], feat=np.ones((2, 2)), label=[1, 0, 1]),
     r"^from_edges: label has 3 rows for 2 nodes \(node_ids\); give one row per node$"),
    (dict(src=["a"], dst=["q"], node_ids=["a", "b"]),
     r"^edge 0: edge target 'q' is not in the node table from_edges \(in memory\)"),
    (dict(src=["a"], dst=["b"], feat=np.ones((2, 2))),
     r"^from_edges: source ids are string, but without node_ids the nodes are 0..1; pass "
     r"node_ids"),
    (dict(src=[0], dst=[1], num_nodes=2, masks={"train": [True, False]}),
     r"^from_edges: unknown mask 'train'; masks: train_mask, val_mask, test_mask$"),
    (dict(src=[0.5], dst=[1.0]), r"^node ids must be integers or strings, not double$"),
    (dict(src=[], dst=[]), r"^from_edges \(in memory\) has no edges; the graph would be empty$"),
    (dict(src=["a", "b"], dst=["b", "a"], node_ids=["a", "b", "a"]),
     r"^node 2: node id 'a' appears again \(first at node 0\); node ids must be unique$"),
])
def test_bad_inputs_name_the_problem(kwargs, message):
    with pytest.raises(DataError, match=message):
        GraphData.from_edges(**kwargs)


def test_nan_features_can_be_zeroed():
    said = []
    data = GraphData.from_edges([0, 1], [1, 2], feat=np.array([[1.0], [np.inf], [np.nan]]),
                                on_nan="zero", info=said.append)
    assert data.graph.ndata["feat"].flatten().tolist() == [1.0, 0.0, 0.0]
    assert said == ['on_nan = "zero": set 2 NaN/inf feature values to 0']


def test_node_table_columns_of_different_lengths():
    with pytest.raises(DataError, match=r"^node table \(in memory\): columns of different "
                                        r"lengths \(id: 2, label: 3\)$"):
        GraphData.from_tables({"src": ["a"], "dst": ["b"]}, {"id": ["a", "b"], "label": [0, 1, 0]})
