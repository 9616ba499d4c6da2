"""``graphflow launch PIPELINE --ip-config IP.txt --trainers T [--samplers S] [--local M]``.

Starts a DistDGL run as DGL's ``tools/launch.py`` does: on every machine of the ip config,
one DistDGL server (``python -m graphflow.distributed.distdgl``) and ``T`` trainers (an
ordinary ``graphflow run PIPELINE``), each with DGL's environment protocol (``DGL_ROLE``,
``DGL_SERVER_ID``, ``DGL_NUM_SERVER``, ``DGL_NUM_CLIENT``, ``DGL_NUM_SAMPLER``,
``DGL_CONF_PATH``, ``DGL_IP_CONFIG``, ``DGL_GRAPH_FORMAT``, ``DGL_DIST_MODE``,
``DGL_KEEP_ALIVE``) and torch's for the trainers' DDP group (``RANK``, ``WORLD_SIZE``,
``LOCAL_RANK``, ``MASTER_ADDR``, ``MASTER_PORT``).

Each machine's processes run under one supervisor (:mod:`graphflow.distributed.machine`),
started here over ``ssh`` (the repository and the data at the same path on every machine,
as DGL's launch tool assumes) or, with ``--local M``, on this host. DGL 2.1 names the
shared-memory segments of a server's graph and features by name only, so two servers on one
host would overwrite each other's; ``--local`` therefore gives each machine its own mount
namespace with a private tmpfs on ``/dev/shm`` (``unshare --mount``, with
``--map-root-user`` when not root), which disappears with the machine's last process
(``--local 1`` runs without one where namespaces are not allowed).
DGL takes a trainer's machine id from the first local address in the ip config (machine 0
on loopback), so every trainer is told its machine in ``GRAPHFLOW_MACHINE_ID``.

Supervision: when any process exits with an error, the launcher stops every machine and
exits 1 with one line naming the machine, the process and its exit status; Ctrl-C or
SIGTERM stops every process (exit 128 + N).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path

from graphflow.config import PipelineConfig
from graphflow.distributed.distdgl import MACHINE_ID_ENV
from graphflow.distributed.machine import STATUS, Role
from graphflow.distributed.nproc import LOOPBACK, free_port
from graphflow.distributed.partition import PartitionMeta
from graphflow.distributed.procs import describe_exit, stop_groups
from graphflow.distributed.world import check_data_parallel
from graphflow.errors import ConfigError, GraphflowError
from graphflow.runner import default_out_dir
from graphflow.runtime.signals import Terminated, handle_signals

NUM_SERVERS = 1  # DistDGL servers per machine
DIST_SAMPLER = "dist_neighbor"


@dataclass
class Machine:
    """One line of the ip config."""

    index: int
    ip: str
    port: int


def read_ip_config(path: Path) -> list[Machine]:
    """``IP PORT`` per line (DGL's ip config); blank lines and ``#`` comments skipped."""
    if not path.is_file():
        raise ConfigError(f"--ip-config {path}: no such file; write one line per machine: "
                          f"IP PORT (e.g. 10.0.0.1 30050)")
    machines: list[Machine] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) == 1:
            raise ConfigError(f"{path} line {number}: {words[0]!r} has no port; write IP "
                              f"PORT, e.g. {words[0]} 30050")
        if len(words) > 2 or not words[1].isdigit() or not 0 < int(words[1]) < 65536:
            raise ConfigError(f"{path} line {number}: {line.strip()!r}: expected IP PORT "
                              f"(a port 1-65535), e.g. 10.0.0.1 30050")
        machines.append(Machine(len(machines), words[0], int(words[1])))
    if not machines:
        raise ConfigError(f"{path}: no machines; write one line per machine: IP PORT")
    return machines


def check_pipeline(config: PipelineConfig, machines: list[Machine]) -> tuple[Path, PartitionMeta]:
    """The partition config of ``config`` (a ``partitioned`` loader, ``dist_neighbor``
    sampling), checked against the machines; raise ``ConfigError`` / ``DataError``."""
    if config.load.type != "partitioned":
        raise ConfigError(f'{config.source}: [load] type = "{config.load.type}": graphflow '
                          f'launch trains on a partitioned graph; use [load] type = '
                          f'"partitioned", path = "DIR/graph.json" (made by graphflow '
                          f'partition)')
    loader = config.load.build()
    path = Path(loader.options.path).resolve()
    meta = PartitionMeta.read(path)
    meta.require(list(loader.options.node_data), path)
    if meta.parts != len(machines):
        raise ConfigError(f"{path} has {meta.parts} partitions but the ip config lists "
                          f"{len(machines)} machines; partition with --parts "
                          f"{len(machines)} or list {meta.parts} machines")
    for train in config.train:
        if train.sample is None or train.sample.type != DIST_SAMPLER:
            got = "no [sample] section" if train.sample is None else \
                f'[sample] type = "{train.sample.type}"'
            raise ConfigError(f'[{train.task.section}] {got}: under graphflow launch the '
                              f'trainers sample through DistDGL; use [sample] type = '
                              f'"{DIST_SAMPLER}"')
    return path, meta


def plan(config: PipelineConfig, machines: list[Machine], *, ip_config: Path, part_config: Path,
         trainers: int, samplers: int, out_dir: Path, argv: list[str], local: bool,
         threads: int) -> list[list[Role]]:
    """Every machine's processes: its server, then its trainers."""
    clients = trainers * (1 + samplers) * len(machines)  # DGL counts sampler processes too
    common = {"DGL_NUM_SERVER": str(NUM_SERVERS), "DGL_NUM_CLIENT": str(clients),
              "DGL_NUM_SAMPLER": str(samplers), "DGL_CONF_PATH": str(part_config),
              "DGL_IP_CONFIG": str(ip_config), "DGL_GRAPH_FORMAT": "csc",
              "DGL_DIST_MODE": "distributed", "DGL_KEEP_ALIVE": "0",
              "DGL_DIST_MAX_TRY_TIMES": "100", "OMP_NUM_THREADS": str(threads)}
    if local:
        common["GLOO_SOCKET_IFNAME"] = "lo"
    master = {"MASTER_ADDR": machines[0].ip, "MASTER_PORT": str(free_port(
        LOOPBACK if local else "0.0.0.0")), "WORLD_SIZE": str(trainers * len(machines))}
    py = sys.executable
    out = []
    for m in machines:
        roles = [Role("server", [py, "-m", "graphflow.distributed.distdgl"],
                      {**common, "DGL_ROLE": "server",
                       "DGL_SERVER_ID": str(m.index * NUM_SERVERS)}, trainer=False)]
        for t in range(trainers):
            rank = m.index * trainers + t
            roles.append(Role(f"trainer {t} (rank {rank})",
                              [py, "-m", "graphflow", "run", *argv, "--out-dir", str(out_dir)],
                              {**common, **master, "DGL_ROLE": "client", "RANK": str(rank),
                               "LOCAL_RANK": str(t), MACHINE_ID_ENV: str(m.index)},
                              trainer=True))
        out.append(roles)
    return out


def machine_command(roles: list[Role], machine: Machine, *, local: bool,
                    private: bool) -> list[str]:
    """How to start one machine's supervisor: on this host (``local``; in a private
    ``/dev/shm`` when ``private``), or over ssh."""
    spec = json.dumps({"cwd": os.getcwd(), "roles": [asdict(r) for r in roles]})
    agent = [sys.executable, "-m", "graphflow.distributed.machine", spec]
    if not local:
        remote = f"cd {shlex.quote(os.getcwd())} && exec {shlex.join(agent)}"
        return ["ssh", "-o", "BatchMode=yes", "-tt", machine.ip, remote]
    return [*private_shm(), *agent] if private else agent


def private_shm() -> list[str]:
    """A command prefix that runs the rest in a new mount namespace with its own tmpfs on
    ``/dev/shm`` (as root, or through a user namespace otherwise)."""
    user = [] if os.geteuid() == 0 else ["--map-root-user"]
    return ["unshare", "--mount", *user, "--propagation", "private", "--", "sh", "-c",
            'mount -t tmpfs -o mode=1777 graphflow-shm /dev/shm && exec "$@"', "sh"]


def private_shm_error() -> str | None:
    """Why :func:`private_shm` does not work on this host, or None when it does."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    probe = subprocess.run([*private_shm(), "true"], capture_output=True, text=True)
    if probe.returncode:
        return (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
    return None


class Supervisor:
    """The machines' supervisors, watched: the first failure stops them all."""

    def __init__(self, machines: list[Machine], commands: list[list[str]]):
        self.machines = machines
        self.procs = [subprocess.Popen(c, stdout=subprocess.PIPE, text=True,
                                       start_new_session=True) for c in commands]
        self.status: dict[int, dict[str, str]] = {}
        self.relays = [threading.Thread(target=self._relay, args=(i, p), daemon=True)
                       for i, p in enumerate(self.procs)]
        for relay in self.relays:
            relay.start()

    def _relay(self, index: int, proc: subprocess.Popen) -> None:
        """Pass the machine's output through; keep its status line."""
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith(STATUS):
                self.status.setdefault(index, json.loads(line[len(STATUS):]))
            else:
                sys.stdout.write(line)
                sys.stdout.flush()

    def wait(self) -> str | None:
        """Wait for every machine; None when all succeeded, else the first failure."""
        while True:
            codes = [p.poll() for p in self.procs]
            for i, code in enumerate(codes):
                if code not in (None, 0):
                    self.relays[i].join(timeout=2)
                    return self._failure(i, code)
            if all(c == 0 for c in codes):
                return None
            time.sleep(0.1)

    def _failure(self, index: int, code: int) -> str:
        m = self.machines[index]
        got = self.status.get(index)
        if got is None:
            return f"machine {m.index} ({m.ip}): its supervisor {describe_exit(code)}"
        return f"machine {m.index} ({m.ip}): {got['role']} {got['status']}"

    def stop(self) -> None:
        stop_groups(self.procs)
        for relay in self.relays:
            relay.join(timeout=2)


def launch(config: PipelineConfig, *, ip_config: Path, trainers: int, samplers: int,
           local: int | None, argv: list[str], quiet: bool = False) -> int:
    """Run ``config`` on the machines of ``ip_config``; 0 when every process succeeded.

    :param argv: the ``graphflow run`` arguments every trainer gets (pipeline, overrides).
    :raises ConfigError: bad ip config, pipeline or counts (before anything starts).
    :raises GraphflowError: a process failed (the message names it).
    """
    if trainers < 1:
        raise ConfigError(f"--trainers {trainers}: give the trainers per machine (>= 1)")
    if samplers != 0:
        # DGL spawns them; a spawned process imports dgl without graphflow's GraphBolt stub
        # and dies, and the servers then wait forever for DGL_NUM_CLIENT clients.
        raise ConfigError(f"--samplers {samplers}: separate DistDGL sampler processes are not "
                          f"supported yet (dist_neighbor samples inside each trainer, as "
                          f"DistDGL with num_workers = 0); use --samplers 0")
    if local is not None and local < 1:
        raise ConfigError(f"--local {local}: give the number of machines to run on this host "
                          f"(>= 1)")
    ip_config = ip_config.resolve()
    machines = read_ip_config(ip_config)
    if local is not None:
        if len(machines) != local:
            raise ConfigError(f"--local {local} but {ip_config} lists {len(machines)} machines; "
                              f"list {local} lines (127.0.0.1 PORT, distinct ports)")
        far = [m.ip for m in machines if not m.ip.startswith("127.")]
        if far:
            raise ConfigError(f"--local runs every machine on this host, but {ip_config} "
                              f"lists {far[0]}; use 127.0.0.1 PORT lines")
    part_config, meta = check_pipeline(config, machines)
    check_data_parallel(config, trainers * len(machines))
    # Each local machine gets its own /dev/shm: DGL 2.1 names segments by graph and feature
    # only, so two servers on one host would collide, and a killed server's segments vanish
    # with its namespace instead of staying in the host's /dev/shm.
    why = private_shm_error() if local else None
    if why and local and local > 1:
        raise ConfigError(f"--local {local} runs a DistDGL server per machine on this host, "
                          f"each needing its own /dev/shm (DGL 2.1 names shared memory by "
                          f"graph and feature only), but a private /dev/shm cannot be made "
                          f"here ({why}); use --local 1 or separate machines")
    out_dir = default_out_dir(config).resolve()
    threads = max((os.cpu_count() or 1) // (trainers * (local or 1)), 1)
    roles = plan(config, machines, ip_config=ip_config, part_config=part_config,
                 trainers=trainers, samplers=samplers, out_dir=out_dir, argv=argv,
                 local=local is not None, threads=threads)
    say = (lambda m: None) if quiet else (lambda m: print(m, file=sys.stderr, flush=True))
    say(f"graphflow: launching {len(machines)} machines x (1 server + {trainers} trainers) on "
        f'"{meta.graph_name}" ({meta.parts} parts); out_dir {out_dir}')
    start = time.perf_counter()
    supervisor = Supervisor(machines, [machine_command(r, m, local=bool(local),
                                                       private=bool(local) and why is None)
                                       for r, m in zip(roles, machines)])
    try:
        with handle_signals():
            failure = supervisor.wait()
    except Terminated:
        supervisor.stop()
        raise
    supervisor.stop()
    if failure is not None:
        raise GraphflowError(f"{failure}; stopped every other process of the run")
    say(f"graphflow: launch finished in {time.perf_counter() - start:.1f}s; results in "
        f"{out_dir}")
    return 0

