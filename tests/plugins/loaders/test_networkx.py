import networkx as nx
import pytest
import torch

from graphflow.errors import ConfigError, DataError


def test_karate_club_club_becomes_the_label(run_toml):
    data = run_toml('[load]\ntype = "networkx"\ngraph = "karate_club"\n').ctx.data
    assert data.num_nodes == 34 and data.num_edges == 156  # 78 undirected edges, both ways
    assert data.meta["classes"] == ["Mr. Hi", "Officer"]
    club = nx.get_node_attributes(nx.karate_club_graph(), "club")
    assert data.graph.ndata["label"].tolist() == [int(club[i] == "Officer") for i in range(34)]
    assert data.ids.to_arrow().to_pylist() == list(range(34))
    assert "weight" in data.graph.edata


def test_graphml_file_with_string_ids_features_and_directed_edges(run_toml, tmp_path):
    g = nx.DiGraph()
    g.add_node("x", f1=1.0, f2=2.0, kind="a")
    g.add_node("y", f1=3.0, f2=4.0, kind="b")
    g.add_node("z", f1=5.0, f2=6.0, kind="a")
    g.add_edge("x", "y", weight=0.5)
    g.add_edge("z", "y", weight=2.0)
    nx.write_graphml(g, tmp_path / "g.graphml")
    text = '[load]\ntype = "networkx"\npath = "g.graphml"\nlabel = "kind"\nfeatures = ["f1", "f2"]'
    data = run_toml(text).ctx.data
    ids = data.ids.to_arrow().to_pylist()
    assert ids == ["x", "y", "z"]
    src, dst = data.graph.edges()
    assert sorted((ids[s], ids[d]) for s, d in zip(src.tolist(), dst.tolist())) == \
        [("x", "y"), ("z", "y")]
    assert torch.equal(data.graph.ndata["feat"], torch.tensor([[1.0, 2.0], [3.0, 4.0],
                                                               [5.0, 6.0]]))
    assert data.meta["classes"] == ["a", "b"] and data.graph.ndata["label"].tolist() == [0, 1, 0]


def test_gml_file_keeps_its_labels_as_ids(run_toml, tmp_path):
    nx.write_gml(nx.path_graph(["p", "q", "r"]), tmp_path / "g.gml")
    data = run_toml('[load]\ntype = "networkx"\npath = "g.gml"\n').ctx.data
    assert data.ids.to_arrow().to_pylist() == ["p", "q", "r"] and data.num_edges == 4


def test_edgelist_and_adjlist_files(run_toml, tmp_path):
    (tmp_path / "g.edgelist").write_text("1 2 0.5\n2 3 1.5\n")
    data = run_toml('[load]\ntype = "networkx"\npath = "g.edgelist"\n').ctx.data
    assert data.num_edges == 4 and sorted(data.graph.edata["weight"].tolist()) == \
        [0.5, 0.5, 1.5, 1.5]
    (tmp_path / "g.adj").write_text("a b c\nb c\n")
    data = run_toml('[load]\ntype = "networkx"\npath = "g.adj"\nformat = "adjlist"\n',
                    name="adj.toml").ctx.data
    assert data.num_nodes == 3 and data.num_edges == 6


def test_errors(run_toml, tmp_path):
    with pytest.raises(ConfigError, match=r"graph = 'petersen': unknown; choose one of "
                                          r"karate_club"):
        run_toml('[load]\ntype = "networkx"\ngraph = "petersen"\n')
    with pytest.raises(ConfigError, match=r"cannot tell the format of g.dat"):
        run_toml('[load]\ntype = "networkx"\npath = "g.dat"\n')
    with pytest.raises(DataError, match=r"graph file not found: .*g.gml"):
        run_toml('[load]\ntype = "networkx"\npath = "g.gml"\n')
    (tmp_path / "bad.graphml").write_text("<graphml><oops")
    with pytest.raises(DataError, match=r"bad.graphml: cannot read it as graphml"):
        run_toml('[load]\ntype = "networkx"\npath = "bad.graphml"\n')
