"""Features, labels and splits for node tasks, and the messages when something is missing."""

import pytest
import torch

from graphflow.context import Artifacts
from graphflow.errors import ConfigError, DataError
from graphflow.train.inputs import node_features, node_targets


def test_targets_of_the_tiny_graph(tiny_graph):
    t = node_targets(tiny_graph)
    assert t.num_classes == 2 and not t.multilabel
    assert t.splits["train"].tolist() == [0, 1, 2]
    assert t.splits["test"].tolist() == [4, 5]


def test_features_from_graph_embeddings_or_both(tiny_graph):
    emb = torch.arange(12.0).view(6, 2)
    arts = Artifacts(embeddings=emb)
    feat = tiny_graph.graph.ndata["feat"]
    assert torch.equal(node_features(tiny_graph, "feat", arts), feat)
    assert torch.equal(node_features(tiny_graph, "embeddings", arts), emb)
    both = node_features(tiny_graph, "feat+embeddings", arts)
    assert both.shape == (6, 6) and torch.equal(both[:, 4:], emb)


def test_missing_pieces_name_the_fix(tiny_graph):
    g = tiny_graph.graph
    with pytest.raises(ConfigError, match="no 'embeddings' artifact"):
        node_features(tiny_graph, "embeddings", Artifacts(), section="train")
    with pytest.raises(DataError, match="is .2, 3. but the graph has 6 nodes"):
        node_features(tiny_graph, "embeddings", Artifacts(embeddings=torch.zeros(2, 3)))
    g.ndata["feat"][2, 1] = float("nan")
    with pytest.raises(DataError, match="NaN or infinite values .first at internal node 2"):
        node_features(tiny_graph, "feat", Artifacts())
    del g.ndata["feat"]
    with pytest.raises(DataError, match='no node features .*features = "embeddings"'):
        node_features(tiny_graph, "feat", Artifacts())
    del g.ndata["train_mask"]
    with pytest.raises(DataError, match='no train_mask; add a split.*type = "split"'):
        node_targets(tiny_graph)
    g.ndata["train_mask"] = torch.zeros(6, dtype=torch.bool)
    with pytest.raises(DataError, match="train_mask selects no node"):
        node_targets(tiny_graph)
    g.ndata["train_mask"] = torch.ones(6, dtype=torch.bool)
    g.ndata["label"] = torch.tensor([0, 1, -1, 0, 1, 0])
    with pytest.raises(DataError, match=r"must lie in \[0, 2\), found -1\.\.1"):
        node_targets(tiny_graph)
    g.ndata["label"] = torch.rand(6)
    with pytest.raises(DataError, match="must be int64 .N,. class ids"):
        node_targets(tiny_graph)
    g.ndata["label"] = torch.full((6, 3), 0.5)
    with pytest.raises(DataError, match="must hold only 0 and 1"):
        node_targets(tiny_graph)
    del g.ndata["label"]
    with pytest.raises(DataError, match=r'no labels \(ndata\["label"\]\)'):
        node_targets(tiny_graph)


def test_multilabel_targets(tiny_graph):
    tiny_graph.graph.ndata["label"] = (torch.arange(18).view(6, 3) % 2).float()
    t = node_targets(tiny_graph)
    assert t.multilabel and t.num_classes == 3 and t.labels.dtype == torch.float32


def test_malformed_features_masks_and_classes(tiny_graph):
    g = tiny_graph.graph
    g.ndata["feat"] = torch.zeros(6)
    with pytest.raises(DataError, match=r'ndata\["feat"\] must be \(N=6, F\), got \(6,\)'):
        node_features(tiny_graph, "feat", Artifacts())
    g.ndata["val_mask"] = torch.zeros(6, dtype=torch.int64)
    with pytest.raises(DataError, match=r'ndata\["val_mask"\] must be bool \(N=6,\), got '
                                        r"torch.int64"):
        node_targets(tiny_graph)
    del g.ndata["val_mask"]
    g.ndata["label"] = torch.zeros(6, dtype=torch.int64)
    with pytest.raises(DataError, match="needs at least 2 classes, the labels have 1"):
        node_targets(tiny_graph)
