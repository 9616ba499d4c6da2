"""What checking a DGL file costs: graphflow's ``dgl`` loader path vs DGL's bare reader.

``graphflow.io.dglfile.load_graph`` checks a file before DGL's C++ reader sees it (which
aborts or crashes the process on a damaged file): :func:`~graphflow.io.dglfile.check_container`
parses the container's layout in Python, :func:`~graphflow.io.dglfile.probe` loads the file
in a forked child with bounded time and memory, then the process loads it itself and restores
graphflow's ids and metadata. The peer is ``dgl.load_graphs`` alone, on the same good files:

* Cora, written by graphflow's ``dgl`` exporter (planetoid loader from ``--planetoid``, the
  shared raw files): 2,708 nodes, 10,556 edges, 1,433 features, ids and metadata;
* R-MAT graphs (``graphflow.io.synthetic.rmat``) with 16 float features per node, written by the
  same ``save_graph``: 100k nodes / 1M edges, and 1M nodes / 10M edges (not with ``--quick``).

After one untimed run of each, every peer runs ``--repeats`` times in one process, the order
reversed every repetition (``benchmarks/records.py``); we print the median wall time of each,
their ratio, and the check's and the probe's share, then each one's median, range and count
(the fastest labelled ``best``). ``--record`` saves the figures under
``benchmarks/results/dgl_load/``.

    flock /tmp/graphflow-bench.lock python benchmarks/dgl_load.py [--quick] [--repeats 5]
        [--planetoid ../shared/data/planetoid]

The last output line is one JSON object with the figures.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from benchmarks import records  # noqa: E402
from benchmarks.records import load as load_average  # noqa: E402
from benchmarks.records import write  # noqa: E402
from graphflow.cli.main import main as graphflow_main
from graphflow.compat.dgl import dgl
from graphflow.io.synthetic import rmat
from graphflow.graph import GraphData, NodeIds
from graphflow.io import dglfile

CORA = """
[pipeline]
name = "cora"
[load]
type = "planetoid"
name = "cora"
root = "{root}"
download = false
[[export]]
type = "dgl"
path = "{path}"
"""


def cora_file(root: Path, folder: Path) -> Path:
    """Cora as graphflow's ``dgl`` exporter writes it (through a real ``graphflow run``)."""
    path = folder / "cora.bin"
    pipeline = folder / "cora.toml"
    pipeline.write_text(CORA.format(root=root.resolve(), path=path))
    code = graphflow_main(["run", str(pipeline), "--out-dir", str(folder / "cora-run"),
                           "--quiet"])
    if code != 0:
        raise SystemExit(f"could not export Cora from {root} (exit {code})")
    return path


def rmat_file(nodes: int, edges: int, folder: Path) -> Path:
    gen = rmat(nodes, edges, seed=0)
    g = dgl.graph((gen.src, gen.dst), num_nodes=nodes)
    g.ndata["feat"] = torch.randn(nodes, 16)
    g.ndata["label"] = torch.randint(0, 8, (nodes,))
    path = folder / f"rmat_{nodes}.bin"
    dglfile.save_graph(path, GraphData(graph=g, ids=NodeIds.identity(nodes), name=path.stem))
    return path


def compare(path: Path, repeats: int) -> dict:
    peers: dict[str, Callable[[], object]] = {
        "dgl.load_graphs": lambda: dgl.load_graphs(str(path)),
        "graphflow load_graph": lambda: dglfile.load_graph(path),
        "check_container": lambda: dglfile.check_container(path),
        "probe": lambda: dglfile.probe(path),
    }
    # one warm-up each (page cache, first calls), then the order reversed every repetition
    raced = records.race({name: (lambda rep, fn=fn: fn()) for name, fn in peers.items()},
                         repeats, warmup=1)
    median = {name: raced.median(name) for name in peers}
    return {"file": path.name, "mb": round(path.stat().st_size / 1e6, 1),
            "seconds": {k: round(v, 4) for k, v in median.items()},
            "ratio": round(median["graphflow load_graph"] / median["dgl.load_graphs"], 2),
            "lines": [raced.summary(name, width=20) for name in peers], **raced.record()}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="skip the 10M-edge graph")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--planetoid", type=Path,
                   default=Path(__file__).resolve().parents[1].parent / "shared" / "data" /
                   "planetoid")
    p.add_argument("--record", action="store_true",
                   help="save the figures under benchmarks/results/dgl_load/ "
                        "(benchmarks/records.py)")
    args = p.parse_args(argv)
    load_before = load_average()
    results = []
    with tempfile.TemporaryDirectory(prefix="graphflow-dglload-") as tmp:
        folder = Path(tmp)
        files = [cora_file(args.planetoid, folder), rmat_file(100_000, 1_000_000, folder)]
        if not args.quick:
            files.append(rmat_file(1_000_000, 10_000_000, folder))
        print(f"{'file':<16} {'MB':>7} {'dgl.load_graphs':>16} {'graphflow':>10} {'ratio':>6} "
              f"{'check':>8} {'probe':>8}")
        for path in files:
            r = compare(path, args.repeats)
            s = r["seconds"]
            print(f"{r['file']:<16} {r['mb']:>7} {s['dgl.load_graphs']:>15.3f}s "
                  f"{s['graphflow load_graph']:>9.3f}s {r['ratio']:>6} "
                  f"{s['check_container']:>7.3f}s {s['probe']:>7.3f}s", flush=True)
            for line in r.pop("lines"):
                print(f"    {line}")
            results.append(r)
    out = {"repeats": args.repeats, "results": results}
    if args.record:
        write("dgl_load", out, load_before=load_before)
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
