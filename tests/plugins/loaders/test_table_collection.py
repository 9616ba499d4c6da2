"""The table_collection loader: node, edge and graph tables into a collection."""

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphflow.errors import DataError
from graphflow_plugins.loaders.table_collection import (TableCollectionLoader,
                                                        TableCollectionOptions)


def write(tmp_path, edges_extra=""):
    (tmp_path / "nodes.csv").write_text("graph,id,x\nb,0,1.5\na,0,0.5\na,1,1.0\nb,1,2.0\nb,2,3.0\n")
    (tmp_path / "edges.csv").write_text("graph,src,dst\na,0,1\na,1,0\nb,0,1\nb,1,2\n"
                                        + edges_extra)
    pq.write_table(pa.table({"graph": ["a", "b"], "label": ["toxic", "inert"]}),
                   tmp_path / "graphs.parquet")
    return TableCollectionOptions(nodes=tmp_path / "nodes.csv", edges=tmp_path / "edges.csv",
                                  graphs=tmp_path / "graphs.parquet", feature_columns=["x"])


def test_reads_three_tables_with_ids_repeating_across_graphs(tmp_path):
    data = TableCollectionLoader(write(tmp_path)).load(None)
    g = data.graphs
    assert g.ids.to_pylist() == ["a", "b"] and g.graph_ptr.tolist() == [0, 2, 5]
    assert g.classes == ["inert", "toxic"] and g.labels.tolist() == [1, 0]
    assert data.graph.ndata["feat"][:, 0].tolist() == [0.5, 1.0, 1.5, 2.0, 3.0]
    src, dst = data.graph.edges()
    assert sorted(zip(src.tolist(), dst.tolist())) == [(0, 1), (1, 0), (2, 3), (3, 4)]


def test_an_edge_to_a_node_its_graph_lacks(tmp_path):
    options = write(tmp_path, edges_extra="a,0,2\n")
    with pytest.raises(DataError, match=r"edges.csv line 6: destination \(graph, node\) a, 2 "
                                        r"is not in the node table"):
        TableCollectionLoader(options).load(None)
