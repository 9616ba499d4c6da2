"""The dense products of a training step, recorded op by op and run again alone.

:class:`RecordProducts` records every dense product (``mm``, ``addmm``, and oneDNN's
convolutions and inner products where graphflow's measured backend is oneDNN) with its
arguments' shapes, strides and dtypes; :func:`replay` runs the same products by themselves on
fresh tensors of those layouts. What they take alone is the part of a step that a peer
running the same products on the same kernels shares; the rest is where the two can differ.
``benchmarks/batch_parts.py`` (sampled GraphSAGE) and ``benchmarks/graph_classification.py``
(GIN) print the resulting ceiling: a peer's batch over the products alone.

:func:`flops` counts the recorded products' float operations from their shapes, and
:func:`peak` measures the CPU's dense-product rate on one large float32 GEMM (4096 x 1024 x
1024 by default) with the threads in force, so that a benchmark can print the products'
achieved GFLOP/s against what this CPU reaches (``benchmarks/batch_parts.py``,
``benchmarks/link_parts.py``). :func:`race` replays two sides' recorded products in
alternating order, so that both sides' products are timed the same way in the same run.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_map

PRODUCT_OPS = ("aten::mm", "aten::addmm", "aten::convolution", "aten::convolution_backward",
               "mkldnn::_linear_pointwise")
"""The dense products' ops (torch's and, through graphflow.sparse.gemm, oneDNN's)."""


class RecordProducts(TorchDispatchMode):
    """Records every dense product run under it: the op and its arguments, each tensor as
    (shape, stride, dtype), so that :func:`replay` can run the same products alone."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[tuple] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if func._schema.name in PRODUCT_OPS:
            spec = tree_map(lambda a: ("tensor", tuple(a.shape), a.stride(), a.dtype)
                            if isinstance(a, torch.Tensor) else a, (args, kwargs))
            self.calls.append((func, spec))
        return func(*args, **kwargs)


def _is_spec(a: Any) -> bool:
    return isinstance(a, tuple) and len(a) == 4 and a[0] == "tensor"


def prepare(calls: list[tuple]) -> list[tuple]:
    """The recorded calls with fresh random tensors of the recorded shapes and layouts."""
    def make(a):
        if _is_spec(a):  # a flat random buffer seen through the recorded strides
            size = 1 + sum((d - 1) * st for d, st in zip(a[1], a[2])) if all(a[1]) else 0
            flat = torch.empty(size, dtype=a[3])
            if a[3].is_floating_point:
                flat.normal_()
            else:
                flat.zero_()
            return flat.as_strided(a[1], a[2])
        return a

    return [(func, tree_map(make, spec, is_leaf=_is_spec)) for func, spec in calls]


def run(ready: list[tuple]) -> float:
    """Seconds of one pass over :func:`prepare`'s calls."""
    t = time.perf_counter()
    for func, (args, kwargs) in ready:
        func(*args, **kwargs)
    return time.perf_counter() - t


def replay(calls: list[tuple], rounds: int = 3) -> float:
    """Seconds to run ``calls`` (recorded by :class:`RecordProducts`) alone, on fresh random
    tensors of the recorded shapes and layouts (built before the timer); the median of
    ``rounds`` passes."""
    ready = prepare(calls)
    return statistics.median(run(ready) for _ in range(rounds))


def race(sides: dict[str, list[tuple]], rounds: int = 3, warmup: int = 1):
    """Replay each side's recorded calls ``rounds`` times, the order of the sides reversed
    every round (:func:`benchmarks.records.race`); returns the race (seconds per pass)."""
    from benchmarks import records

    ready = {name: prepare(calls) for name, calls in sides.items()}
    return records.race({name: (lambda rep, r=r: run(r)) for name, r in ready.items()}, rounds,
                        warmup=warmup, measure=lambda fn, rep: fn(rep))


def _numel(shape) -> int:
    return math.prod(shape) if shape else 1


def _conv_flops(out_shape, weight_shape) -> float:
    """2 x output elements x (input channels per group x kernel elements)."""
    return 2.0 * _numel(out_shape) * _numel(weight_shape[1:])


def flops(calls: list[tuple]) -> float:
    """Float operations (a multiply and an add each) of recorded products, from their
    shapes: ``mm`` / ``addmm`` 2 n k m; oneDNN's ``_linear_pointwise`` 2 rows k m;
    convolutions 2 x output elements x the weight's fan-in, and their backward that once per
    gradient asked for (input, weight)."""
    total = 0.0
    for func, (args, _) in calls:
        name = func._schema.name
        shapes = [a[1] for a in args if _is_spec(a)]
        if name == "aten::mm":
            (n, k), (_, m) = shapes[0], shapes[1]
            total += 2.0 * n * k * m
        elif name == "aten::addmm":
            (n, k), (_, m) = shapes[1], shapes[2]
            total += 2.0 * n * k * m
        elif name == "mkldnn::_linear_pointwise":
            x, w = shapes[0], shapes[1]
            total += 2.0 * _numel(x[:-1]) * x[-1] * w[0]
        elif name == "aten::convolution":
            x, w = args[0][1], args[1][1]
            stride, padding, dilation = args[3], args[4], args[5]
            out = [x[0], w[0]] + [
                (size + 2 * padding[i] - dilation[i] * (w[2 + i] - 1) - 1) // stride[i] + 1
                for i, size in enumerate(x[2:])]
            total += _conv_flops(out, w)
        elif name == "aten::convolution_backward":
            grad_out, w = args[0][1], args[2][1]
            mask = args[10] if len(args) > 10 else [True, True, False]
            total += _conv_flops(grad_out, w) * (int(bool(mask[0])) + int(bool(mask[1])))
    return total


def peak(m: int = 4096, k: int = 1024, n: int = 1024, reps: int = 5) -> dict[str, Any]:
    """The CPU's measured dense-product rate: ``reps`` timed float32 GEMMs (m x k) @ (k x n)
    with the threads in force, after one untimed; GFLOP/s of the median call, and of every
    call's range."""
    gen = torch.Generator().manual_seed(0)
    a, b = torch.randn(m, k, generator=gen), torch.randn(k, n, generator=gen)
    torch.mm(a, b)
    seconds = []
    for _ in range(reps):
        t = time.perf_counter()
        torch.mm(a, b)
        seconds.append(time.perf_counter() - t)
    work = 2.0 * m * k * n
    return {"shape": [m, k, n], "threads": torch.get_num_threads(),
            "gflops": work / statistics.median(seconds) / 1e9,
            "gflops_min": work / max(seconds) / 1e9, "gflops_max": work / min(seconds) / 1e9,
            "n": reps}
