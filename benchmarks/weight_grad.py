"""A linear map's weight gradient in its two orientations, side by side in one process.

Autograd computes ``dW = dY^T @ x``; :class:`graphflow.sparse.gemm._Linear` computes
``(x^T @ dY)^T`` (the same numbers, another product for MKL). This times forward + backward
of ``x @ W^T + b`` both ways for each shape in ``--rounds`` rounds, the order reversed every
round (``benchmarks/records.py``), and prints each way's median round with its range and count
(the fastest labelled ``best``) and the ratio (autograd's time over the input-major one's,
median of the round pairs: above 1, input-major is faster) beside the
orientation :func:`graphflow.sparse.gemm.linear` takes for that shape. The shapes: GINE's
per-layer edge maps (one-hot bond types, 4 or 8 wide, to the layer's width), GIN's first and
hidden layers on a batch of 32 graphs, and a sampled GraphSAGE batch's first layer::

    flock /tmp/graphflow-bench.lock python benchmarks/weight_grad.py
    python benchmarks/weight_grad.py --threads 1

A component figure; ``benchmarks/graph_classification.py --edge-features 4`` times whole
GINE epochs against DGL. The last line is JSON.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch
import torch.nn.functional as F

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graphflow.runtime import allocator  # noqa: E402
from graphflow.sparse import gemm  # noqa: E402

from benchmarks import machine, records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402

# (name, rows, in, out)
SHAPES = [("GINE edge map, 4 types -> 16", 7000, 4, 16),
          ("GINE edge map, 4 types -> 64", 7000, 4, 64),
          ("GINE edge map, 8 types -> 64", 7000, 8, 64),
          ("16 wide -> 64 (7000 rows)", 7000, 16, 64),
          ("GIN first layer, 16 -> 64", 1760, 16, 64),
          ("GIN hidden layer, 64 -> 64", 1760, 64, 64),
          ("sampled SAGE layer 1, 200 -> 256", 15900, 200, 256)]


def time_shape(rows: int, k: int, n: int, rounds: int, calls: int) -> dict[str, float]:
    """Median microseconds of forward + backward, each orientation, over ``rounds``
    alternating rounds of ``calls`` calls."""
    gen = torch.Generator().manual_seed(0)
    x = torch.rand(rows, k, generator=gen)
    w = torch.randn(n, k, generator=gen, requires_grad=True)
    b = torch.randn(n, generator=gen, requires_grad=True)
    dy = torch.randn(rows, n, generator=gen)
    ways = {"autograd": lambda: F.linear(x, w, b).backward(dy),
            "input_major": lambda: gemm._Linear.apply(x, w, b).backward(dy)}
    for fn in ways.values():  # warm-up: kernels chosen, memory touched
        for _ in range(3):
            fn()

    def per_call_us(fn, rep: int) -> float:
        t = time.perf_counter()
        for _ in range(calls):
            fn(rep)
        return (time.perf_counter() - t) / calls * 1e6

    raced = records.race({name: (lambda rep, fn=fn: fn()) for name, fn in ways.items()}, rounds,
                         measure=per_call_us)
    times = raced.times
    ratios = [a / i for a, i in zip(times["autograd"], times["input_major"])]
    return {"autograd_us": statistics.median(times["autograd"]),
            "input_major_us": statistics.median(times["input_major"]),
            "ratio": statistics.median(ratios), **raced.record()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=15, help="alternating rounds per shape")
    p.add_argument("--calls", type=int, default=40, help="calls per round")
    p.add_argument("--threads", type=int, default=torch.get_num_threads())
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/weight_grad/ "
                        "(benchmarks/records.py)")
    a = p.parse_args()
    load_before = load_average()
    if a.rounds < 1 or a.calls < 1:
        p.error(f"--rounds and --calls must be at least 1, got {a.rounds} and {a.calls}")
    allocator.apply("retain")  # as graphflow run sets it
    machine.set_threads(a.threads)
    result = {"machine": machine.show(), "threads": a.threads, "shapes": []}
    for name, rows, k, n in SHAPES:
        x = torch.empty(rows, k)
        w = torch.empty(n, k, requires_grad=True)
        takes = "input_major" if gemm._input_major_weight_grad(x, w, None) else "autograd"
        r = time_shape(rows, k, n, a.rounds, a.calls)
        print(f"{name:36s} {rows:>6} x {k:>3} -> {n:<4} autograd {r['autograd_us']:8.1f} us, "
              f"input-major {r['input_major_us']:8.1f} us, ratio {r['ratio']:.2f}; "
              f"gemm.linear takes {takes} (medians of {a.rounds} rounds; ranges "
              f"{r['spread']['autograd']['min']:.1f}-{r['spread']['autograd']['max']:.1f} / "
              f"{r['spread']['input_major']['min']:.1f}-{r['spread']['input_major']['max']:.1f})",
              file=sys.stderr, flush=True)
        result["shapes"].append({"name": name, "rows": rows, "in": k, "out": n,
                                 "takes": takes, **r})
    if a.record:
        write("weight_grad", result, load_before=load_before)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
