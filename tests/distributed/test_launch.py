"""``graphflow launch --local 2``: DistDGL servers and trainers on loopback, supervised.

A generated 800-node citation graph with string ids is partitioned in two by METIS; one
trainer per machine trains sampled SAGE through the ``dist_neighbor`` sampler. Every process
runs in its own session under a time limit and is killed with its descendants after the test.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from graphflow.distributed.nproc import free_port
from graphflow.io.synthetic import sbm
from graphflow.distributed.procs import descendants, stop_all

GRAPH = """
[pipeline]
name = "papers"
seed = 0

[load]
type = "edgelist"
path = "papers.tsv"
delimiter = "tab"
directed = false
nodes = "papers_nodes.parquet"

[[transform]]
type = "split"
train = 0.5
val = 0.2
test = 0.3
"""

# Each of the two trainers takes half the optimiser steps of one process per epoch (DDP
# averages the two ranks' batches): 40 epochs let both runs converge before they are compared.
EPOCHS = 40

TRAIN = """
[pipeline]
name = "papers"
seed = 0

[load]
type = "partitioned"
path = "parts/graph.json"

[sample]
type = "{sampler}"
fanouts = [5, 5]
batch_size = 32

[model]
type = "sage"
hidden = 16

[train]
type = "node_classification"
epochs = {epochs}
monitor = "val_loss"     # val_acc saturates early (160 nodes) and its first tie picks an
checkpoint = false       # under-trained epoch, by chance earlier in one run than the other

[[export]]
type = "parquet"
what = "predictions"
"""


def write_graph(folder: Path) -> None:
    """An 800-node, 4-topic SBM as an edge list with string ids and a node table."""
    gen = sbm(800, 4, 16, p_in=0.02, p_out=0.002, seed=7, signal=0.8)
    names = np.array([f"paper-{i:04d}" for i in range(gen.num_nodes)])
    once = (gen.src < gen.dst).numpy()
    lines = np.char.add(np.char.add(names[gen.src.numpy()[once]], "\t"),
                        names[gen.dst.numpy()[once]])
    (folder / "papers.tsv").write_text("\n".join(lines) + "\n")
    feat = pa.FixedSizeListArray.from_arrays(pa.array(gen.feat.numpy().reshape(-1)), 16)
    pq.write_table(pa.table({"id": names, "feat": feat, "label": gen.label.numpy()}),
                   folder / "papers_nodes.parquet")


@pytest.fixture(scope="module")
def papers(tmp_path_factory, loopback) -> Path:
    """A folder with the graph, its 2-part METIS partition and the two training pipelines."""
    folder = tmp_path_factory.mktemp("launch")
    write_graph(folder)
    (folder / "graph.toml").write_text(GRAPH)
    done = subprocess.run([sys.executable, "-m", "graphflow", "partition", "graph.toml",
                           "--parts", "2", "--out", "parts", "--quiet"], cwd=folder,
                          env=loopback, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return folder


def ip_config(folder: Path, machines: int = 2) -> Path:
    path = folder / "ip.txt"
    path.write_text("".join(f"127.0.0.1 {free_port()}\n" for _ in range(machines)))
    return path


def shm() -> set[str]:
    return set(os.listdir("/dev/shm"))


def start(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "graphflow", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, start_new_session=True)


def finish(proc: subprocess.Popen[str], timeout: float) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        stop_all([proc], grace=0)
        out, err = proc.communicate()
        pytest.fail(f"graphflow launch ran past {timeout}s\n{err[-3000:]}")


def port_free(port: int) -> bool:
    """Whether a new server could listen on ``port`` (nothing listens; TIME_WAIT is fine)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_launch_local_2_trains_sage_like_one_process_with_original_ids(papers, loopback, cli):
    (papers / "one.toml").write_text(TRAIN.format(sampler="neighbor", epochs=EPOCHS))
    # the one-process reference run in this process (no DistDGL, nothing to supervise)
    code, _, err = cli("run", papers / "one.toml", "--out-dir", papers / "one", "--quiet")
    assert code == 0, err
    (papers / "dist.toml").write_text(TRAIN.format(sampler="dist_neighbor", epochs=EPOCHS))
    ip = ip_config(papers)
    before = shm()
    proc = start(["launch", "dist.toml", "--ip-config", str(ip), "--trainers", "1",
                  "--local", "2", "--out-dir", "dist"], papers, loopback)
    out, err = finish(proc, timeout=150)
    assert proc.returncode == 0, err[-3000:]
    assert "launch finished" in err
    single = json.loads((papers / "one" / "run.json").read_text())["metrics"]
    record = json.loads((papers / "dist" / "run.json").read_text())
    assert (record["world_size"], record["backend"]) == (2, "gloo")
    digests = record["replica_digests"]["train"]
    assert len(digests) == 2 and digests[0] == digests[1]  # DDP kept the replicas equal
    accuracy = record["metrics"]["test_acc"]
    assert accuracy > 0.8, record["metrics"]
    # DistDGL's servers draw the neighbours with their own generators, so the two runs see
    # different samples: their test accuracies on 240 nodes differ by chance. Three standard
    # errors of the difference of two such accuracies (0.047 at 0.97) bound the chance gap; a
    # run that trained worse than one process falls outside it. 0.02 (1.3 SE) failed in CI.
    p, n = single["test_acc"], 240
    tolerance = 3 * (2 * max(p * (1 - p), 0.02 * 0.98) / n) ** 0.5
    assert abs(accuracy - p) <= tolerance, (accuracy, p, tolerance)
    predictions = pq.read_table(papers / "dist" / "predictions.parquet").to_pydict()
    assert sorted(predictions["id"]) == [f"paper-{i:04d}" for i in range(800)]
    assert not list((papers / "dist").glob("*.part*"))  # one assembled file, nothing else
    assert shm() - before == set()
    assert all(port_free(int(line.split()[1])) for line in ip.read_text().splitlines())


def running_trainer(launcher: int, rank: int, timeout: float = 90) -> int:
    """The pid of the trainer of ``rank`` below ``launcher`` once it has trained an epoch."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for pid in descendants(launcher):
            try:
                env = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"run" in cmd and f"RANK={rank}".encode() in env:
                return pid
        time.sleep(0.2)
    pytest.fail(f"no trainer of rank {rank} within {timeout}s")


def wait_for_epoch(path: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.is_file() and path.read_text().strip():
            return
        time.sleep(0.2)
    pytest.fail(f"no epoch logged in {path} within {timeout}s")


@pytest.mark.parametrize("stop", ["kill_trainer", "ctrl_c"])
def test_launch_stops_everything_when_a_trainer_dies_or_on_ctrl_c(papers, loopback, stop):
    (papers / "long.toml").write_text(TRAIN.format(sampler="dist_neighbor", epochs=10000))
    ip = ip_config(papers)
    before = shm()
    out_dir = papers / f"long-{stop}"
    proc = start(["launch", "long.toml", "--ip-config", str(ip), "--trainers", "1",
                  "--local", "2", "--out-dir", str(out_dir)], papers, loopback)
    try:
        victim = running_trainer(proc.pid, rank=1)
        wait_for_epoch(out_dir / "metrics.jsonl")
        tree = descendants(proc.pid)
        stopped = time.monotonic()
        if stop == "kill_trainer":
            os.kill(victim, signal.SIGKILL)
        else:
            os.kill(proc.pid, signal.SIGINT)
        out, err = finish(proc, timeout=60)
        took = time.monotonic() - stopped
    finally:
        stop_all([proc], grace=0)
    assert took < 30, took
    lines = [line for line in err.splitlines() if line.startswith("graphflow: ")]
    if stop == "kill_trainer":
        assert proc.returncode == 1, err[-3000:]
        # the launcher's own line comes last (the surviving trainer may report its lost peer)
        assert lines[-1] == ("graphflow: error: machine 1 (127.0.0.1): trainer 0 (rank 1) "
                             "killed by SIGKILL; stopped every other process of the run"), err
    else:
        assert proc.returncode == 130, err[-3000:]
        assert lines[-1] == "graphflow: interrupted by SIGINT", err
    time.sleep(0.5)
    alive = [pid for pid in tree if Path(f"/proc/{pid}").exists()
             and "Z" not in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]]
    assert alive == [], alive
    assert shm() - before == set()
    assert all(port_free(int(line.split()[1])) for line in ip.read_text().splitlines())


def _pipeline(folder: Path, name: str, **replace: str) -> Path:
    text = TRAIN.format(sampler="dist_neighbor", epochs=1)
    for old, new in replace.items():
        text = text.replace(old, new)
    path = folder / name
    path.write_text(text)
    return path


@pytest.mark.parametrize("case, lines, edit, message", [
    ("no port", "127.0.0.1 30050\n127.0.0.1\n", {},
     "{ip} line 2: '127.0.0.1' has no port; write IP PORT, e.g. 127.0.0.1 30050"),
    ("bad port", "127.0.0.1 30050\n127.0.0.1 http\n", {},
     "{ip} line 2: '127.0.0.1 http': expected IP PORT (a port 1-65535), e.g. 10.0.0.1 30050"),
    ("no partition", "127.0.0.1 30050\n127.0.0.1 30051\n",
     {"parts/graph.json": "nowhere/graph.json"},
     "partition config not found: {dir}/nowhere/graph.json; make it with: graphflow partition "
     "PIPELINE.toml --parts N --out {dir}/nowhere"),
    ("features", "127.0.0.1 30050\n127.0.0.1 30051\n",
     {'path = "parts/graph.json"': 'path = "parts/graph.json"\nnode_data = ["feat", "year"]'},
     "{dir}/parts/graph.json: the pipeline needs node data year but the partition has feat, "
     "label, test_mask, train_mask, val_mask; partition the graph of a pipeline whose loader "
     "provides them"),
    ("machines", "127.0.0.1 30050\n127.0.0.1 30051\n127.0.0.1 30052\n", {},
     "{dir}/parts/graph.json has 2 partitions but the ip config lists 3 machines; partition "
     "with --parts 3 or list 2 machines"),
    ("sampler", "127.0.0.1 30050\n127.0.0.1 30051\n",
     {'type = "dist_neighbor"': 'type = "neighbor"'},
     '[train] [sample] type = "neighbor": under graphflow launch the trainers sample through '
     'DistDGL; use [sample] type = "dist_neighbor"'),
    ("loader", "127.0.0.1 30050\n127.0.0.1 30051\n",
     {'type = "partitioned"\npath = "parts/graph.json"':
      'type = "edgelist"\npath = "papers.tsv"\ndelimiter = "tab"'},
     '{pipeline}: [load] type = "edgelist": graphflow launch trains on a partitioned graph; use '
     '[load] type = "partitioned", path = "DIR/graph.json" (made by graphflow partition)'),
])
def test_launch_refuses_bad_input_before_starting_anything(cli, papers, tmp_path, monkeypatch,
                                                           case, lines, edit, message):
    monkeypatch.chdir(papers)
    ip = tmp_path / "ip.txt"
    ip.write_text(lines)
    pipeline = _pipeline(papers, f"bad-{case.replace(' ', '-')}.toml", **edit)
    machines = str(len(lines.splitlines()))
    code, out, err = cli("launch", pipeline, "--ip-config", ip, "--trainers", "1",
                         "--local", machines)
    assert code == 1
    expected = message.format(ip=ip, dir=papers, pipeline=pipeline)
    assert err.strip().splitlines()[0].startswith("graphflow: error: ")
    assert err.strip().splitlines()[0].endswith(expected), err
    assert len(err.strip().splitlines()) == 1


def test_launch_refuses_a_local_count_unlike_the_ip_config(cli, papers, tmp_path):
    ip = tmp_path / "ip.txt"
    ip.write_text("127.0.0.1 30050\n")
    code, _, err = cli("launch", _pipeline(papers, "count.toml"), "--ip-config", ip,
                       "--trainers", "1", "--local", "2")
    assert (code, err.strip()) == (1, f"graphflow: error: --local 2 but {ip} lists 1 machines; "
                                      f"list 2 lines (127.0.0.1 PORT, distinct ports)")


def test_launch_refuses_sampler_processes(cli, papers, tmp_path):
    ip = tmp_path / "ip.txt"
    ip.write_text("127.0.0.1 30050\n127.0.0.1 30051\n")
    code, _, err = cli("launch", _pipeline(papers, "samplers.toml"), "--ip-config", ip,
                       "--trainers", "1", "--samplers", "2", "--local", "2")
    assert (code, err.strip()) == (1, "graphflow: error: --samplers 2: separate DistDGL sampler "
                                      "processes are not supported yet (dist_neighbor samples "
                                      "inside each trainer, as DistDGL with num_workers = 0); "
                                      "use --samplers 0")


def test_dist_neighbor_outside_graphflow_launch_says_how_to_start_it(cli, papers, tmp_path,
                                                                     monkeypatch):
    monkeypatch.chdir(papers)
    code, _, err = cli("run", _pipeline(papers, "plain.toml"), "--out-dir", tmp_path / "o",
                       "--quiet")
    assert code == 1
    assert err.strip().splitlines()[0].endswith(
        '[sample] dist_neighbor samples through DistDGL servers: load the graph with [load] '
        'type = "partitioned" and start the run with graphflow launch PIPELINE --ip-config '
        'IP.txt --trainers T'), err
