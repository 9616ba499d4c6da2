"""The dense products of a linear layer, torch (MKL) against oneDNN, side by side.

``graphflow.sparse.gemm`` runs ``x @ W^T + b`` and its two gradients through MKL or oneDNN on
the CPU, per shape bucket as measured on the machine (``[pipeline] gemm = "auto"``,
``graphflow.runtime.calibrate``). This times the three products of each shape with both
backends in one process, the order of the backends reversed every call
(``benchmarks/records.py``'s orders), and prints each one's median with the range and count of
its calls, and the ratio of the medians. ``--record`` saves the figures under
``benchmarks/results/gemm/``. The shapes are a
sampled GraphSAGE batch's (``benchmarks/sampling.py``: 1024 seeds, fanouts [15, 10, 5],
hidden 256, 100 features; the row count changes every batch, so each call draws it within
+-5% as a sampler would) and two full-graph layers (fixed rows)::

    flock /tmp/graphflow-bench.lock python benchmarks/gemm.py

A component figure: ``benchmarks/sampling.py`` times whole training epochs against DGL. The
output starts with the machine (``benchmarks/machine.py``; ``--threads`` sets torch's), and the
JSON line records it under ``"machine"``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import torch

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from graphflow.sparse import gemm  # noqa: E402

from benchmarks import machine  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import orders, write  # noqa: E402
from benchmarks.records import spread as records_spread  # noqa: E402

# (name, rows, in, out, rows vary per call)
SHAPES = [("sampled SAGE layer 1", 15900, 200, 256, True),
          ("sampled SAGE layer 2", 2900, 512, 256, True),
          ("sampled SAGE layer 3", 1024, 512, 16, False),
          ("full graph, Cora-size hidden", 2708, 1433, 16, False),
          ("full graph, 4096 x 256 -> 256", 4096, 256, 256, False)]


def products(backend: str, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor,
             dy: torch.Tensor) -> dict[str, float]:
    """Seconds of the forward, input-gradient and weight-gradient products, one call each."""
    out = {}
    with gemm.applied(backend):
        for part, fn in (("forward", lambda: gemm.linear(x, w, b)),
                         ("input_grad", lambda: _input_grad(backend, dy, w)),
                         ("weight_grad", lambda: _weight_grad(backend, dy, x, w))):
            t = time.perf_counter()
            fn()
            out[part] = time.perf_counter() - t
    return out


def _input_grad(backend: str, dy: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return gemm._input_grad(dy, w) if backend == "onednn" else dy @ w


def _weight_grad(backend: str, dy: torch.Tensor, x: torch.Tensor,
                 w: torch.Tensor) -> torch.Tensor:
    return gemm._weight_grad(dy, x, w) if backend == "onednn" else (x.t() @ dy).t()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=40, help="calls per shape and backend")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=0, help="torch threads (default: torch's)")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/gemm/ (benchmarks/records.py)")
    args = p.parse_args(argv)
    load_before = load_average()
    machine.set_threads(args.threads)
    info = machine.show(machine.choices()[2])
    if not gemm.onednn_available():
        print("torch has no oneDNN here: nothing to compare")
        return 0
    g = torch.Generator().manual_seed(args.seed)
    figures = {}
    print(f"{torch.get_num_threads()} threads; ms per call (median of {args.calls}, the order "
          f"reversed every call; min-max), torch / oneDNN ratio of the medians")
    for name, rows, k, n, vary in SHAPES:
        big = torch.randn(int(rows * 1.05) + 1, k, generator=g)
        big_dy = torch.randn(big.shape[0], n, generator=g)
        w, b = torch.randn(n, k, generator=g), torch.randn(n, generator=g)
        spread = max(1, rows // 20) if vary else 0
        times: dict[str, dict[str, list[float]]] = {"torch": {}, "onednn": {}}
        for call, order in enumerate(orders(["onednn", "torch"], args.calls + 3)):
            m = rows + int(torch.randint(-spread, spread + 1, (1,), generator=g)) if vary else rows
            for backend in order:
                for part, s in products(backend, big[:m], w, b, big_dy[:m]).items():
                    if call >= 3:  # the first calls build kernels
                        times[backend].setdefault(part, []).append(s)
        row = {}
        print(f"{name} ({rows}{' +-5%' if vary else ''} x {k} -> {n}):")
        for part in ("forward", "input_grad", "weight_grad"):
            a, c = (statistics.median(times[x][part]) * 1e3 for x in ("torch", "onednn"))
            sp = {x: {k: (round(v * 1e3, 4) if k != "n" else v)
                      for k, v in records_spread(times[x][part]).items()}
                  for x in ("torch", "onednn")}
            row[part] = {"torch_ms": round(a, 3), "onednn_ms": round(c, 3),
                         "ratio": round(a / c, 2), "spread_ms": sp}
            print(f"  {part:12s} torch {a:7.3f} ({sp['torch']['min']:.3f}-"
                  f"{sp['torch']['max']:.3f})  oneDNN {c:7.3f} ({sp['onednn']['min']:.3f}-"
                  f"{sp['onednn']['max']:.3f})  ratio {a / c:5.2f}")
        figures[name] = row
    figures["machine"] = info
    if args.record:
        write("gemm", figures, load_before=load_before)
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
