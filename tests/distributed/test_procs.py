"""Process-tree helpers of ``graphflow launch`` and the ip config it reads."""

import subprocess
import time
from pathlib import Path

import pytest

from graphflow.distributed.launch import read_ip_config
from graphflow.distributed.procs import descendants, describe_exit, stop_all, stop_groups
from graphflow.errors import ConfigError


def test_describe_exit_names_the_signal_or_the_status():
    assert describe_exit(-9) == "killed by SIGKILL"
    assert describe_exit(1) == "exit status 1"


def _tree() -> subprocess.Popen:
    """A shell with two sleeping children (its own session)."""
    proc = subprocess.Popen(["sh", "-c", "sleep 60 & sleep 60 & wait"], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(descendants(proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    return proc


@pytest.mark.parametrize("stop", [stop_all, stop_groups])
def test_stopping_leaves_no_process_of_the_tree(stop):
    proc = _tree()
    tree = [proc.pid, *descendants(proc.pid)]
    assert len(tree) == 3
    stop([proc], grace=1)
    assert proc.returncode is not None
    time.sleep(0.2)
    alive = [pid for pid in tree if Path(f"/proc/{pid}").exists()
             and Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"]
    assert alive == []


def test_ip_config_skips_comments_and_blank_lines(tmp_path):
    path = tmp_path / "ip.txt"
    path.write_text("# machines\n10.0.0.1 30050\n\n10.0.0.2 30051  # second\n")
    machines = read_ip_config(path)
    assert [(m.index, m.ip, m.port) for m in machines] == [(0, "10.0.0.1", 30050),
                                                            (1, "10.0.0.2", 30051)]


def test_ip_config_missing_or_empty_says_what_to_write(tmp_path):
    with pytest.raises(ConfigError, match=r"no such file; write one line per machine: IP PORT"):
        read_ip_config(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_text("# nothing\n")
    with pytest.raises(ConfigError, match=r"empty.txt: no machines; write one line per machine"):
        read_ip_config(tmp_path / "empty.txt")


def test_a_remote_machine_runs_its_supervisor_over_ssh_in_the_same_folder(tmp_path,
                                                                          monkeypatch):
    import json
    import shlex
    import sys

    from graphflow.distributed.launch import Machine, machine_command
    from graphflow.distributed.machine import Role

    monkeypatch.chdir(tmp_path)
    roles = [Role("server", ["python", "-m", "graphflow.distributed.distdgl"],
                  {"DGL_ROLE": "server", "DGL_SERVER_ID": "1"}, trainer=False)]
    command = machine_command(roles, Machine(1, "10.0.0.2", 30050), local=False, private=False)
    assert command[:5] == ["ssh", "-o", "BatchMode=yes", "-tt", "10.0.0.2"]
    cd, _, rest = command[5].partition(" && exec ")
    assert cd == f"cd {shlex.quote(str(tmp_path))}"
    argv = shlex.split(rest)
    assert argv[:3] == [sys.executable, "-m", "graphflow.distributed.machine"]
    spec = json.loads(argv[3])
    assert spec["cwd"] == str(tmp_path) and spec["roles"][0]["env"]["DGL_SERVER_ID"] == "1"
    local = machine_command(roles, Machine(0, "127.0.0.1", 30050), local=True, private=True)
    assert local[:2] == ["unshare", "--mount"] and local[-4:-1] == argv[:3]
