"""Typed graphs from DGL heterograph files (``dgl.save_graphs``) and networkx multigraphs with
type attributes."""

import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.graph import GraphData, NodeIds
from graphflow.io.dglfile import save_graph


def _hetero():
    g = dgl.heterograph({("user", "follows", "user"): ([0, 1], [1, 2]),
                         ("user", "buys", "item"): ([0, 2, 2], [1, 0, 1])})
    g.nodes["user"].data["feat"] = torch.arange(6.0).reshape(3, 2)
    g.nodes["user"].data["label"] = torch.tensor([0, 1, 0])
    g.nodes["user"].data["train_mask"] = torch.tensor([1, 0, 1], dtype=torch.uint8)
    g.edges["buys"].data["weight"] = torch.tensor([0.5, 1.0, 2.0])
    return g


def test_dgl_heterograph_file_loads_as_a_typed_graph(run_toml, tmp_path):
    dgl.save_graphs(str(tmp_path / "shop.bin"), [_hetero()])
    data = run_toml('[load]\ntype = "dgl"\npath = "shop.bin"\n').ctx.data
    g = data.graph
    assert data.is_typed and sorted(g.ntypes) == ["item", "user"]
    assert data.typed_ids["item"].is_identity and len(data.typed_ids["item"]) == 2
    assert g.nodes["user"].data["train_mask"].dtype == torch.bool
    assert g.edges["buys"].data["weight"].tolist() == [0.5, 1.0, 2.0]
    assert data.num_classes == 2


def test_typed_ids_survive_a_graphflow_written_file(run_toml, tmp_path):
    g = _hetero()
    typed_ids = {"user": NodeIds(3, pa.array(["ann", "bob", "cy"])),
                 "item": NodeIds(2, pa.array([70, 90]))}
    data = GraphData(graph=g, ids=NodeIds.identity(5), name="shop", meta={"target": "user"},
                     typed_ids=typed_ids)
    save_graph(tmp_path / "shop.bin", data)
    back = run_toml('[load]\ntype = "dgl"\npath = "shop.bin"\n').ctx.data
    assert back.typed_ids["user"].to_arrow().to_pylist() == ["ann", "bob", "cy"]
    assert back.typed_ids["item"].to_arrow().to_pylist() == [70, 90]
    assert back.meta["target"] == "user" and back.name == "shop"


def test_networkx_multidigraph_with_type_attributes(run_toml, tmp_path):
    import networkx as nx

    g = nx.MultiDiGraph()
    g.add_node("ann", type="user", age=31, label="fan")
    g.add_node("bob", type="user", age=45, label="critic")
    g.add_node(7, type="item")
    g.add_edge("ann", 7, type="buys", weight=2.0)
    g.add_edge("ann", 7, type="buys", weight=3.0)  # a parallel edge is kept
    g.add_edge("ann", 7, type="likes", weight=1.0)
    g.add_edge("ann", "bob", type="follows", weight=1.0)
    nx.write_graphml(g, tmp_path / "shop.graphml")
    data = run_toml('[load]\ntype = "networkx"\npath = "shop.graphml"\nnode_type = "type"\n'
                    'edge_type = "type"\nfeatures = ["age"]\n').ctx.data
    graph = data.graph
    assert data.is_typed and sorted(graph.ntypes) == ["item", "user"]
    assert sorted(graph.etypes) == ["buys", "follows", "likes"]
    assert graph.num_edges("buys") == 2
    assert graph.edges["buys"].data["weight"].tolist() == [2.0, 3.0]
    assert data.typed_ids["user"].to_arrow().to_pylist() == ["ann", "bob"]
    assert graph.nodes["user"].data["label"].tolist() == [1, 0]
    assert graph.nodes["user"].data["feat"].tolist() == [[31.0], [45.0]]
    assert "feat" not in graph.nodes["item"].data  # items have no age
    assert data.meta["classes"] == ["critic", "fan"] and data.meta["target"] == "user"
