"""Seed checks give one clear message; batching covers every seed once."""

from __future__ import annotations

import pytest
import torch

from graphflow.errors import DataError, DeviceError
from graphflow.sampling.seeds import check_seeds, num_batches, seed_batches, seed_ids

CPU = torch.device("cpu")


def test_valid_seeds_pass_as_int64():
    out = check_seeds(torch.tensor([3, 0, 5], dtype=torch.int32), 6, CPU)
    assert out.dtype == torch.int64 and out.tolist() == [3, 0, 5]


@pytest.mark.parametrize("seeds,message", [
    (torch.zeros(0, dtype=torch.int64), "empty seed batch"),
    (torch.tensor([1, 6]), "seed id 6 is out of range for a graph of 6 nodes (valid ids: 0..5)"),
    (torch.tensor([-1, 2]), "seed id -1 is out of range"),
    (torch.tensor([1, 4, 1]), "seed id 1 appears 2 times"),
    (torch.tensor([1.0, 2.0]), "1-D tensor of integer node ids"),
    (torch.tensor([[1, 2]]), "1-D tensor of integer node ids"),
])
def test_bad_seeds_raise_clear_errors(seeds, message):
    with pytest.raises(DataError, match=None) as info:
        check_seeds(seeds, 6, CPU)
    assert message in str(info.value)


def test_seeds_on_another_device_raise_device_error():
    with pytest.raises(DeviceError, match="seeds are on meta but the sampler samples on cpu"):
        check_seeds(torch.tensor([1, 2], device="meta"), 6, CPU)


def test_not_a_tensor():
    with pytest.raises(DataError, match="torch.Tensor of node ids, got list"):
        check_seeds([1, 2], 6, CPU)  # type: ignore[arg-type]


def test_batches_cover_every_seed_once():
    seeds = torch.arange(10)
    batches = seed_batches(seeds, 4, shuffle=True, drop_last=False,
                           generator=torch.Generator().manual_seed(0))
    assert [b.numel() for b in batches] == [4, 4, 2]
    assert sorted(torch.cat(batches).tolist()) == list(range(10))
    assert torch.cat(batches).tolist() != list(range(10))  # shuffled
    assert num_batches(10, 4, drop_last=False) == 3
    kept = seed_batches(seeds, 4, shuffle=False, drop_last=True)
    assert [b.tolist() for b in kept] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert num_batches(10, 4, drop_last=True) == 2


def test_seed_ids_from_mask():
    mask = torch.tensor([False, True, True, False])
    assert seed_ids(mask, 4).tolist() == [1, 2]
    with pytest.raises(DataError, match="one entry per node"):
        seed_ids(mask, 5)


def test_on_device_ignores_a_missing_index():
    from graphflow.sampling.seeds import on_device

    t = torch.zeros(1)
    assert on_device(t, torch.device("cpu"))
    assert not on_device(t, torch.device("meta"))
