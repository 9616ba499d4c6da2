"""Prepare the next minibatches while the current one trains.

:func:`prefetch` runs ``produce(item)`` for each item in a background thread, at most
``depth`` results ahead of the consumer, and yields the results in order. torch ops release
the GIL, so sampling and gathering overlap the training step.

On CUDA the thread works in its own side stream: the consumer's stream waits on an event
recorded after each batch (so kernels are ordered without a device-wide sync), and every
tensor of the batch is marked with ``record_stream`` so the caching allocator does not reuse
its memory while the consumer's stream may still read it.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

import torch

from graphflow.sampling.block import MiniBatch

T = TypeVar("T")

_DONE = object()


def prefetch(produce: Callable[[T], MiniBatch], items: Iterable[T], *, depth: int = 1,
             device: torch.device | None = None) -> Iterator[MiniBatch]:
    """Yield ``produce(item)`` for each item, computed ``depth`` batches ahead in a thread.

    :param produce: builds one minibatch (sampling and gathering).
    :param items: the seed batches, in order.
    :param depth: how many finished batches may wait (>= 1); ``0`` produces inline.
    :param device: the CUDA device whose side stream the thread uses, or None.
    """
    if depth <= 0:
        for item in items:
            yield produce(item)
        return
    cuda = device is not None and device.type == "cuda"
    results: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    ready = None  # work queued on the caller's stream so far (the prepared graph's copies)
    if cuda:
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(device))

    def put(value: object) -> bool:
        while not stop.is_set():
            try:
                results.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        stream = torch.cuda.Stream(device) if cuda else None
        if stream is not None:
            stream.wait_event(ready)
        try:
            for item in items:
                if stream is None:
                    batch, event = produce(item), None
                else:
                    with torch.cuda.stream(stream):
                        batch = produce(item)
                        event = torch.cuda.Event()
                        event.record(stream)
                if not put((batch, event)):
                    return
            put(_DONE)
        except BaseException as exc:  # handed to the consumer, raised there
            put(exc)

    worker = threading.Thread(target=work, name="graphflow-prefetch", daemon=True)
    worker.start()
    try:
        while True:
            got = results.get()
            if got is _DONE:
                return
            if isinstance(got, BaseException):
                raise got
            batch, event = got
            if event is not None:
                current = torch.cuda.current_stream(device)
                current.wait_event(event)
                _record_stream(batch, current)
            yield batch
    finally:
        stop.set()
        worker.join()


def _record_stream(batch: MiniBatch, stream: torch.cuda.Stream) -> None:
    tensors = [batch.seeds, batch.input_nodes, batch.features, batch.labels]
    for b in batch.blocks:
        tensors += [b.src_nodes, b.indptr, b.indices, b.eids]
    for t in tensors:
        if t is not None and t.is_cuda:
            t.record_stream(stream)
