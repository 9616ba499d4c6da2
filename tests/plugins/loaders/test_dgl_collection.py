"""The dgl_collection loader on hand-built graphs: edge features travel with the edges."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow_plugins.loaders.dgl_collection import DglCollectionLoader, DglCollectionOptions


def save(tmp_path, bond_nan=False):
    a = dgl.graph((torch.tensor([0, 1]), torch.tensor([1, 0])), num_nodes=2)
    b = dgl.graph((torch.tensor([0, 1, 2]), torch.tensor([1, 2, 0])), num_nodes=3)
    for g in (a, b):
        g.ndata["feat"] = torch.ones(g.num_nodes(), 2)
    a.edata["feat"] = torch.tensor([[1.0, 0.0], [1.0, 0.0]])
    b.edata["feat"] = torch.tensor([[0.0, 1.0], [1.0, 0.0], [0.0, float("nan") if bond_nan
                                                            else 1.0]])
    path = tmp_path / "graphs.bin"
    dgl.save_graphs(str(path), [a, b], {"labels": torch.tensor([0, 1])})
    return path


def test_edge_data_feat_becomes_the_edge_features(tmp_path):
    data = DglCollectionLoader(DglCollectionOptions(path=save(tmp_path))).load(None)
    g = data.graph
    assert g.edata["edge_feat"].tolist() == [[1, 0], [1, 0], [0, 1], [1, 0], [0, 1]]
    src, dst = g.edges()
    assert (src[2].item(), dst[2].item()) == (2, 3)  # graph b's first edge, shifted by 2
    none = DglCollectionLoader(DglCollectionOptions(path=save(tmp_path), edge_feat="")).load(None)
    assert "edge_feat" not in none.graph.edata


def test_a_nan_edge_feature_names_the_edge(tmp_path):
    with pytest.raises(DataError, match=r"the features of edge 4 -> 2 of .*graphs.bin are NaN "
                                        r"or infinite"):
        DglCollectionLoader(DglCollectionOptions(path=save(tmp_path, bond_nan=True))).load(None)
