"""The networkx_collection loader and from_networkx."""

import networkx as nx
import pytest

from graphflow.errors import DataError
from graphflow_plugins.loaders.networkx_collection import (NetworkxCollectionLoader,
                                                           NetworkxCollectionOptions)


def test_a_folder_of_graphml_files(tmp_path):
    for name, g, label in (("ring", nx.cycle_graph(4), 1), ("path", nx.path_graph(3), 0)):
        g.graph["label"] = label
        nx.set_node_attributes(g, {v: float(v) for v in g}, "x")
        nx.write_graphml(g, tmp_path / f"{name}.graphml")
    data = NetworkxCollectionLoader(NetworkxCollectionOptions(path=tmp_path, feat="x")).load(None)
    g = data.graphs
    assert g.ids.to_pylist() == ["path", "ring"] and g.graph_ptr.tolist() == [0, 3, 7]
    assert g.labels.tolist() == [0, 1]
    assert data.num_edges == 2 * (2 + 4)  # both directions of each undirected edge
    assert data.graph.ndata["feat"][:, 0].tolist() == [0, 1, 2, 0, 1, 2, 3]


def test_a_graph_without_its_label(tmp_path):
    nx.write_graphml(nx.path_graph(3), tmp_path / "g.graphml")
    with pytest.raises(DataError, match="graph g has no graph attribute 'label'"):
        NetworkxCollectionLoader(NetworkxCollectionOptions(path=tmp_path)).load(None)


def test_an_edge_attribute_becomes_the_edge_features_both_ways(tmp_path):
    g = nx.path_graph(3)  # undirected: 0-1, 1-2
    g.graph["label"] = 1
    nx.set_edge_attributes(g, {(0, 1): 2.0, (1, 2): 1.0}, "bond")
    d = nx.DiGraph([(0, 1)])
    d.graph["label"] = 0
    nx.set_edge_attributes(d, {(0, 1): 3.0}, "bond")
    for name, graph in (("a", g), ("b", d)):
        nx.write_graphml(graph, tmp_path / f"{name}.graphml")
    data = NetworkxCollectionLoader(NetworkxCollectionOptions(path=tmp_path, edge_feat="bond")) \
        .load(None)
    src, dst = data.graph.edges()
    bond = data.graph.edata["edge_feat"][:, 0].tolist()
    by_edge = {(s, t): b for s, t, b in zip(src.tolist(), dst.tolist(), bond)}
    assert by_edge == {(0, 1): 2.0, (1, 0): 2.0, (1, 2): 1.0, (2, 1): 1.0, (3, 4): 3.0}
    nx.set_edge_attributes(d, {(0, 1): 3.0}, "other")
    del d.edges[0, 1]["bond"]
    nx.write_graphml(d, tmp_path / "b.graphml")
    with pytest.raises(DataError, match=r"edge '0' -> '1' of graph b has no attribute 'bond'"):
        NetworkxCollectionLoader(NetworkxCollectionOptions(path=tmp_path, edge_feat="bond")) \
            .load(None)


def test_edge_features_of_different_lengths_fail_in_one_line():
    from graphflow.graphs.convert import from_networkx

    g = nx.Graph([(0, 1), (1, 2)])
    g.graph["label"] = 0
    g.edges[0, 1]["e"], g.edges[1, 2]["e"] = [1.0, 2.0], [1.0]
    with pytest.raises(DataError, match=r"the edge attribute 'e' has 2 different lengths "
                                        r"\(1, 2\); every edge needs the same"):
        from_networkx([g], edge_feat="e")
