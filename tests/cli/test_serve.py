"""``graphflow serve``: a real server process on loopback, a real HTTP client."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from graphflow.testing import bundle_node_pipeline

SBM = bundle_node_pipeline("served", nodes=200, features=6, hidden=8, epochs=2)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def gone(pid: int) -> bool:
    try:
        os.killpg(pid, 0)  # the server ran in its own process group
    except ProcessLookupError:
        return True
    return False


@pytest.fixture
def server(tmp_path, cli):
    (tmp_path / "p.toml").write_text(SBM)
    code, _, err = cli("run", tmp_path / "p.toml", "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "graphflow.cli.main", "serve", str(tmp_path / "run"),
         "--host", "127.0.0.1", "--port", str(port), "--max-bytes", "20000"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 90
        while True:
            assert proc.poll() is None, proc.stdout.read()
            try:
                if httpx.get(url + "/health", timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the server did not start in 90 s"
            time.sleep(0.2)
        yield proc, url
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


def test_serve_answers_refuses_and_stops_on_sigterm(server):
    proc, url = server
    with httpx.Client(base_url=url, timeout=30) as client:
        health = client.get("/health").json()
        assert health == {"status": "ok", "kind": "node", "nodes": 200}
        info = client.get("/model").json()
        assert info["model"]["type"] == "sage" and info["in_dim"] == 6
        assert "POST /predict/subgraph" in info["endpoints"]

        rows = client.post("/predict/nodes", json={"ids": [0, 5, 199]}).json()["predictions"]
        assert [r["id"] for r in rows] == [0, 5, 199]
        assert all(0 <= r["prediction"] < 3 and 0 < r["probability"] <= 1 for r in rows)

        sub = {"nodes": ["a", "b", "c"], "features": [[0.1] * 6, [0.5] * 6, [-1.0] * 6],
               "edges": [["a", "b"], ["b", "c"]]}
        rows = client.post("/predict/subgraph", json=sub).json()["predictions"]
        assert [r["id"] for r in rows] == ["a", "b", "c"]

        def refused(status: int, path: str, **kwargs) -> str:
            r = client.post(path, **kwargs)
            assert r.status_code == status, r.text
            return r.json()["error"]

        assert "node id 999 is not a node of the served graph" in refused(
            404, "/predict/nodes", json={"ids": [1, 999]})
        assert "malformed JSON" in refused(400, "/predict/nodes", content=b'{"ids": [1,')
        assert "rows of 2 numbers, but the model reads 6" in refused(
            422, "/predict/subgraph", json={**sub, "features": [[1, 2]] * 3})
        assert "edges: node id 'zz' is not a posted node" in refused(
            422, "/predict/subgraph", json={**sub, "edges": [["a", "zz"]]})
        assert "at most 20,000" in refused(413, "/predict/nodes",
                                           json={"ids": list(range(5000))})
        assert "needs a link model" in refused(400, "/score/pairs", json={"pairs": [[0, 1]]})
        assert "ids: missing" in refused(422, "/predict/nodes", json={"nodes": [1]})
        assert client.get("/nope").status_code == 404

    proc.send_signal(signal.SIGTERM)
    code = proc.wait(timeout=30)
    out = proc.stdout.read()
    assert code == 0, out
    assert "server stopped by SIGTERM" in out
    assert gone(proc.pid)
