"""Prefetching yields the same batches in the same order, and stops cleanly."""

from __future__ import annotations

import threading

import pytest
import torch

from graphflow.errors import DataError
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.prefetch import prefetch


def batch(i: int) -> MiniBatch:
    t = torch.tensor([i])
    return MiniBatch(seeds=t, input_nodes=t, blocks=[])


def test_same_order_as_inline():
    for depth in (0, 1, 3):
        got = [mb.seeds.item() for mb in prefetch(batch, range(7), depth=depth)]
        assert got == list(range(7))


def test_runs_ahead_in_another_thread():
    names = []

    def produce(i: int) -> MiniBatch:
        names.append(threading.current_thread().name)
        return batch(i)

    list(prefetch(produce, range(3), depth=1))
    assert set(names) == {"graphflow-prefetch"}


def test_errors_reach_the_consumer():
    def produce(i: int) -> MiniBatch:
        if i == 2:
            raise DataError("seed id 99 is out of range")
        return batch(i)

    got = []
    with pytest.raises(DataError, match="seed id 99"):
        for mb in prefetch(produce, range(5), depth=2):
            got.append(mb.seeds.item())
    assert got == [0, 1]


def test_breaking_out_stops_the_thread():
    before = threading.active_count()
    it = prefetch(batch, range(1000), depth=2)
    next(it)
    it.close()
    assert threading.active_count() == before
