import pyarrow as pa
import pytest
import torch

from graphflow.graph import GraphData, NodeIds


def test_identity_ids():
    ids = NodeIds.identity(4)
    assert ids.is_identity and len(ids) == 4
    assert ids.to_arrow().to_pylist() == [0, 1, 2, 3]
    assert ids.take(torch.arange(4)) is ids
    assert ids.take(torch.tensor([3, 1])).to_arrow().to_pylist() == [3, 1]


def test_string_ids_follow_a_permutation():
    ids = NodeIds(3, pa.array(["a", "b", "c"]))
    assert ids.take(torch.tensor([2, 0, 1])).to_arrow().to_pylist() == ["c", "a", "b"]
    with pytest.raises(ValueError, match="2 node ids for 3 nodes"):
        NodeIds(3, pa.array(["a", "b"]))


def test_graph_data_properties(tiny_graph):
    assert tiny_graph.num_nodes == 6 and tiny_graph.num_edges == 9
    assert tiny_graph.num_classes == 2 and not tiny_graph.multilabel
    assert tiny_graph.summary() == "6 nodes, 9 edges, 4 features, 2 classes"
    g = tiny_graph.graph
    g.ndata["label"] = torch.zeros(6, 3)
    assert tiny_graph.multilabel and tiny_graph.num_classes == 3


def test_graph_data_checks_id_count(tiny_graph):
    with pytest.raises(ValueError, match="5 node ids for a graph of 6 nodes"):
        GraphData(graph=tiny_graph.graph, ids=NodeIds.identity(5))


def test_graph_module_does_not_import_linkpred():
    import subprocess
    import sys

    code = ("import sys, graphflow.graph; "
            "print(sorted(m for m in sys.modules if m.startswith('graphflow.linkpred')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
