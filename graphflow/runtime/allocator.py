"""Keep freed memory in the process between minibatches (glibc ``malloc`` settings).

A sampled training step allocates and frees the same large tensors every batch: the gathered
features (83k x 100 floats, 33 MB, for a 1024-seed batch of a 1M-node graph), each layer's
output and its gradient (16k x 256 floats, 16 MB), the autograd temporaries. glibc's
``malloc`` serves blocks above its mmap threshold (128 KiB at first, rising with what is freed
up to 32 MiB) with a fresh ``mmap``, and gives the top of its heap back to the kernel once
more than twice that is free. So batches fault their big tensors in again, page by page. On
this project's 2-core VM a sampled 3-layer GraphSAGE batch on a 1M-node graph
(``benchmarks/batch_parts.py``, 100 batches) took 1.8-2.3k minor faults, 40.1-40.3 ms of model
work and a 3.5-4.0 ms feature gather; with the memory kept, 87-523 faults, 38.8-39.0 ms and
2.8-3.0 ms. Whole epochs: docs/cores.md and docs/sampling.md.

:func:`apply` raises the mmap threshold to :data:`MMAP_THRESHOLD` and the trim threshold to
:data:`TRIM_THRESHOLD` with ``mallopt``, as ``MALLOC_MMAP_THRESHOLD_`` /
``MALLOC_TRIM_THRESHOLD_`` in the environment would, and as PyTorch's CPU performance guide
does by preloading jemalloc or tcmalloc. Blocks above 64 MiB (a graph's edge arrays, a
feature table) still come from ``mmap`` and go back to the kernel when freed. The setting is
process-wide and stays for the process's life (glibc has no call that restores its dynamic
thresholds), so :func:`~graphflow.runner.run_pipeline` applies it once per run, recorded in
``run.json``; ``[pipeline] allocator = "system"`` leaves ``malloc`` as it is.

Elsewhere than Linux with glibc (musl, macOS, Windows) nothing is changed.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import platform
from typing import Any, Literal

Allocator = Literal["retain", "system"]

M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 64 * 2**20
"""Blocks up to this size come from the heap and are reused when freed."""
TRIM_THRESHOLD = 512 * 2**20
"""Free memory at the top of the heap up to this size is kept for the next batch."""

_applied: dict[str, Any] | None = None


def apply(choice: Allocator = "retain") -> dict[str, Any]:
    """Set ``malloc`` up for ``choice`` and say what was done, for ``run.json``.

    ``retain``: keep freed blocks up to :data:`MMAP_THRESHOLD` and up to
    :data:`TRIM_THRESHOLD` of free heap (glibc only; idempotent). ``system``: change nothing
    (a process where ``retain`` was applied before keeps it: glibc cannot undo it).
    """
    global _applied
    libc = platform.libc_ver()[0] if platform.system() == "Linux" else ""
    if choice == "system":
        return {"allocator": "system", "libc": libc or platform.system(),
                "retained_before": _applied is not None}
    if _applied is not None:
        return _applied
    if libc != "glibc":
        return {"allocator": "system", "libc": libc or platform.system(),
                "note": "retain needs glibc; malloc left as it is"}
    lib = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    ok = lib.mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1 and \
        lib.mallopt(M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1
    if not ok:
        return {"allocator": "system", "libc": libc, "note": "mallopt refused the thresholds"}
    _applied = {"allocator": "retain", "libc": libc, "mmap_threshold": MMAP_THRESHOLD,
                "trim_threshold": TRIM_THRESHOLD}
    return _applied
