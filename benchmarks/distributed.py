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

Each comparison (METIS / random, one process / ``--nproc 2``, one process / ``launch``) runs
``--repeats`` times (default 2), the order of its two sides reversed every repetition
(``benchmarks/records.py``'s orders); each side's figure is the median of its repetitions,
printed with their range and count. ``--record`` saves the figures under
``benchmarks/results/distributed/``.

On a 2-core machine two workers share the cores, so no speed-up is expected: the figures
show the overhead and guard against regressions. Run it alone:

    flock /tmp/graphflow-bench.lock python benchmarks/distributed.py [--quick] [--repeats 2]

The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import line, orders, spread, write  # noqa: E402
from graphflow.distributed.nproc import free_port  # noqa: E402

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


def summarise(runs: dict[str, list[float]], digits: int = 3) -> dict[str, dict[str, float]]:
    """Each side's median, range and count of its repetitions."""
    return {k: {kk: (round(vv, digits) if kk != "n" else vv) for kk, vv in spread(v).items()}
            for k, v in runs.items()}


def partition_figures(tmp: Path, nodes: int, edges: int,
                      repeats: int = 1) -> dict[str, dict[str, float]]:
    pipeline = tmp / "rmat.toml"
    pipeline.write_text(RMAT.format(nodes=nodes, edges=edges))
    runs: dict[str, dict[str, list[float]]] = {m: {"command_s": [], "partition_graph_s": [],
                                                   "peak_rss_gib": []}
                                               for m in ("metis", "random")}
    calls = []
    for rep, order in enumerate(orders(["metis", "random"], repeats)):
        for method in order:
            wall, peak, out = run_measured(["partition", str(pipeline), "--parts", "2",
                                            "--method", method, "--out",
                                            str(tmp / f"{method}{rep}")], tmp)
            step = re.search(rf"{method} partition into 2 parts in ([0-9.]+)s", out)
            got = runs[method]
            got["command_s"].append(wall)
            got["partition_graph_s"].append(float(step.group(1)) if step else float("nan"))
            got["peak_rss_gib"].append(peak)
            calls.append(method)
            print(f"partition {method:6s} (run {rep}): {wall:7.1f}s command, "
                  f"{got['partition_graph_s'][-1]:7.1f}s partition_graph, "
                  f"peak RSS {peak:5.2f} GiB", flush=True)
    figures: dict = {"calls": calls}
    for method, got in runs.items():
        figures[method] = {"command_s": round(statistics.median(got["command_s"]), 1),
                           "partition_graph_s": statistics.median(got["partition_graph_s"]),
                           "peak_rss_gib": round(max(got["peak_rss_gib"]), 2),
                           "spread": summarise(got)}
        print(f"partition {method:6s}: command {line(got['command_s'], digits=1)}", flush=True)
    return figures


def epoch_figures(tmp: Path, nodes: int, epochs: int, repeats: int = 1) -> dict[str, float]:
    degree = 20  # expected within-class + across-class neighbors per node
    pipeline = tmp / "sbm.toml"
    p_in = 0.8 * degree / (nodes / 8)
    p_out = 0.2 * degree / nodes
    pipeline.write_text(SBM.format(nodes=nodes, p_in=p_in, p_out=p_out, epochs=epochs))
    figures: dict = {}
    runs: dict[str, list[float]] = {"1": [], "2": []}
    calls = []
    for rep, order in enumerate(orders(["1", "2"], repeats)):
        for nproc in order:
            out_dir = tmp / f"ddp{nproc}_{rep}"
            run_measured(["run", str(pipeline), "--nproc", nproc, "--out-dir", str(out_dir),
                          "--quiet"], tmp)
            rec = json.loads((out_dir / "run.json").read_text())
            train = next(s for s in rec["stages"] if s["section"] == "train")
            runs[nproc].append(train["seconds"] / epochs)
            calls.append(f"nproc{nproc}")
            figures[f"nproc{nproc}_test_acc"] = round(rec["metrics"]["test_acc"], 4)
            print(f"--nproc {nproc} (run {rep}): {runs[nproc][-1]:.3f} s/epoch (with one "
                  f"evaluation), test_acc {figures[f'nproc{nproc}_test_acc']:.4f}", flush=True)
    for nproc, values in runs.items():
        figures[f"nproc{nproc}_epoch_s"] = round(statistics.median(values), 3)
        print(f"--nproc {nproc}: {line(values, unit='s/epoch')}", flush=True)
    figures["epoch_spread"] = summarise({f"nproc{k}": v for k, v in runs.items()})
    figures["calls"] = calls
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


def launch_figures(tmp: Path, nodes: int, edges: int, threads: int,
                   repeats: int = 1) -> dict[str, float]:
    degree = edges / nodes  # directed edges per node (each undirected edge counts twice)
    (tmp / "graph.toml").write_text(LAUNCH_GRAPH.format(
        nodes=nodes, p_in=0.8 * degree / (nodes / 8), p_out=0.2 * degree / nodes))
    wall, peak, _ = run_measured(["partition", "graph.toml", "--parts", "2", "--method",
                                  "metis", "--out", "parts", "--quiet"], tmp)
    print(f"launch graph: partitioned {nodes:,} nodes in {wall:.1f}s, peak RSS {peak:.2f} GiB",
          flush=True)
    ports = "".join(f"127.0.0.1 {free_port()}\n" for _ in range(2))
    (tmp / "ip.txt").write_text(ports)
    figures: dict = {}
    samplers = {"one": "neighbor", "launch": "dist_neighbor"}
    runs: dict[str, list[float]] = {mode: [] for mode in samplers}
    calls = []
    for rep, order in enumerate(orders(list(samplers), repeats)):
        for mode in order:
            seconds = {}
            for epochs in (1, 3):
                name = f"{mode}{epochs}_{rep}"
                (tmp / f"{name}.toml").write_text(LAUNCH_TRAIN.format(
                    parts="parts", sampler=samplers[mode], epochs=epochs))
                command = ["run", f"{name}.toml"] if mode == "one" else \
                    ["launch", f"{name}.toml", "--ip-config", "ip.txt", "--trainers", "1",
                     "--local", "2"]
                env = {"OMP_NUM_THREADS": str(threads)} if mode == "one" and threads else None
                wall, peak, _ = run_measured([*command, "--out-dir", name, "--quiet"], tmp, env)
                seconds[epochs], acc = train_seconds(tmp / name)
                print(f"{mode:6s} {epochs} epochs (run {rep}): train stage "
                      f"{seconds[epochs]:.1f}s, command {wall:.1f}s, test_acc {acc:.4f}",
                      flush=True)
            runs[mode].append((seconds[3] - seconds[1]) / 2)
            calls.append(mode)
            figures[f"{mode}_test_acc"] = round(acc, 4)
    for mode, values in runs.items():
        figures[f"{mode}_epoch_s"] = round(statistics.median(values), 2)
        print(f"{mode:6s}: {line(values, unit='s/epoch', digits=2)}", flush=True)
    figures["epoch_spread"] = summarise(runs)
    figures["calls"] = calls
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
    parser.add_argument("--repeats", type=int, default=2,
                        help="repetitions of each comparison, the order of its sides reversed "
                             "every repetition (default 2)")
    parser.add_argument("--record", action="store_true",
                        help="save the figures under benchmarks/results/distributed/ "
                             "(benchmarks/records.py)")
    args = parser.parse_args()
    if args.repeats < 1:
        parser.error(f"--repeats must be at least 1, got {args.repeats}")
    load_before = load_average()
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
            result["partition"] = partition_figures(Path(tmp), args.nodes, args.edges,
                                                    args.repeats)
        if args.only in (None, "nproc"):
            result["data_parallel"] = epoch_figures(Path(tmp), args.sbm_nodes, args.epochs,
                                                    args.repeats)
        if args.only in (None, "launch"):
            result["launch"] = launch_figures(Path(tmp), args.launch_nodes, args.launch_edges,
                                              args.one_threads, args.repeats)
        result["load_average_1min_at_end"] = round(os.getloadavg()[0], 2)
        result["repeats"] = args.repeats
    if args.record:
        write("distributed", result, load_before=load_before)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
