"""Latency and throughput of ``graphflow serve`` on loopback.

Trains a small bundle (GraphSAGE, 2 epochs, on a synthetic SBM graph of ``--nodes`` nodes
and 32 features), starts ``graphflow serve`` on it in its own process (127.0.0.1, a free
port), and drives it with one keep-alive HTTP client (httpx):

* one node: ``POST /predict/nodes`` with one random id, ``--requests`` times: p50 and p99
  latency (client side: request to parsed answer);
* batches: ``--batch`` random ids per request: requests/s and nodes/s;
* a posted subgraph of 100 nodes and 400 edges (inductive, inferred per request): p50 and
  p99 latency.

No peers: one server, three request kinds in a fixed sequence. Every latency figure is printed
as p50 and p99 with the range and count of all its timed requests; the batch section's rate is
the median of its requests' rates, with their range. Run it under ``flock
/tmp/graphflow-bench.lock``; the figures depend on the machine's load (printed with the
machine record). The last line is JSON; ``--record`` saves it under
``benchmarks/results/serve/``.

    python benchmarks/serve.py [--nodes 20000] [--requests 1000] [--batch 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from machine import show  # noqa: E402  (sets sys.path to the repository)

from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402

PIPELINE = """
[pipeline]
name = "serve_bench"
seed = 0

[load]
type = "synthetic"
kind = "sbm"
nodes = {nodes}
classes = 5
features = 32
p_in = {p_in}
p_out = {p_out}

[[transform]]
type = "normalize_features"
method = "standard"

[model]
type = "sage"
hidden = 64

[train]
type = "node_classification"
epochs = 2
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def percentiles(seconds: list[float]) -> dict[str, float]:
    ms = sorted(s * 1e3 for s in seconds)
    return {"p50_ms": statistics.median(ms), "p99_ms": ms[min(len(ms) - 1, int(0.99 * len(ms)))],
            "mean_ms": statistics.fmean(ms), "min_ms": ms[0], "max_ms": ms[-1], "n": len(ms)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--requests", type=int, default=1000)
    parser.add_argument("--batch", type=int, default=1000)
    parser.add_argument("--batch-requests", type=int, default=100)
    parser.add_argument("--record", action="store_true",
                        help="save the figures under benchmarks/results/serve/ "
                             "(benchmarks/records.py)")
    args = parser.parse_args()
    load_before = load_average()
    import httpx
    import torch

    machine = show()
    degree = 10
    p_in, p_out = degree * 0.8 / (args.nodes / 5), degree * 0.2 / args.nodes
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        (tmp / "p.toml").write_text(PIPELINE.format(nodes=args.nodes, p_in=p_in, p_out=p_out))
        exe = [sys.executable, "-m", "graphflow.cli.main"]
        subprocess.run([*exe, "run", str(tmp / "p.toml"), "--out-dir", str(tmp / "run"),
                        "--quiet"], check=True, stdout=subprocess.DEVNULL)
        port = free_port()
        server = subprocess.Popen([*exe, "serve", str(tmp / "run"), "--port", str(port)],
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                  start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 300
            while True:
                if server.poll() is not None:
                    raise SystemExit(f"the server exited: {server.stdout.read()}")
                try:
                    if httpx.get(url + "/health", timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("the server did not start in 300 s")
                time.sleep(0.2)
            gen = torch.Generator().manual_seed(0)
            results = {}
            with httpx.Client(base_url=url, timeout=60) as client:
                ids = torch.randint(args.nodes, (args.requests + 50,), generator=gen).tolist()
                for i in ids[:50]:  # warm-up
                    client.post("/predict/nodes", json={"ids": [i]}).raise_for_status()
                times = []
                for i in ids[50:]:
                    start = time.perf_counter()
                    client.post("/predict/nodes", json={"ids": [i]}).json()
                    times.append(time.perf_counter() - start)
                results["one_node"] = percentiles(times)

                batches = torch.randint(args.nodes, (args.batch_requests, args.batch),
                                        generator=gen).tolist()
                each = []
                for batch in batches:
                    start = time.perf_counter()
                    r = client.post("/predict/nodes", json={"ids": batch})
                    assert len(r.json()["predictions"]) == args.batch
                    each.append(time.perf_counter() - start)
                seconds = sum(each)
                results["batch"] = {"ids_per_request": args.batch,
                                    "requests_per_s": args.batch_requests / seconds,
                                    "nodes_per_s": args.batch_requests * args.batch / seconds,
                                    "request": percentiles(each)}

                n = 100
                feats = torch.randn(n, 32, generator=gen).tolist()
                edges = torch.randint(n, (400, 2), generator=gen).tolist()
                body = {"nodes": list(range(n)), "features": feats, "edges": edges}
                times = []
                for _ in range(100):
                    start = time.perf_counter()
                    client.post("/predict/subgraph", json=body).raise_for_status()
                    times.append(time.perf_counter() - start)
                results["subgraph_100"] = percentiles(times)
        finally:
            if server.poll() is None:
                os.killpg(server.pid, signal.SIGTERM)
                server.wait(timeout=30)
    one, batch, sub = results["one_node"], results["batch"], results["subgraph_100"]
    print(f"graph: {args.nodes:,} nodes, 32 features, GraphSAGE (hidden 64), served on "
          f"127.0.0.1, one keep-alive client")
    def span(p: dict) -> str:
        return f"(range {p['min_ms']:.2f}-{p['max_ms']:.2f} ms, n {p['n']})"

    print(f"one node        p50 {one['p50_ms']:.2f} ms   p99 {one['p99_ms']:.2f} ms   "
          f"{span(one)}")
    print(f"{args.batch} ids/request  {batch['requests_per_s']:.1f} requests/s   "
          f"{batch['nodes_per_s']:,.0f} nodes/s   p50 {batch['request']['p50_ms']:.2f} ms "
          f"{span(batch['request'])}")
    print(f"subgraph (100 nodes, 400 edges)  p50 {sub['p50_ms']:.2f} ms   "
          f"p99 {sub['p99_ms']:.2f} ms   {span(sub)}")
    out = {"benchmark": "serve", "nodes": args.nodes, **results, "machine": machine}
    if args.record:
        write("serve", out, load_before=load_before)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
