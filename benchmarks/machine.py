"""Where a benchmark ran: the CPU, the libraries, the caps in effect and the measured choices.

Every benchmark prints :func:`header` before its figures and puts :func:`describe`'s dict
under ``"machine"`` in its final JSON line, so that a figure always travels with the CPU
(model name, family / model, the ISA flags that pick kernels: avx2, avx512*, amx*, bf16),
the core count, torch / MKL / oneDNN / DGL versions, DGL's state on this torch (tensor
adapter, GraphBolt), the environment caps (``ONEDNN_MAX_CPU_ISA``, ``ATEN_CPU_CAPABILITY``,
threads) and graphflow's measured choices (:mod:`graphflow.runtime.calibrate`) it ran with.

:func:`choices` gives a benchmark the same measured choices ``graphflow run`` applies: the
dense-product table for ``gemm.applied`` and the core splits for ``cores.plan``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.runtime import calibrate  # noqa: E402


def dgl_state() -> dict[str, Any]:
    """DGL's version, threads, and what it runs without on this torch: its tensor adapter
    (a ``libtensoradapter_pytorch_<torch>.so`` is shipped for torch <= 2.2.1 only; without it
    DGL allocates its outputs itself instead of through torch's allocator) and GraphBolt
    (stubbed by graphflow.compat.dgl)."""
    from graphflow.compat.dgl import dgl, graphbolt_is_stubbed

    base = getattr(getattr(dgl, "_ffi", None), "base", None)  # DGL's own loader state
    enabled = getattr(base, "is_tensor_adaptor_enabled", None)
    adapter = bool(enabled()) if enabled is not None else None
    return {"version": dgl.__version__, "threads": dgl.utils.get_num_threads(),
            "tensor_adapter": adapter, "graphbolt": not graphbolt_is_stubbed()}


def set_threads(threads: int) -> None:
    """``threads`` for torch's intra-op pool and DGL's OpenMP kernels alike (0: unchanged)."""
    if threads:
        from graphflow.compat.dgl import dgl

        torch.set_num_threads(threads)
        dgl.utils.set_num_threads(threads)


def choices(gemm_choice: str = "auto", budget: int | None = None
            ) -> tuple[dict[str, str] | None, dict[str, dict[str, int]], dict[str, Any]]:
    """The measured choices a run would apply: the gemm table (None for an explicit
    backend), the core splits for ``budget`` cores (default torch's threads), and their
    record."""
    table, gemm_record = calibrate.for_gemm(gemm_choice)
    splits, cores_record = calibrate.for_cores(budget or max(1, torch.get_num_threads()))
    return table, splits, {"mode": calibrate.mode(), "gemm": gemm_record,
                           "cores": cores_record}


def describe(calibration: dict[str, Any] | None = None) -> dict[str, Any]:
    """The machine record of a benchmark's JSON line."""
    info = {"cpu": calibrate.cpu_info(), "versions": calibrate.library_versions(),
            "caps": calibrate.env_caps(), "dgl": dgl_state()}
    if calibration is not None:
        info["calibration"] = calibration
    return info


def header(info: dict[str, Any]) -> str:
    """Three or four lines for the console."""
    cpu, v, caps, dgl = info["cpu"], info["versions"], info["caps"], info["dgl"]
    lines = [f"cpu: {cpu['model_name']} (family {cpu['family']} model {cpu['model']}), "
             f"{cpu['cores']} cores; {' '.join(cpu['isa']) or 'no AVX'}",
             f"versions: torch {v['torch']}, MKL {v['mkl']}, oneDNN {v['onednn']}, DGL "
             f"{v['dgl']} (tensor adapter {'on' if dgl['tensor_adapter'] else 'off'}, "
             f"GraphBolt {'on' if dgl['graphbolt'] else 'stubbed'}, {dgl['threads']} threads)",
             "caps: " + ", ".join(f"{k}={val}" for k, val in caps.items())]
    calib = info.get("calibration")
    if calib:
        gemm = calib["gemm"]
        buckets = ", ".join(f"{k} {b}" for k, b in gemm.get("buckets", {}).items())
        plans = "; ".join(f"{w} {p['workers']}w/{p['threads']}t/{p['worker_threads']}wt"
                          for w, p in calib["cores"].get("plans", {}).items())
        lines.append(f"measured choices ({calib['mode']}): gemm [{gemm['source']}] "
                     f"{buckets or gemm.get('requested', '')}; cores [{calib['cores']['source']}] "
                     f"{plans or 'policy'}")
    return "\n".join(lines)


def show(calibration: dict[str, Any] | None = None) -> dict[str, Any]:
    """:func:`describe`, printed with :func:`header`; returns the record."""
    info = describe(calibration)
    print(header(info), flush=True)
    return info


def add_precision_flags(p: Any) -> None:
    """``--precision`` (graphflow's training arithmetic) and ``--peer-precision`` (the peer's:
    the same autocast by default, or fp32) on an argparse parser."""
    p.add_argument("--precision", choices=["fp32", "bf16-mixed", "auto"], default="fp32",
                   help="graphflow's training arithmetic (auto: as graphflow run resolves it "
                        "on this machine); default fp32")
    p.add_argument("--peer-precision", choices=["fp32", "bf16-mixed", "same"],
                   default="same", help="the peer's training arithmetic: the same autocast as "
                                        "graphflow's (default) or fp32")


def precisions(requested: str, peer: str, device: str = "cpu") -> dict[str, str]:
    """``{"graphflow": ..., "dgl": ...}``: graphflow's precision as ``graphflow run`` resolves
    ``requested`` here, and the peer's; a difference is printed."""
    from graphflow.train.task import resolve_run_precision

    ours = resolve_run_precision(requested, device)[0]
    theirs = ours if peer == "same" else peer
    if ours != theirs:
        print(f"NOTE: the peers train in different arithmetic: graphflow {ours}, DGL {theirs}",
              flush=True)
    return {"graphflow": ours, "dgl": theirs}
