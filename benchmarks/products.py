"""The dense products of a training step, recorded op by op and run again alone.

:class:`RecordProducts` records every dense product (``mm``, ``addmm``, and oneDNN's
convolutions and inner products where graphflow's measured backend is oneDNN) with its
arguments' shapes, strides and dtypes; :func:`replay` runs the same products by themselves on
fresh tensors of those layouts. What they take alone is the part of a step that a peer
running the same products on the same kernels shares; the rest is where the two can differ.
``benchmarks/batch_parts.py`` (sampled GraphSAGE) and ``benchmarks/graph_classification.py``
(GIN) print the resulting ceiling: a peer's batch over the products alone.
"""

from __future__ import annotations

import time

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


def replay(calls: list[tuple], rounds: int = 3) -> float:
    """Seconds to run ``calls`` (recorded by :class:`RecordProducts`) alone, on fresh random
    tensors of the recorded shapes and layouts (built before the timer); the best of
    ``rounds`` passes."""
    def make(a):
        if isinstance(a, tuple) and len(a) == 4 and a[0] == "tensor":
            return torch.empty_strided(a[1], a[2], dtype=a[3]).normal_()
        return a

    ready = [(func, tree_map(make, spec, is_leaf=lambda a: isinstance(a, tuple)
                             and len(a) == 4 and a[0] == "tensor")) for func, spec in calls]
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        for func, (args, kwargs) in ready:
            func(*args, **kwargs)
        best = min(best, time.perf_counter() - t)
    return best
