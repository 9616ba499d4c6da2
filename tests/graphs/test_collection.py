"""GraphCollection.take / GraphData.take_graphs: a collection of some of the graphs."""

import pyarrow as pa
import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.graphs.collection import GraphCollection


def test_take_graphs_keeps_their_nodes_edges_and_table():
    """GraphData.take_graphs: the chosen graphs, in the given order, as a collection of their
    own (the graph ids, labels, masks, node ids, node and edge data follow)."""
    # graphs of 2, 3 and 1 nodes; edges 0-1 (graph 0), 2->3, 3->4 (graph 1)
    g = dgl.graph((torch.tensor([0, 2, 3]), torch.tensor([1, 3, 4])), num_nodes=6)
    g.ndata["feat"] = torch.arange(6.0).unsqueeze(1)
    g.edata["edge_feat"] = torch.tensor([[1.0], [2.0], [3.0]])
    table = GraphCollection(torch.tensor([0, 2, 5, 6]), pa.array(["a", "b", "c"]),
                            labels=torch.tensor([0, 1, 0]),
                            masks={"test": torch.tensor([True, False, True])})
    data = GraphData(graph=g, ids=NodeIds(6, pa.array([10, 11, 12, 13, 14, 15])),
                     graphs=table)
    sub = data.take_graphs(torch.tensor([1, 0]))
    assert sub.graphs.graph_ptr.tolist() == [0, 3, 5]
    assert sub.graphs.ids.to_pylist() == ["b", "a"]
    assert sub.graphs.labels.tolist() == [1, 0]
    assert sub.graphs.masks["test"].tolist() == [False, True]
    assert sub.ids.to_arrow().to_pylist() == [12, 13, 14, 10, 11]
    assert sub.graph.ndata["feat"][:, 0].tolist() == [2.0, 3.0, 4.0, 0.0, 1.0]
    src, dst = sub.graph.edges()
    edges = sorted(zip(src.tolist(), dst.tolist(), sub.graph.edata["edge_feat"][:, 0].tolist()))
    assert edges == [(0, 1, 2.0), (1, 2, 3.0), (3, 4, 1.0)]
    assert set(sub.graph.ndata.keys()) == {"feat"}  # no dgl.NID bookkeeping


def test_take_graphs_of_a_single_graph_fails_in_one_line():
    data = GraphData(graph=dgl.graph(([0], [1]), num_nodes=2), ids=NodeIds(2, None), name="g")
    with pytest.raises(DataError, match='"g" is a single graph, not a collection of graphs'):
        data.take_graphs(torch.tensor([0]))
