"""Fitted transform state (normalize_features) and the hold_out_nodes transform."""

from __future__ import annotations

import pytest
import torch

from graphflow.bundle.fitted import FITTED, REPLAY
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.testing import make_tiny_graph
from graphflow_plugins.transforms.hold_out_nodes import HoldOutNodes, HoldOutNodesOptions
from graphflow_plugins.transforms.normalize_features import (NormalizeFeatures,
                                                             NormalizeFeaturesOptions)


class _Ctx:
    seed = 0

    def info(self, message: str) -> None:
        pass


def test_standard_normalisation_replays_the_training_statistics():
    standard = NormalizeFeatures(NormalizeFeaturesOptions(method="standard"))
    train = make_tiny_graph()
    fitted = standard.apply(train, _Ctx())
    (entry,) = fitted.meta[FITTED]
    x = train.graph.ndata["feat"]
    assert torch.allclose(torch.tensor(entry["state"]["mean"]), x.mean(0))
    new = make_tiny_graph()
    new.graph.ndata["feat"] = new.graph.ndata["feat"] * 3 + 1  # other statistics
    new.meta[REPLAY] = fitted.meta[FITTED]
    out = standard.apply(new, _Ctx()).graph.ndata["feat"]
    mean, std = x.mean(0), x.std(0, unbiased=False)
    assert torch.allclose(out, (new.graph.ndata["feat"] - mean) / std, atol=1e-6)
    refit = standard.apply(make_tiny_graph().with_graph(new.graph), _Ctx()).graph.ndata["feat"]
    assert not torch.allclose(out, refit)  # not refitted on the new data


def test_replayed_state_of_another_method_or_width_is_refused():
    standard = NormalizeFeatures(NormalizeFeaturesOptions(method="standard"))
    row = NormalizeFeatures(NormalizeFeaturesOptions(method="row"))
    state = standard.apply(make_tiny_graph(), _Ctx()).meta[FITTED]
    new = make_tiny_graph()
    new.meta[REPLAY] = state
    with pytest.raises(DataError, match='trained with method = "standard"'):
        row.apply(new, _Ctx())
    narrow = make_tiny_graph()
    narrow.graph.ndata["feat"] = narrow.graph.ndata["feat"][:, :3]
    narrow.meta[REPLAY] = state
    with pytest.raises(DataError, match="features have 3 columns, but the model was trained on 4"):
        standard.apply(narrow, _Ctx())


def _graph(n: int = 50) -> GraphData:
    from graphflow.compat.dgl import dgl

    src = torch.arange(n)
    dst = (src + 1) % n
    g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=n)
    g.ndata["feat"] = torch.arange(n, dtype=torch.float32).unsqueeze(1)
    g.ndata["train_mask"] = torch.arange(n) < 10
    g.ndata["val_mask"] = (torch.arange(n) >= 10) & (torch.arange(n) < 15)
    import pyarrow as pa

    return GraphData(graph=g, ids=NodeIds(n, pa.array([f"n{i}" for i in range(n)])))


def test_hold_out_nodes_removes_nodes_and_their_edges():
    data = _graph()
    out = HoldOutNodes(HoldOutNodesOptions(fraction=0.2)).apply(data, _Ctx())
    held = out.meta["held_out_nodes"].to_pylist()
    assert len(held) == 10 and out.num_nodes == 40
    kept = set(out.ids.to_arrow().to_pylist())
    assert kept.isdisjoint(held) and len(kept | set(held)) == 50
    assert not {f"n{i}" for i in range(15)} & set(held)  # training and validation nodes stay
    # every remaining edge joins two kept nodes, and the features followed their nodes
    src, dst = out.graph.edges()
    names = out.ids.to_arrow().to_pylist()
    feat = out.graph.ndata["feat"].squeeze(1).long().tolist()
    assert all(names[i] == f"n{f}" for i, f in enumerate(feat))
    gone = {int(h[1:]) for h in held}
    ring = sum(i not in gone and (i + 1) % 50 not in gone for i in range(50))
    assert out.num_edges == 2 * ring  # the ring's edges between kept nodes, both ways
    assert all(names[s] != names[d] for s, d in zip(src.tolist(), dst.tolist()))
    again = HoldOutNodes(HoldOutNodesOptions(fraction=0.2)).apply(_graph(), _Ctx())
    assert again.meta["held_out_nodes"].to_pylist() == held  # seeded


def test_hold_out_nodes_bad_input():
    with pytest.raises(ValueError, match=r"fraction must lie in \(0, 1\)"):
        HoldOutNodesOptions(fraction=1.5)
    with pytest.raises(DataError, match="asks for 45 of 50 nodes, but 35 are outside"):
        HoldOutNodes(HoldOutNodesOptions(fraction=0.9)).apply(_graph(), _Ctx())
    with pytest.raises(DataError, match="exclude names 'test_mask'"):
        HoldOutNodes(HoldOutNodesOptions(exclude=["test_mask"])).apply(_graph(), _Ctx())
