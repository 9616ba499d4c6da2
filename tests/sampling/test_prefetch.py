"""Prefetching yields the same batches in the same order, and stops cleanly."""

from __future__ import annotations

import sys
import threading

import pytest
import torch

from graphflow.errors import DataError
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.prefetch import SWITCH_INTERVAL, prefetch


def batch(i: int) -> MiniBatch:
    t = torch.tensor([i])
    return MiniBatch(seeds=t, input_nodes=t, blocks=[])


def test_same_order_as_inline():
    for depth in (0, 1, 3):
        for workers in (0, 1, 2, 3, 10):
            got = [mb.seeds.item() for mb in prefetch(batch, range(7), depth=depth,
                                                      workers=workers)]
            assert got == list(range(7))


def test_workers_take_every_nth_item_in_their_own_threads():
    seen: dict[int, str] = {}

    def produce(i: int) -> MiniBatch:
        seen[i] = threading.current_thread().name
        return batch(i)

    list(prefetch(produce, range(7), depth=1, workers=3))
    assert {i: int(name.rsplit("-", 1)[1]) for i, name in seen.items()} == \
        {i: i % 3 for i in range(7)}


def test_runs_ahead_in_another_thread():
    names = []

    def produce(i: int) -> MiniBatch:
        names.append(threading.current_thread().name)
        return batch(i)

    list(prefetch(produce, range(3), depth=1))
    assert set(names) == {"graphflow-prefetch"}
    names.clear()
    list(prefetch(produce, range(3), depth=1, workers=0))  # no workers: the caller's thread
    assert set(names) == {threading.current_thread().name}


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
    got = []
    with pytest.raises(DataError, match="seed id 99"):  # raised in order with workers too
        for mb in prefetch(produce, range(5), depth=2, workers=2):
            got.append(mb.seeds.item())
    assert got == [0, 1]


@pytest.mark.parametrize("workers", [1, 3])
def test_breaking_out_stops_the_threads(workers):
    before = threading.active_count()
    it = prefetch(batch, range(1000), depth=2, workers=workers)
    next(it)
    it.close()
    assert threading.active_count() == before


@pytest.fixture
def switch_interval():
    """Restore the interpreter's switch interval whatever a test leaves."""
    before = sys.getswitchinterval()
    yield
    sys.setswitchinterval(before)


def test_background_workers_shorten_the_switch_interval_and_restore_the_callers(
        switch_interval):
    sys.setswitchinterval(0.01)  # the caller's own
    seen = [sys.getswitchinterval() for _ in prefetch(batch, range(3), workers=2)]
    assert seen == [pytest.approx(SWITCH_INTERVAL)] * 3
    assert sys.getswitchinterval() == pytest.approx(0.01)
    seen = [sys.getswitchinterval() for _ in prefetch(batch, range(3), workers=0)]
    assert seen == [pytest.approx(0.01)] * 3  # inline: nothing to hand over
    sys.setswitchinterval(SWITCH_INTERVAL / 5)  # already shorter: kept
    seen = [sys.getswitchinterval() for _ in prefetch(batch, range(3), workers=2)]
    assert seen == [pytest.approx(SWITCH_INTERVAL / 5)] * 3


def test_interleaved_prefetches_restore_the_interval_when_the_last_one_ends(switch_interval):
    sys.setswitchinterval(0.02)
    first = prefetch(batch, range(10), workers=1)
    second = prefetch(batch, range(10), workers=2)
    next(first)
    next(second)
    first.close()  # the first one in ends first: the second still runs
    assert sys.getswitchinterval() == pytest.approx(SWITCH_INTERVAL)
    second.close()
    assert sys.getswitchinterval() == pytest.approx(0.02)
    with pytest.raises(DataError):  # a failing prefetch restores it too
        list(prefetch(lambda i: (_ for _ in ()).throw(DataError("bad seed")), range(3),
                      workers=2))
    assert sys.getswitchinterval() == pytest.approx(0.02)
