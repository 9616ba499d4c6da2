"""The headline benchmarks under emulated CPUs and thread counts: one table, graphflow vs DGL.

Each *row* is an environment: the instruction sets the libraries may use (``native``, or
``avx2``: ``ONEDNN_MAX_CPU_ISA=AVX2``, ``ATEN_CPU_CAPABILITY=avx2`` and
``MKL_ENABLE_INSTRUCTIONS=AVX2``, as on a CPU without AVX-512: every library on the path, MKL's
products included) and a thread count (``--threads`` of each benchmark: torch's and DGL's). Each
*column* is a benchmark, run in its own subprocess with the row's environment, in a quick
but whole-epoch size:

``sampling``
    ``benchmarks/sampling.py --quick --training-only``: sampled GraphSAGE, two whole epochs of
    a 200k-node, 4M-edge graph (196 batches of 1024) per peer, the order reversed between
    them; ``train_speedup`` = DGL's median epoch time / graphflow's.
``linkpred``
    ``benchmarks/linkpred.py --quick --epochs 2``: sampled link prediction, two whole epochs
    (1M edges, ~980 batches) of each peer, the order reversed between them; ``epoch_ratio``
    (the medians').
``gcn``
    ``benchmarks/gcn.py --quick``: full-graph GCN epochs on Cora and an arxiv-size SBM;
    ``speedup`` (median epoch) for each graph.
``node2vec``
    ``benchmarks/node2vec.py --quick --skip-walks --cases sbm --train-seeds 1``: walks +
    skip-gram end to end on a 2k-node SBM against DGL + gensim and PecanPy + gensim;
    ``sbm_ratio`` (the faster peer's time / graphflow's). It runs in the ``bench`` extra's own
    environment, ``.venv-bench`` (docs/node2vec.md), when that exists.

Each subprocess is pinned to as many cores as the row has threads (``sched_setaffinity``), so
that a 1-thread row is a 1-core machine for both peers: graphflow's sampling worker, if it
has one, shares that core instead of taking an idle one. Each subprocess calibrates for its
own environment (the ISA caps and the usable cores are part of the cache's signature, the
thread count is its core budget; ``graphflow.runtime.calibrate``), so every row runs with the choices
graphflow would measure on such a CPU. A cell shows the ratio (> 1:
graphflow faster) and the two times; the choices each row ran with are listed under the
table. Each row starts with ``benchmarks/isa_probe.py`` in its environment: the instruction
set MKL and oneDNN say they run and a (4096, 1024) x (1024, 256) product's median ms through
each (the ``products`` column), which shows that the row's caps took effect. The output ends with the markdown table and one JSON line with every figure.

    flock /tmp/graphflow-bench.lock python benchmarks/matrix.py            # the whole table
    python benchmarks/matrix.py --rows avx2-2,avx2-1 --columns sampling    # a part of it
    python benchmarks/matrix.py --partial 40   # first 40 batches only (a partial check)

The whole table takes about 15 minutes on an idle 2-core machine; ``--timeout`` bounds each
cell (a cell that runs out is marked, the table still prints).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import records  # noqa: E402

AVX2 = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2"}
ROWS: dict[str, tuple[dict[str, str], int]] = {
    "native-2": ({}, 2),
    "avx2-2": (AVX2, 2),
    "avx2-1": (AVX2, 1),
    "native-1": ({}, 1),
}
"""Row name -> (environment caps, threads)."""
COLUMNS: dict[str, list[str]] = {
    "sampling": ["benchmarks/sampling.py", "--quick", "--training-only"],
    "linkpred": ["benchmarks/linkpred.py", "--quick", "--epochs", "2"],
    "gcn": ["benchmarks/gcn.py", "--quick"],
    "node2vec": ["benchmarks/node2vec.py", "--quick", "--skip-walks", "--cases", "sbm",
                 "--train-seeds", "1"],
}
"""Column name -> the benchmark's command line (``--threads`` is added per row)."""


def command(column: str, partial: int) -> list[str]:
    """The column's command line; ``partial`` > 0 cuts sampled training and link prediction
    to their first ``partial`` batches (labelled partial in their output)."""
    cmd = list(COLUMNS[column])
    if partial and column == "sampling":
        cmd += ["--e2e-batches", str(partial)]
    if partial and column == "linkpred":
        cmd = [*cmd[:cmd.index("--epochs")], "--batches", str(partial)]
    return cmd


def python_for(column: str) -> str:
    """The interpreter of a column: ``node2vec`` runs in the ``bench`` extra's own environment
    (``.venv-bench``: PecanPy needs numpy < 2) when it exists, every other column in this one."""
    bench = REPO / ".venv-bench" / "bin" / "python"
    return str(bench) if column == "node2vec" and bench.exists() else sys.executable


def run_cell(column: str, row: str, timeout: float, partial: int = 0) -> dict[str, Any]:
    """One benchmark in one environment: its JSON line, or what went wrong."""
    caps, threads = ROWS[row]
    env = {k: v for k, v in os.environ.items() if k not in AVX2}
    env.update(caps)
    env["OMP_NUM_THREADS"] = str(threads)
    cmd = [python_for(column), *command(column, partial), "--threads", str(threads)]
    print(f"[{row}] {column}: {' '.join(f'{k}={v}' for k, v in caps.items())} "
          f"{' '.join(cmd[1:])}", flush=True)
    cpus = sorted(os.sched_getaffinity(0))[:threads] if hasattr(os, "sched_getaffinity") else []
    pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None
    t = time.perf_counter()
    try:
        done = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=pin)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    seconds = time.perf_counter() - t
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return {"error": f"exit {done.returncode}: {tail[0][:200]}", "seconds": seconds}
    figures = json.loads(lines[-1])
    figures["seconds"] = round(seconds, 1)
    return figures


def probe(row: str, timeout: float) -> dict[str, Any]:
    """``benchmarks/isa_probe.py`` in the row's environment, pinned as the row's cells are."""
    caps, threads = ROWS[row]
    env = {k: v for k, v in os.environ.items() if k not in AVX2}
    env.update(caps)
    env["OMP_NUM_THREADS"] = str(threads)
    cpus = sorted(os.sched_getaffinity(0))[:threads] if hasattr(os, "sched_getaffinity") else []
    try:
        done = subprocess.run([sys.executable, "benchmarks/isa_probe.py", "--threads",
                               str(threads)], cwd=REPO, env=env, capture_output=True,
                              text=True, timeout=timeout,
                              preexec_fn=(lambda: os.sched_setaffinity(0, cpus)) if cpus
                              else None)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout:.0f} s"}
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode != 0 or not lines:
        return {"error": f"exit {done.returncode}"}
    return json.loads(lines[-1])


def products_cell(f: dict[str, Any]) -> str:
    """MKL's and oneDNN's product ms and the ISA each says it runs."""
    if "error" in f:
        return f"({f['error']})"
    isa, ms = f["isa"], f["product_ms"]

    def short(text: str | None) -> str:
        if not text:
            return "?"
        found = re.search(r"AVX[- ]?512|AVX2|AVX 10\.\d|AMX", text)
        return found.group(0).replace(" ", "") if found else text

    return (f"MKL {ms['mkl']:.1f} ms ({short(isa['mkl'])}), oneDNN {ms['onednn']:.1f} ms "
            f"({short(isa['onednn'])}), ATen {isa['aten']}")


def headline(column: str, f: dict[str, Any]) -> tuple[str, list[float]]:
    """The cell's text and its ratios (graphflow's advantage; > 1 is faster)."""
    if "error" in f:
        return f"({f['error']})", []
    if column == "sampling":
        ours = statistics.median(f["graphflow_epoch_s"])
        theirs = statistics.median(f["dgl_epoch_s"])
        part = "" if f.get("whole_epochs", True) else f", first {f['train_batches']} batches"
        return (f"{f['train_speedup']:.2f}x ({ours:.1f} vs {theirs:.1f} s, "
                f"{f['graphflow_sampling_workers']}w/{f['graphflow_threads']}t{part})",
                [f["train_speedup"]])
    if column == "linkpred" and "epoch_ratio" not in f:  # --partial: batches, not epochs
        return (f"{f['ratio']:.2f}x ({f['graphflow_ms_per_batch']:.0f} vs "
                f"{f['dgl_ms_per_batch']:.0f} ms/batch, {f['batches']} batches, "
                f"{f['graphflow_sampling_workers']}w/{f['graphflow_threads']}t)", [f["ratio"]])
    if column == "linkpred":
        ours = statistics.median(f["graphflow_epoch_s"])
        theirs = statistics.median(f["dgl_epoch_s"])
        return (f"{f['epoch_ratio']:.2f}x ({ours:.1f} vs {theirs:.1f} s, "
                f"{f['graphflow_sampling_workers']}w/{f['graphflow_threads']}t)",
                [f["epoch_ratio"]])
    if column == "gcn":
        def dense(r: dict) -> str:  # the same dense input on both sides (Cora: sparse ours)
            same = (r.get("ratios") or {}).get("dgl/graphflow_dense")
            return f", dense input {same['median']:.2f}x" if same else ""

        parts = [f"{r['graph']} {r['speedup']:.2f}x ({r['graphflow_ms']:.1f} vs "
                 f"{r['dgl_ms']:.1f} ms{dense(r)})" for r in f["results"]]
        return "; ".join(parts), [r["speedup"] for r in f["results"]]
    if column == "node2vec":
        return (f"{f['sbm_ratio']:.2f}x ({f.get('sbm_faster_peer', 'peer')})",
                [f["sbm_ratio"]])
    return json.dumps(f)[:80], []


def choices_line(figures: dict[str, Any]) -> str:
    calib = (figures.get("machine") or {}).get("calibration") or {}
    if not calib:
        return ""
    gemm = calib.get("gemm", {})
    buckets = ", ".join(f"{k} {v}" for k, v in gemm.get("buckets", {}).items())
    plans = "; ".join(f"{w} {p['workers']}w/{p['threads']}t/{p['worker_threads']}wt"
                      for w, p in calib.get("cores", {}).get("plans", {}).items())
    return (f"gemm [{gemm.get('source')}] {buckets or gemm.get('requested', '')}; "
            f"cores [{calib.get('cores', {}).get('source')}] {plans or 'policy'}")


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: ``subprocess.run`` then kills the running benchmark, not leaving it."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    signal.signal(signal.SIGTERM, _interrupt)
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rows", default=",".join(ROWS), help=f"rows, of {', '.join(ROWS)}")
    p.add_argument("--columns", default=",".join(COLUMNS),
                   help=f"columns, of {', '.join(COLUMNS)}")
    p.add_argument("--timeout", type=float, default=900, help="seconds per cell")
    p.add_argument("--partial", type=int, default=0, metavar="K",
                   help="sampled training and link prediction: the first K batches only (a "
                        "quick, partial check; default 0: whole epochs)")
    p.add_argument("--record", action="store_true",
                   help="save the table's figures with the machine, commit and command under "
                        "benchmarks/results/matrix/ (benchmarks/records.py)")
    a = p.parse_args(argv)
    load_before = records.load()
    rows = [r.strip() for r in a.rows.split(",") if r.strip()]
    columns = [c.strip() for c in a.columns.split(",") if c.strip()]
    for name, known in (("row", ROWS), ("column", COLUMNS)):
        bad = [x for x in (rows if name == "row" else columns) if x not in known]
        if bad:
            p.error(f"unknown {name} {bad[0]!r}; choose from {', '.join(known)}")
    results: dict[str, dict[str, Any]] = {r: {} for r in rows}
    probes: dict[str, dict[str, Any]] = {}
    for row in rows:
        probes[row] = probe(row, min(a.timeout, 300))
        print(f"[{row}] products: {products_cell(probes[row])}", flush=True)
        for column in columns:
            results[row][column] = run_cell(column, row, a.timeout, a.partial)
            print(f"    -> {headline(column, results[row][column])[0]}", flush=True)
    first = next((f for r in rows for f in results[r].values() if "machine" in f), {})
    cpu = (first.get("machine") or {}).get("cpu", {})
    print(f"\nCPU: {cpu.get('model_name')} (family {cpu.get('family')} model "
          f"{cpu.get('model')}), {cpu.get('cores')} cores; {' '.join(cpu.get('isa', []))}")
    print("\n| row | caps | threads | products | " + " | ".join(columns) + " |")
    print("| --- | --- | --- | --- | " + " | ".join("---" for _ in columns) + " |")
    for row in rows:
        caps, threads = ROWS[row]
        cells = [headline(c, results[row][c])[0] for c in columns]
        caps_text = ", ".join(f"{k}={v}" for k, v in caps.items()) or "none"
        print(f"| {row} | {caps_text} | {threads} | {products_cell(probes[row])} | "
              + " | ".join(cells) + " |")
    print("\nMeasured choices per row (graphflow.runtime.calibrate):")
    for row in rows:
        line = next((choices_line(f) for f in results[row].values() if choices_line(f)), "")
        print(f"- {row}: {line or 'n/a'}")
    below = [(r, c) for r in rows for c in columns if c in ("sampling", "linkpred")
             and any(x < 1.5 for x in headline(c, results[r][c])[1])]
    machines = {r: next((f.pop("machine") for f in results[r].values() if "machine" in f), None)
                for r in rows}
    for r in rows:  # the machine once per row (the cells of a row share it)
        for f in results[r].values():
            f.pop("machine", None)
    out = {"benchmark": "matrix", "partial": a.partial,
           "rows": {r: list(ROWS[r]) for r in rows}, "machines": machines,
           "products": probes, "results": results, "below_1.5x": below}
    if a.record:
        first_machine = next((m for m in machines.values() if m), None)
        records.write("matrix", {**out, "machine": first_machine} if first_machine else out,
                      load_before=load_before, argv=[str(Path(__file__)), *(argv or
                                                                          sys.argv[1:])])
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
