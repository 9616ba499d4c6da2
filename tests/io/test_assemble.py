import pyarrow as pa
import pytest
import torch

from graphflow.errors import DataError
from graphflow.io.assemble import EdgeColumns, assemble, undirected


def edges(src, dst, weight=None):
    return EdgeColumns(src=pa.array(src), dst=pa.array(dst),
                       weight=None if weight is None else pa.array(weight, pa.float32()),
                       where=lambda r: f"e.tsv:{r + 1}", source="edge list e.tsv")


def test_undirected_keeps_each_pair_once_with_its_first_weight():
    s, d, w = undirected(torch.tensor([0, 1, 2, 2, 0]), torch.tensor([1, 0, 2, 0, 1]),
                         torch.tensor([1.0, 9.0, 3.0, 4.0, 8.0]), 3)
    assert list(zip(s.tolist(), d.tolist(), w.tolist())) == [
        (0, 1, 1.0), (2, 2, 3.0), (0, 2, 4.0), (1, 0, 1.0), (2, 0, 4.0)]


def test_directed_graph_with_weights_and_string_ids():
    built = assemble(edges(["a", "b"], ["b", "c"], [0.5, 2.0]), None, directed=True, name="e")
    g = built.data.graph
    assert built.data.ids.to_arrow().to_pylist() == ["a", "b", "c"]
    assert g.edges()[0].tolist() == [0, 1] and g.edata["weight"].tolist() == [0.5, 2.0]
    built = assemble(edges(["a", "b", "b"], ["b", "a", "c"]), None, directed=False, name="e")
    assert built.data.num_edges == 4 and built.dropped == 1


@pytest.mark.parametrize(("cols", "message"), [
    (([], []), r"edge list e.tsv has no edges; the graph would be empty"),
    ((["a", None], ["b", "c"]), r"e.tsv:2: empty source node id"),
    ((["a", "b"], ["b", "c"], [1.0, float("nan")]), r"e.tsv:2: edge weight nan is not a finite"),
])
def test_bad_edges(cols, message):
    with pytest.raises(DataError, match=message):
        assemble(edges(*cols), None, directed=True, name="e")
