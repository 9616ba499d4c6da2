"""Scale-out overheads: partitioning time and peak memory, and data-parallel epoch time.

1. ``graphflow partition`` of a generated R-MAT graph (default 1M nodes, 10M directed
   edges, 16 features) into 2 parts, by METIS and by random assignment, each in its own
   process: wall time of the command, time of DGL's ``partition_graph`` step (graphflow's
   own line), and the process's peak resident memory (``wait4`` rusage).
2. Sampled SAGE training on a generated SBM (default 50k nodes): seconds per epoch (the
   train stage's time over its epochs, from ``run.json``) of ``graphflow run --nproc 2``
   against one process, the same pipeline and seed.
3. Sampled SAGE on a generated SBM of (default) 1M nodes and 10M directed edges, partitioned
   in two by METIS: seconds per epoch of ``graphflow launch --local 2`` (two DistDGL
   machines on this host, one trainer each, ``dist_neighbor`` sampling) against one process
   reading the same partition (``partitioned`` loader, ``neighbor`` sampler). An epoch's
   time is the difference of the train stage between a 3-epoch and a 1-epoch run, halved,
   so start-up, evaluation and prediction do not count.

On a 2-core machine two workers share the cores, so no speed-up is expected: the figures
show the overhead and guard against regressions. Run it alone:

    flock /tmp/graphflow-bench.lock python benchmarks/distributed.py [--quick]

The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from graphflow.distributed.nproc import free_port

REPO = Path(__file__).resolve().parent.parent

RMAT = """
[pipeline]
name = "bench_rmat"
seed = 0
device = "cpu"

[load]
type = "synthetic"
kind = "powerlaw"
nodes = {nodes}
edges = {edges}
features = 16
"""

SBM = """
[pipeline]
name = "bench_ddp"
seed = 0
device = "cpu"

[load]
type = "synthetic"
kind = "sbm"
nodes = {nodes}
classes = 8
features = 32
p_in = {p_in}
p_out = {p_out}

[sample]
type = "neighbor"
fanouts = [10, 10]
batch_size = 512

[model]
type = "sage"
hidden = 64

[train]
type = "node_classification"
epochs = {epochs}
eval_every = {epochs}
checkpoint = false
"""


def run_measured(args: list[str], cwd: Path,
                 env: dict[str, str] | None = None) -> tuple[float, float, str]:
    """Run ``python -m graphflow ARGS``: (wall seconds, peak RSS GiB of it and its children
    as the kernel reports for the largest one, output)."""
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "graphflow", *args], cwd=cwd,
                            env={**os.environ, **(env or {})},
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"graphflow {' '.join(args)} failed:\n{out[-3000:]}")
    return seconds, usage.ru_maxrss / 2**20, out


def partition_figures(tmp: Path, nodes: int, edges: int) -> dict[str, dict[str, float]]:
    pipeline = tmp / "rmat.toml"
    pipeline.write_text(RMAT.format(nodes=nodes, edges=edges))
    figures = {}
    for method in ("metis", "random"):
        wall, peak, out = run_measured(["partition", str(pipeline), "--parts", "2", "--method",
                                        method, "--out", str(tmp / method)], tmp)
        step = re.search(rf"{method} partition into 2 parts in ([0-9.]+)s", out)
        figures[method] = {"command_s": round(wall, 1),
                           "partition_graph_s": float(step.group(1)) if step else float("nan"),
                           "peak_rss_gib": round(peak, 2)}
        print(f"partition {method:6s}: {wall:7.1f}s command, "
              f"{figures[method]['partition_graph_s']:7.1f}s partition_graph, "
              f"peak RSS {peak:5.2f} GiB", flush=True)
    return figures


def epoch_figures(tmp: Path, nodes: int, epochs: int) -> dict[str, float]:
    degree = 20  # expected within-class + across-class neighbors per node
    pipeline = tmp / "sbm.toml"
    p_in = 0.8 * degree / (nodes / 8)
    p_out = 0.2 * degree / nodes
    pipeline.write_text(SBM.format(nodes=nodes, p_in=p_in, p_out=p_out, epochs=epochs))
    figures = {}
    for nproc in (1, 2):
        out_dir = tmp / f"ddp{nproc}"
        run_measured(["run", str(pipeline), "--nproc", str(nproc), "--out-dir", str(out_dir),
                      "--quiet"], tmp)
        rec = json.loads((out_dir / "run.json").read_text())
        train = next(s for s in rec["stages"] if s["section"] == "train")
        figures[f"nproc{nproc}_epoch_s"] = round(train["seconds"] / epochs, 3)
        figures[f"nproc{nproc}_test_acc"] = round(rec["metrics"]["test_acc"], 4)
        print(f"--nproc {nproc}: {figures[f'nproc{nproc}_epoch_s']:.3f} s/epoch (with one "
              f"evaluation), test_acc {figures[f'nproc{nproc}_test_acc']:.4f}", flush=True)
    figures["nproc2_over_nproc1"] = round(figures["nproc2_epoch_s"] / figures["nproc1_epoch_s"], 2)
    print(f"--nproc 2 / one process epoch time: {figures['nproc2_over_nproc1']:.2f}x")
    return figures


LAUNCH_GRAPH = SBM.split("[sample]")[0]  # the same generated SBM, partitioned

LAUNCH_TRAIN = """
[pipeline]
name = "bench_launch"
seed = 0
device = "cpu"

[load]
type = "partitioned"
path = "{parts}/graph.json"

""" + "[sample]" + SBM.split("[sample]")[1].replace(
    'type = "neighbor"', 'type = "{sampler}"').replace("batch_size = 512", "batch_size = 1024")


def train_seconds(out_dir: Path) -> tuple[float, float]:
    rec = json.loads((out_dir / "run.json").read_text())
    train = next(s for s in rec["stages"] if s["section"] == "train")
    return train["seconds"], rec["metrics"]["test_acc"]


def launch_figures(tmp: Path, nodes: int, edges: int, threads: int) -> dict[str, float]:
    degree = edges / nodes  # directed edges per node (each undirected edge counts twice)
    (tmp / "graph.toml").write_text(LAUNCH_GRAPH.format(
        nodes=nodes, p_in=0.8 * degree / (nodes / 8), p_out=0.2 * degree / nodes))
    wall, peak, _ = run_measured(["partition", "graph.toml", "--parts", "2", "--method",
                                  "metis", "--out", "parts", "--quiet"], tmp)
    print(f"launch graph: partitioned {nodes:,} nodes in {wall:.1f}s, peak RSS {peak:.2f} GiB",
          flush=True)
    ports = "".join(f"127.0.0.1 {free_port()}\n" for _ in range(2))
    (tmp / "ip.txt").write_text(ports)
    figures: dict[str, float] = {}
    for mode, sampler in (("one", "neighbor"), ("launch", "dist_neighbor")):
        seconds = {}
        for epochs in (1, 3):
            name = f"{mode}{epochs}"
            (tmp / f"{name}.toml").write_text(LAUNCH_TRAIN.format(parts="parts", sampler=sampler,
                                                                  epochs=epochs))
            command = ["run", f"{name}.toml"] if mode == "one" else \
                ["launch", f"{name}.toml", "--ip-config", "ip.txt", "--trainers", "1",
                 "--local", "2"]
            env = {"OMP_NUM_THREADS": str(threads)} if mode == "one" and threads else None
            wall, peak, _ = run_measured([*command, "--out-dir", name, "--quiet"], tmp, env)
            seconds[epochs], acc = train_seconds(tmp / name)
            print(f"{mode:6s} {epochs} epochs: train stage {seconds[epochs]:.1f}s, command "
                  f"{wall:.1f}s, test_acc {acc:.4f}", flush=True)
        figures[f"{mode}_epoch_s"] = round((seconds[3] - seconds[1]) / 2, 2)
        figures[f"{mode}_test_acc"] = round(acc, 4)
    figures["launch_over_one"] = round(figures["launch_epoch_s"] / figures["one_epoch_s"], 2)
    print(f"graphflow launch --local 2: {figures['launch_epoch_s']:.2f} s/epoch; one process: "
          f"{figures['one_epoch_s']:.2f} s/epoch; ratio {figures['launch_over_one']:.2f}x")
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=1_000_000)
    parser.add_argument("--edges", type=int, default=10_000_000)
    parser.add_argument("--sbm-nodes", type=int, default=50_000)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--launch-nodes", type=int, default=1_000_000)
    parser.add_argument("--launch-edges", type=int, default=10_000_000)
    parser.add_argument("--one-threads", type=int, default=0,
                        help="OMP_NUM_THREADS of the one-process run of the launch comparison "
                        "(0: torch's default; each launched trainer gets cores / trainers)")
    parser.add_argument("--only", choices=("partition", "nproc", "launch"), default=None,
                        help="run one part only")
    parser.add_argument("--quick", action="store_true",
                        help="100k nodes, 1M edges (R-MAT and launch), 10k SBM")
    args = parser.parse_args()
    if args.quick:
        args.nodes, args.edges, args.sbm_nodes = 100_000, 1_000_000, 10_000
        args.launch_nodes, args.launch_edges = 100_000, 1_000_000
    with tempfile.TemporaryDirectory(prefix="graphflow-bench-") as tmp:
        print(f"R-MAT {args.nodes:,} nodes, {args.edges:,} edges; SBM {args.sbm_nodes:,} nodes; "
              f"{os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f}", flush=True)
        result: dict[str, object] = {"nodes": args.nodes, "edges": args.edges,
                                     "sbm_nodes": args.sbm_nodes,
                                     "launch_nodes": args.launch_nodes,
                                     "launch_edges": args.launch_edges}
        if args.only in (None, "partition"):
            result["partition"] = partition_figures(Path(tmp), args.nodes, args.edges)
        if args.only in (None, "nproc"):
            result["data_parallel"] = epoch_figures(Path(tmp), args.sbm_nodes, args.epochs)
        if args.only in (None, "launch"):
            result["launch"] = launch_figures(Path(tmp), args.launch_nodes, args.launch_edges,
                                              args.one_threads)
        result["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
