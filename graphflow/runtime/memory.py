"""Peak memory of a stage: resident memory (RSS) of the process, and CUDA memory on a GPU.

On Linux the kernel keeps the process's high-water mark of resident memory (``VmHWM`` in
``/proc/self/status``) and resets it to the current RSS when ``5`` is written to
``/proc/self/clear_refs``; so a stage's peak is measured by a reset at its start and a read at
its end. Where that is unavailable (another OS, a locked-down ``/proc``), the peak is the
process's lifetime maximum from ``getrusage`` (an upper bound for the stage, marked as such).
CUDA peaks come from the caching allocator (``torch.cuda.max_memory_allocated``), reset per
stage with ``torch.cuda.reset_peak_memory_stats``.

This is what memory claims are judged by: a GCN or skip-gram stage whose peak stays within a
small multiple of its inputs (O(nnz), never N x N).
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path
from typing import Any

import torch

STATUS = Path("/proc/self/status")
CLEAR_REFS = Path("/proc/self/clear_refs")
MB = 2**20


def _hwm_bytes() -> int | None:
    """``VmHWM`` of this process in bytes, or None where /proc has no such line."""
    try:
        for line in STATUS.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024  # reported in kB
    except (OSError, ValueError, IndexError):
        return None
    return None


def _lifetime_peak_bytes() -> int:
    """The process's peak RSS since it started (``ru_maxrss``: kB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return int(peak if sys.platform == "darwin" else peak * 1024)


class PeakMemory:
    """Measures one stage: ``start()`` before it, ``stop()`` after it.

    :param device: the run's device; CUDA peaks are measured when it is a GPU.
    """

    def __init__(self, device: torch.device):
        self.device = device
        self.per_stage = False

    def start(self) -> None:
        """Reset the high-water marks (RSS and, on a GPU, the CUDA allocator's)."""
        try:
            CLEAR_REFS.write_text("5")
            self.per_stage = _hwm_bytes() is not None
        except OSError:
            self.per_stage = False
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)

    def stop(self) -> dict[str, Any]:
        """The stage's figures for ``run.json``: ``peak_rss_mb`` (and ``peak_cuda_mb``).

        ``rss_scope`` is ``"stage"`` when the peak was reset at the stage's start, else
        ``"process"`` (the peak since the process started).
        """
        hwm = _hwm_bytes() if self.per_stage else None
        figures: dict[str, Any] = {
            "peak_rss_mb": round((hwm if hwm is not None else _lifetime_peak_bytes()) / MB, 1),
            "rss_scope": "stage" if hwm is not None else "process",
        }
        if self.device.type == "cuda":
            figures["peak_cuda_mb"] = round(torch.cuda.max_memory_allocated(self.device) / MB, 1)
        return figures


def run_peak(stages: list[dict[str, Any]]) -> dict[str, Any]:
    """The run's peak over its stages: ``peak_rss_mb`` and ``peak_rss_stage`` (which stage),
    and ``peak_cuda_mb`` / ``peak_cuda_stage`` on a GPU."""
    out: dict[str, Any] = {}
    for key in ("peak_rss_mb", "peak_cuda_mb"):
        measured = [s for s in stages if key in s]
        if measured:
            top = max(measured, key=lambda s: s[key])
            out[key] = top[key]
            out[key.removesuffix("_mb") + "_stage"] = top["section"]
    return out
