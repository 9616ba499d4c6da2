"""Feature placement and per-batch gathers."""

from __future__ import annotations

import pytest
import torch

from graphflow.errors import DeviceError
from graphflow.sampling.feature_store import FeatureStore, choose_placement

CPU = torch.device("cpu")


def test_gather_rows_of_features_and_labels():
    feat = torch.arange(12.0).reshape(6, 2)
    label = torch.tensor([0, 1, 2, 3, 4, 5])
    store = FeatureStore(feat, label, CPU, "auto")
    assert store.placement == "cpu"
    f, y = store.gather(torch.tensor([5, 0, 2]), torch.tensor([5, 0]))
    assert torch.equal(f, feat[[5, 0, 2]]) and torch.equal(y, label[[5, 0]])


def test_missing_features_and_labels_give_none():
    f, y = FeatureStore(None, None, CPU).gather(torch.tensor([1]), torch.tensor([1]))
    assert f is None and y is None


def test_pinned_needs_a_cuda_output_device():
    with pytest.raises(DeviceError, match='features = "pinned" .* output_device is cpu'):
        choose_placement("pinned", CPU, 100)


def test_device_placement_on_cpu_is_plain_cpu():
    assert choose_placement("device", CPU, 10**12) == "cpu"
    assert choose_placement("cpu", CPU, 1) == "cpu"


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_pinned_and_device_placements_on_cuda():
    feat = torch.randn(50, 3)
    label = torch.arange(50)
    ids = torch.tensor([4, 9, 0])
    for placement in ("device", "pinned"):
        store = FeatureStore(feat, label, torch.device("cuda"), placement)
        f, y = store.gather(ids, ids)
        assert f.is_cuda and torch.equal(f.cpu(), feat[ids]) and torch.equal(y.cpu(), label[ids])
