"""Prepare the next minibatches while the current one trains.

:func:`prefetch` runs ``produce(item)`` for each item in ``workers`` background threads,
each at most ``depth`` results ahead of the consumer, and yields the results in item order.
Worker ``w`` takes items ``w, w + workers, w + 2 workers, ...``; torch and NumPy release the
GIL inside their kernels, so the workers sample different batches at once (one core each)
while the consumer trains. ``produce`` must therefore be safe to call from several threads,
and must not depend on the order calls happen in (the samplers give each batch its own
random generator).

On CUDA each worker works in its own side stream: the consumer's stream waits on an event
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


def prefetch(produce: Callable[[T], MiniBatch], items: Iterable[T], *, depth: int = 1,
             workers: int = 1, device: torch.device | None = None) -> Iterator[MiniBatch]:
    """Yield ``produce(item)`` for each item, in order, computed ahead in ``workers`` threads.

    :param produce: builds one minibatch (sampling and gathering); thread-safe.
    :param items: the seed batches, in order.
    :param depth: finished batches each worker may hold (>= 1); ``0`` produces inline.
    :param workers: background threads, each taking every ``workers``-th item; ``0``
        produces inline.
    :param device: the CUDA device whose side streams the workers use, or None.
    """
    if depth <= 0 or workers <= 0:
        for item in items:
            yield produce(item)
        return
    items = list(items)
    workers = max(1, min(workers, len(items)))
    cuda = device is not None and device.type == "cuda"
    lanes = [queue.Queue(maxsize=depth) for _ in range(workers)]
    stop = threading.Event()
    ready = None  # work queued on the caller's stream so far (the prepared graph's copies)
    if cuda:
        ready = torch.cuda.Event()
        ready.record(torch.cuda.current_stream(device))

    def put(results: queue.Queue, value: object) -> bool:
        while not stop.is_set():
            try:
                results.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def work(w: int) -> None:
        results = lanes[w]
        stream = torch.cuda.Stream(device) if cuda else None
        if stream is not None:
            stream.wait_event(ready)
        try:
            for item in items[w::workers]:
                if stream is None:
                    batch, event = produce(item), None
                else:
                    with torch.cuda.stream(stream):
                        batch = produce(item)
                        event = torch.cuda.Event()
                        event.record(stream)
                if not put(results, (batch, event)):
                    return
        except BaseException as exc:  # handed to the consumer, raised there
            put(results, exc)

    threads = [threading.Thread(target=work, args=(w,), daemon=True,
                                name="graphflow-prefetch" if workers == 1 else
                                f"graphflow-prefetch-{w}")
               for w in range(workers)]
    for t in threads:
        t.start()
    try:
        for i in range(len(items)):
            got = lanes[i % workers].get()
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
        for t in threads:
            t.join()


def _record_stream(batch: MiniBatch, stream: torch.cuda.Stream) -> None:
    tensors = [batch.seeds, batch.input_nodes, batch.features, batch.labels]
    for b in batch.blocks:
        tensors += [b.src_nodes, b.indptr, b.indices, b.eids]
    for t in tensors:
        if isinstance(t, torch.Tensor) and t.is_cuda:
            t.record_stream(stream)
