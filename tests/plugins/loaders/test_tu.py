"""The tu loader: TU Dortmund text files into a collection, and one line per bad input."""

from pathlib import Path

import pytest
import torch

from graphflow.errors import DataError
from graphflow_plugins.loaders.tu import TULoader, TUOptions

EXAMPLE = Path(__file__).resolve().parents[3] / "examples" / "data" / "rings_paths"


def write_tu(folder: Path, *, A="1, 2\n2, 1\n3, 4\n4, 3\n4, 5\n5, 4\n", indicator="1\n1\n2\n2\n2\n",
             labels="1\n-1\n", node_labels=None, node_attributes=None, edge_labels=None,
             edge_attributes=None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "DS_A.txt").write_text(A)
    (folder / "DS_graph_indicator.txt").write_text(indicator)
    if labels is not None:
        (folder / "DS_graph_labels.txt").write_text(labels)
    if node_labels is not None:
        (folder / "DS_node_labels.txt").write_text(node_labels)
    if node_attributes is not None:
        (folder / "DS_node_attributes.txt").write_text(node_attributes)
    if edge_labels is not None:
        (folder / "DS_edge_labels.txt").write_text(edge_labels)
    if edge_attributes is not None:
        (folder / "DS_edge_attributes.txt").write_text(edge_attributes)
    return folder


def load(folder: Path, **options):
    return TULoader(TUOptions(path=folder, name="DS", **options)).load(None)


def test_reads_a_collection(tmp_path):
    data = load(write_tu(tmp_path / "ds", node_labels="1\n2\n1\n1\n3\n",
                         node_attributes="0.5, 1\n1, 1\n2, 0\n0, 0\n1.5, 2\n"))
    graphs = data.graphs
    assert graphs.num_graphs == 2 and graphs.graph_ptr.tolist() == [0, 2, 5]
    assert graphs.ids.to_pylist() == [1, 2]
    assert graphs.labels.tolist() == [1, 0] and graphs.classes == ["-1", "1"]
    assert data.graph.num_edges() == 6
    assert data.graph.ndata["feat"].shape == (5, 2)  # auto: the attributes
    assert data.graph.ndata["node_label"].tolist() == [0, 1, 0, 0, 2]


def test_edge_features_are_the_attributes_or_else_the_labels_one_hot(tmp_path):
    labels = "2\n2\n5\n5\n1\n1\n"  # bond types, in DS_A.txt's edge order
    g = load(write_tu(tmp_path / "a", edge_labels=labels)).graph
    assert g.edata["edge_label"].tolist() == [2, 2, 5, 5, 1, 1]
    assert g.edata["edge_feat"].tolist() == [[0, 1, 0], [0, 1, 0], [0, 0, 1], [0, 0, 1],
                                             [1, 0, 0], [1, 0, 0]]
    attrs = "".join(f"{i}, 0.5\n" for i in range(6))
    g = load(write_tu(tmp_path / "b", edge_labels=labels, edge_attributes=attrs)).graph
    assert g.edata["edge_feat"][:, 0].tolist() == [0, 1, 2, 3, 4, 5]
    assert "edge_feat" not in load(write_tu(tmp_path / "c")).graph.edata


def test_node_labels_and_degrees_one_hot(tmp_path):
    folder = write_tu(tmp_path / "ds", node_labels="1\n2\n1\n1\n3\n")
    assert load(folder).graph.ndata["feat"].tolist()[1] == [0, 1, 0]
    deg = load(folder, features="degree").graph.ndata["feat"]
    assert deg.argmax(1).tolist() == [1, 1, 1, 2, 1]


def test_the_example_set(tmp_path):
    data = TULoader(TUOptions(path=EXAMPLE, name="RP")).load(None)
    assert data.graphs.num_graphs == 24 and data.num_nodes == 168
    assert torch.bincount(data.graphs.labels).tolist() == [12, 12]


@pytest.mark.parametrize("files, message", [
    ({"indicator": "1\n2\n1\n2\n2\n"}, "DS_graph_indicator.txt line 3: graph 1 comes after "
                                       "graph 2; the graph indicator must be sorted"),
    ({"indicator": "1\n1\n3\n3\n3\n", "labels": "1\n1\n1\n"}, "graph 2 has no nodes"),
    ({"A": "1, 2\n2, 3\n"}, "DS_A.txt line 2: edge 2 -> 3 joins graph 1 and graph 2"),
    ({"labels": "1\n"}, "DS_graph_labels.txt has 1 labels for 2 graphs: graph 2"),
    ({"node_labels": "1\n2\n"}, "DS_node_labels.txt has 2 lines but DS_graph_indicator.txt "
                                "lists 5 nodes"),
    ({"A": "1, 2\n2; 1\n"}, "DS_A.txt line 2: 1 values, expected 2"),
    ({"A": "1, 2\n2, x\n"}, "DS_A.txt line 2: 'x' is not an integer"),
    ({"A": "1, 2\n2, 9\n"}, "DS_A.txt line 2: edge 2, 9 names a node outside 1..5"),
])
def test_bad_input_is_one_line_naming_the_file_and_line(tmp_path, files, message):
    folder = write_tu(tmp_path / "ds", **files)
    with pytest.raises(DataError) as err:
        load(folder)
    text = str(err.value)
    assert message in text, text
    assert "\n" not in text


def test_missing_label_file_is_named(tmp_path):
    folder = write_tu(tmp_path / "ds", labels=None)
    with pytest.raises(DataError, match="DS_graph_labels.txt not found"):
        TULoader(TUOptions(path=folder, name="DS")).check()
