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


def test_edge_feature_columns_become_the_edge_features(tmp_path):
    options = write(tmp_path)
    (tmp_path / "edges.csv").write_text("graph,src,dst,bond,length\na,0,1,1,1.5\na,1,0,1,1.5\n"
                                        "b,0,1,2,1.25\nb,1,2,1,nan\n")
    options.edge_feature_columns = ["bond", "length"]
    with pytest.raises(DataError, match=r"the features of the edge on edge table .*edges.csv "
                                        r"line 5 are NaN or infinite"):
        TableCollectionLoader(options).load(None)
    (tmp_path / "edges.csv").write_text("graph,src,dst,bond,length\na,0,1,1,1.5\na,1,0,1,1.5\n"
                                        "b,0,1,2,1.25\nb,1,2,1,1.0\n")
    data = TableCollectionLoader(options).load(None)
    src, dst = data.graph.edges()
    feat = data.graph.edata["edge_feat"]
    assert feat.tolist() == [[1, 1.5], [1, 1.5], [2, 1.25], [1, 1.0]]  # the table's order
    assert (src[2].item(), dst[2].item()) == (2, 3)  # graph b's 0 -> 1
    options.edge_feature_columns = ["graph"]
    with pytest.raises(DataError, match=r"column 'graph' holds string, not numbers"):
        TableCollectionLoader(options).load(None)


def test_a_non_numeric_node_feature_column_is_one_line(tmp_path):
    options = write(tmp_path)
    options.feature_columns = ["x", "graph"]
    with pytest.raises(DataError, match=r"node table .*nodes.csv: column 'graph' holds string, "
                                        r"not numbers; list numeric columns only"):
        TableCollectionLoader(options).load(None)
