import pyarrow as pa
import pytest

from graphflow.errors import DataError
from graphflow.io.ids import check_unique, encode_edges, index_edges, normalise_ids


def where(row: int) -> str:
    return f"edges.tsv:{row + 1}"


def test_integer_ids_that_are_0_to_n_stay_identity():
    s, d, ids = encode_edges(pa.array([0, 1, 2]), pa.array([1, 2, 0]))
    assert ids.is_identity and len(ids) == 3
    assert s.tolist() == [0, 1, 2] and d.tolist() == [1, 2, 0]


def test_other_ids_are_numbered_by_first_appearance_sources_first():
    s, d, ids = encode_edges(pa.array([10, 30]), pa.array([20, 10]))
    assert ids.to_arrow().to_pylist() == [10, 30, 20]
    assert s.tolist() == [0, 1] and d.tolist() == [2, 0]
    s, d, ids = encode_edges(pa.chunked_array([["b", "a"], ["c"]]), pa.array(["a", "d", "b"]))
    assert ids.to_arrow().to_pylist() == ["b", "a", "c", "d"]
    assert d.tolist() == [1, 3, 0]


def test_index_edges_follows_the_node_table_and_names_unknown_ids():
    nodes = pa.array(["x", "y", "z"])
    s, d = index_edges(pa.array(["z", "x"]), pa.array(["y", "y"]), nodes, where=where,
                       table="nodes.csv")
    assert s.tolist() == [2, 0] and d.tolist() == [1, 1]
    with pytest.raises(DataError, match=r"edges.tsv:2: edge target 'w' is not in the node "
                                        r"table nodes.csv; add it there or remove the edge"):
        index_edges(pa.array(["x", "y"]), pa.array(["y", "w"]), nodes, where=where,
                    table="nodes.csv")


def test_mixed_id_types_meet_as_text():
    a, b = normalise_ids(pa.array([1, 2]), pa.array(["1", "n2"]))
    assert a.to_pylist() == ["1", "2"] and b.type == pa.string()
    a, b = normalise_ids(pa.array([1], pa.int32()), pa.array([2]))
    assert a.type == b.type == pa.int64()


def test_duplicate_ids_name_both_rows():
    check_unique(pa.array(["a", "b"]), where=where)
    with pytest.raises(DataError, match=r"edges.tsv:4: node id 'b' appears again \(first at "
                                        r"edges.tsv:2\); node ids must be unique"):
        check_unique(pa.array(["a", "b", "c", "b", "a"]), where=where)
