"""Where a pipeline's time goes, by operator: ``graphflow run`` under ``torch.profiler``.

::

    python benchmarks/op_shares.py examples/bbbp_gin.toml --set train.epochs=2 --threads 1

runs the pipeline once (its own settings, ``--set`` overrides as ``graphflow run`` takes them,
output to a temporary folder) with the CPU profiler on, then prints the operators with the
largest self time, each with its share of all operators' self time, and the share of the dense
products (``aten::mm``, ``aten::addmm``, ``aten::bmm``, ``aten::_addmm_activation``): the part a
peer running the same network pays alike, which bounds any speed-up over it (Amdahl).

The profiler adds its own overhead to every operator call, so the shares, not the seconds, are
the figure. The whole run is profiled (loading and evaluation included); a few epochs keep the
training share dominant.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

GEMM = ("aten::mm", "aten::addmm", "aten::bmm", "aten::_addmm_activation")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pipeline", type=Path)
    p.add_argument("--set", dest="overrides", action="append", default=[],
                   metavar="SECTION.KEY=VALUE")
    p.add_argument("--threads", type=int, default=None,
                   help="torch intra-op threads (default: the pipeline's own)")
    p.add_argument("--top", type=int, default=15)
    args = p.parse_args(argv)

    import torch
    from torch.profiler import ProfilerActivity, profile

    from graphflow.cli.main import main as graphflow

    overrides = list(args.overrides)
    if args.threads is not None:
        torch.set_num_threads(args.threads)
        overrides.append(f"train.cores.threads={args.threads}")
    with tempfile.TemporaryDirectory() as out:
        cmd = ["run", str(args.pipeline), "--out-dir", out, "--quiet"]
        for o in overrides:
            cmd += ["--set", o]
        with profile(activities=[ProfilerActivity.CPU]) as prof:
            code = graphflow(cmd)
    if code:
        return code
    events = prof.key_averages()
    total = sum(e.self_cpu_time_total for e in events) or 1
    print(f"{'operator':44s} {'self s':>8s} {'share':>6s} {'calls':>7s}")
    for e in sorted(events, key=lambda e: -e.self_cpu_time_total)[:args.top]:
        print(f"{e.key[:44]:44s} {e.self_cpu_time_total / 1e6:8.2f} "
              f"{100 * e.self_cpu_time_total / total:5.1f}% {e.count:7d}")
    gemm = sum(e.self_cpu_time_total for e in events if e.key in GEMM)
    print(f"dense products: {100 * gemm / total:.1f}% of all operators' self time "
          f"({total / 1e6:.2f} s under the profiler)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
