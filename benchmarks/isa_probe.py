"""Which instruction set each library on the path actually runs, and its products' speed.

An emulated older CPU is a set of environment caps (``ONEDNN_MAX_CPU_ISA``,
``ATEN_CPU_CAPABILITY``, ``MKL_ENABLE_INSTRUCTIONS``); a cap that a library does not read
leaves it on the full instruction set, and the row is not the CPU it claims to be. This probe
runs in the environment under test and reports, per library, what it says it uses and how
fast its float32 products go, so that a table can show the cap bit:

* MKL: the ISA line of ``MKL_VERBOSE`` (e.g. "Intel(R) AVX2"), and the median ms of a
  (4096, 1024) x (1024, 256) product through torch (``addmm``: MKL's sgemm);
* oneDNN: the ``isa:`` line of ``ONEDNN_VERBOSE``, and the same product through oneDNN
  (:func:`graphflow.sparse.gemm.linear` under ``gemm = "onednn"``);
* ATen: torch's CPU capability (its vectorised elementwise kernels).

Both timings alternate call by call and report the median of ``--reps`` calls.

    ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 \
        python benchmarks/isa_probe.py --threads 1
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

SHAPE = (4096, 1024, 256)
"""(M, K, N) of the timed product."""

_VERBOSE = """
import torch
from graphflow.sparse import gemm
a = torch.randn(64, 64)
a @ a
with gemm.applied("onednn"):
    gemm.linear(torch.randn(4096, 256), torch.randn(256, 256))
"""


def isa_lines() -> dict[str, str | None]:
    """What MKL and oneDNN print as their instruction set, from a child process with their
    verbose modes on (the caps of this environment apply to it)."""
    env = {**os.environ, "MKL_VERBOSE": "1", "ONEDNN_VERBOSE": "1"}
    done = subprocess.run([sys.executable, "-c", _VERBOSE], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=120)
    text = done.stdout + done.stderr
    mkl = re.search(r"MKL_VERBOSE .*?architecture (.*?)(?: with support| enabled|,)", text)
    onednn = re.search(r"onednn_verbose,.*?info,cpu,isa:(.*)", text)
    return {"mkl": mkl.group(1).strip() if mkl else None,
            "onednn": onednn.group(1).strip() if onednn else None}


def product_ms(reps: int) -> dict[str, float]:
    """Median ms of the (M, K) x (K, N) product through MKL and through oneDNN, alternating."""
    import torch

    from graphflow.sparse import gemm

    m, k, n = SHAPE
    gen = torch.Generator().manual_seed(0)
    x, w = torch.randn(m, k, generator=gen), torch.randn(n, k, generator=gen)
    times: dict[str, list[float]] = {"mkl": [], "onednn": []}
    for i in range(reps + 1):
        for name in (("mkl", "onednn") if i % 2 == 0 else ("onednn", "mkl")):
            with gemm.applied("torch" if name == "mkl" else "onednn"):
                t = time.perf_counter()
                gemm.linear(x, w)
                elapsed = time.perf_counter() - t
            if i:  # the first call builds kernels
                times[name].append(elapsed * 1e3)
    return {k: round(statistics.median(v), 3) for k, v in times.items()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=0, help="torch threads (0: unchanged)")
    p.add_argument("--reps", type=int, default=20)
    a = p.parse_args(argv)
    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    out = {"isa": {**isa_lines(), "aten": torch.backends.cpu.get_cpu_capability()},
           "product_ms": product_ms(a.reps), "shape": list(SHAPE),
           "threads": torch.get_num_threads(),
           "caps": {k: os.environ[k] for k in ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
                                               "MKL_ENABLE_INSTRUCTIONS") if k in os.environ}}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
