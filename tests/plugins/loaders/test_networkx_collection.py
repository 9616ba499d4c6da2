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
