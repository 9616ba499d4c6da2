import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.errors import DataError
from graphflow.io.nodes import check_finite, node_table, read_node_table


def table(**columns):
    return node_table(pa.table(columns), where=lambda r: f"nodes:{r}", source="nodes")


def test_parquet_list_features_string_labels_and_masks(tmp_path):
    path = tmp_path / "nodes.parquet"
    pq.write_table(pa.table({
        "id": ["a", "b", "c"],
        "emb": pa.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], pa.list_(pa.float32())),
        "label": ["cat", None, "ant"],
        "train_mask": [True, False, None],
    }), path)
    t = read_node_table(path)
    assert t.ids.to_pylist() == ["a", "b", "c"]
    assert torch.equal(t.feat, torch.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    assert t.classes == ["ant", "cat"] and t.label.tolist() == [1, -1, 0]
    assert t.masks["train_mask"].tolist() == [True, False, False]


def test_csv_numeric_feature_columns(tmp_path):
    path = tmp_path / "nodes.csv"
    path.write_text("id,x1,x2,label,name\n7,0.5,1,2,seven\n9,1.5,2,0,nine\n")
    t = read_node_table(path)
    assert t.ids.to_pylist() == [7, 9] and t.label.tolist() == [2, 0] and t.classes is None
    assert torch.equal(t.feat, torch.tensor([[0.5, 1.0], [1.5, 2.0]]))
    t = read_node_table(path, feature_columns=["x2"])
    assert t.feat.shape == (2, 1)


def test_multilabel_columns():
    t = table(id=[1, 2, 3], label=pa.array([[0, 2], [], [1]]))
    assert t.label.tolist() == [[1, 0, 1], [0, 0, 0], [0, 1, 0]]
    t = table(id=[1, 2], label=pa.array([["x"], ["y", "x"]]))
    assert t.classes == ["x", "y"] and t.label.tolist() == [[1, 0], [1, 1]]
    t = table(id=[1, 2], label=pa.array([[1.0, 0.0], [0.0, 1.0]], pa.list_(pa.float32(), 2)))
    assert t.label.dtype == torch.float32 and t.label.shape == (2, 2)


@pytest.mark.parametrize(("columns", "message"), [
    ({"key": [1]}, r"nodes: no id column 'id'; columns: key \(set id_column\)"),
    ({"id": [1, 2, 1]}, r"nodes:2: node id 1 appears again \(first at nodes:0\)"),
    ({"id": ["a", None]}, r"nodes:1: empty node id"),
    ({"id": [1, 2], "f": pa.array([[1.0], [1.0, 2.0]])},
     r"column 'f' has lists of different lengths: row 0 has 1, row 1 has 2"),
    ({"id": [1], "a": pa.array([[1.0]]), "b": pa.array([[2.0]])},
     r"several list columns \(a, b\); set feature_columns"),
    ({"id": [1], "label": [1.5]}, r"label column 'label' holds double"),
])
def test_bad_tables(columns, message):
    with pytest.raises(DataError, match=message):
        table(**columns)


def test_non_finite_features():
    feat = torch.tensor([[1.0, 2.0], [float("nan"), 1.0], [float("inf"), 0.0]])
    ids = pa.array(["a", "b", "c"])
    with pytest.raises(DataError, match=r"nodes:1: feature 0 of node 'b' is nan; clean the data "
                                        r'or set on_nan = "zero" in \[load\]'):
        check_finite(feat, on_nan="error", where=lambda r: f"nodes:{r}", ids=ids)
    fixed, count = check_finite(feat, on_nan="zero", where=str, ids=ids)
    assert count == 2 and fixed.tolist() == [[1.0, 2.0], [0.0, 1.0], [0.0, 0.0]]
