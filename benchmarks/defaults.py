"""Skip-gram's defaults checked on graphs that played no part in choosing them.

The learning rate (:data:`graphflow.embeddings.skipgram.DEFAULT_LR`; 0.03 scored best on
the two graphs of ``benchmarks/node2vec.py``, a 20k-node SBM and a 10k-node dense multi-label
graph) and the smoothed start ``init_hops = 4``
(:data:`~graphflow.embeddings.skipgram.INIT_HOPS`, measured on those graphs, Cora and
CiteSeer) are checked here, for quality (not speed), on other graphs:

``cora``, ``citeseer``
    the Planetoid files (``--data``), the standard split (140 / 500 / 1000 and 120 / 500 /
    1000 labels), walks and skip-gram as ``examples/cora_node2vec.toml`` (80 steps, 10 per
    node, p = 1, q = 0.5, window 10, dim 128, ``subsample = 1e-4``); test accuracy of the
    logistic regression whose L2 penalty the validation nodes chose.
``karate``
    Zachary's karate club, as ``examples/karate_deepwalk.toml`` (DeepWalk, 40 steps, 40 per
    node, dim 16, window 5, 16 walks a step); mean accuracy over 5 random half splits.
``powerlaw``
    3000 nodes, power-law degrees (Chung-Lu weights with tail exponent 2.5: largest degree
    280, mean 9) and 8 planted classes, 30% of the edges drawn across them (a degree-corrected
    SBM, ``graphflow.io.synthetic.powerlaw_communities``); node2vec walks p = 0.25, q = 4.
``weighted``
    an SBM of 3000 nodes and 8 classes (mean degree 10, 40% of edges across classes), every
    edge weighted by a Pareto draw of tail index 1.5 (heavy-tailed: largest 612, median 1.6,
    so walks keep bouncing on a few heavy edges); weighted first-order walks (DeepWalk on the
    weights).
``dense3k``, ``dense30k``
    ``benchmarks/node2vec.py``'s dense multi-label generator (overlapping communities, mean
    degree ~68, 36 labels) at 3k and 30k nodes instead of its 10k, its walks (p = 0.25,
    q = 4); the 30k graph walks 3 times from each node instead of 10, to fit the time budget.

The generated graphs (the last four) use the ``skipgram`` task's defaults (dim 128, window 10,
5 negatives, 64 walks a step, 80 steps, 10 walks per node) and a fixed split of their nodes:
40% train, 10% validation (which chooses the classifier's L2 penalty), 50% test; accuracy,
micro- and macro-F1 on the test half (top-k one-vs-rest for the multi-label ones).

**Cells.** Per graph the walks are generated once (walk seed 0) and every cell trains
``SkipGram`` on the same walks from a training seed, as the ``skipgram`` task does (the same
walk batches, the loss checked for a non-finite value after each, the tables at the end: a
divergence is the task's ``NumericalError``, counted as ``NaN``). The settings: ``lr`` in
0.025 / 0.03 / 0.035 with the default start (``init_hops = 4``), and ``init_hops = 0`` at
``lr = 0.03``; with 1, 2 and 4 Hogwild workers, set explicitly (graphs with fewer nodes than
a step's walk tokens would otherwise train on one), and the trainer threads of the core
policy (``graphflow.runtime.cores``: one per worker). Each *row* is a subprocess with its
environment, as in ``benchmarks/matrix.py``: ``native``, and ``avx2``
(``ONEDNN_MAX_CPU_ISA=AVX2``, ``ATEN_CPU_CAPABILITY=avx2``: float32 products where the native
row multiplies in bfloat16 on CPUs with AVX512-BF16), which trains ``lr`` 0.025 and 0.03 at
the default start (budget). The two subprocesses take turns, one cell at a time. Cells run in
rounds of (workers, training seed, graphs), 4 workers and the cheaper graphs first
(:data:`ROUNDS`), so that ``--budget`` cuts the least telling cells; ``--results`` keeps the
finished cells, and a later run with the same file goes on where the last one stopped.

Output: one line per cell as it finishes, then per graph a markdown table (the figure, mean
over training seeds, and the final loss per positive pair; ``NaN``: the run stopped with the
``NumericalError``), the paired differences (``lr`` 0.03 - 0.025, 0.035 - 0.03,
``init_hops`` 4 - 0, mean and standard error over the cells that differ only there), and one
JSON line with every cell.

    nice -n 15 python benchmarks/defaults.py --cases /tmp/defaults-cases \\
        --results /tmp/defaults.jsonl --budget 1800
    python benchmarks/defaults.py --graphs powerlaw,karate --rows native --seeds 1
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import torch  # noqa: E402

from graphflow.embeddings.evaluation import classify, random_split  # noqa: E402
from graphflow.embeddings.skipgram import DEFAULT_LR, INIT_HOPS, SkipGram, SkipGramSettings  # noqa: E402
from graphflow.errors import NumericalError  # noqa: E402
from graphflow.io.synthetic import overlapping_communities, powerlaw_communities, sbm  # noqa: E402
from graphflow.runtime import cores  # noqa: E402
from graphflow.sampling.sampler import intra_op_threads  # noqa: E402
from graphflow.train import finite  # noqa: E402
from graphflow.walks.csr import WalkGraph, from_edges  # noqa: E402
from graphflow.walks.node2vec import random_walks  # noqa: E402

AVX2 = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2"}  # as benchmarks/matrix.py
ROWS: dict[str, dict[str, str]] = {"native": {}, "avx2": AVX2}
"""Row name -> the environment caps its subprocess runs with."""
GRAPHS = ("karate", "cora", "citeseer", "dense3k", "powerlaw", "weighted", "dense30k")
"""In the order they run (the cheapest first)."""
LRS = (0.025, 0.03, 0.035)
WORKERS = (1, 2, 4)
WALK_BATCH = 100_000  # start nodes per walk batch: the node2vec sampler's default batch_size


@dataclass
class Case:
    """One graph: its walk graph, walks, labels and split, and the skip-gram settings."""

    name: str
    graph: WalkGraph
    walks: torch.Tensor  # int64 (B, L + 1), -1 after a dead end
    labels: torch.Tensor  # int64 (N,) or float (N, C)
    num_classes: int
    splits: list[tuple[torch.Tensor, torch.Tensor | None, torch.Tensor]]  # (train, val, test)
    metric: str  # the headline figure: "acc" or "macro_f1"
    describe: str
    settings: dict[str, Any] = field(default_factory=dict)  # SkipGramSettings fields
    step_walks: int = 64
    walks_per_node: int = 10


def walk(graph: WalkGraph, walks_per_node: int, length: int, p: float, q: float,
         seed: int) -> torch.Tensor:
    """``walks_per_node`` walks from every node in a seeded random order, as the task walks."""
    gen = torch.Generator().manual_seed(seed)
    n = graph.num_nodes
    starts = torch.arange(n).repeat(walks_per_node)
    starts = starts[torch.randperm(starts.numel(), generator=gen)]
    if not (p == 1.0 and q == 1.0):
        graph.with_edge_set()
    with intra_op_threads(1):
        return torch.cat([random_walks(graph, b, length, p=p, q=q, generator=gen)
                          for b in starts.split(WALK_BATCH)])


def generated_split(nodes: int, seed: int) -> list[tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
    """40% train, 10% validation, 50% test of ``nodes`` (fixed by ``seed``)."""
    perm = torch.randperm(nodes, generator=torch.Generator().manual_seed(seed))
    a, b = int(0.4 * nodes), int(0.5 * nodes)
    return [(perm[:a], perm[a:b], perm[b:])]


def planetoid(name: str, data: Path, seed: int) -> Case:
    from graphflow_plugins.loaders.planetoid import PlanetoidLoader

    loader = PlanetoidLoader(PlanetoidLoader.Options(name=name, root=data / "planetoid",
                                                     download=False))
    loaded = loader.load(None)  # type: ignore[arg-type]  # the files are there: no ctx needed
    g = loaded.graph
    src, dst = g.edges()
    graph = from_edges(src, dst, g.num_nodes())
    mask = {k: g.ndata[f"{k}_mask"].nonzero().squeeze(1) for k in ("train", "val", "test")}
    return Case(name, graph, walk(graph, 10, 80, 1.0, 0.5, seed), g.ndata["label"],
                int(loaded.meta["num_classes"]), [(mask["train"], mask["val"], mask["test"])],
                "acc", f"{g.num_nodes()} nodes, {graph.num_edges} directed edges, standard "
                "split; walks p = 1, q = 0.5, subsample 1e-4 (examples/cora_node2vec.toml)",
                {"subsample": 1e-4})


def karate(seed: int) -> Case:
    import networkx as nx

    nxg = nx.karate_club_graph()
    edges = torch.tensor(list(nxg.edges()), dtype=torch.int64)
    src, dst = torch.cat([edges[:, 0], edges[:, 1]]), torch.cat([edges[:, 1], edges[:, 0]])
    clubs = sorted({nxg.nodes[v]["club"] for v in nxg})
    labels = torch.tensor([clubs.index(nxg.nodes[v]["club"]) for v in range(34)])
    graph = from_edges(src, dst, 34)
    gen = torch.Generator().manual_seed(seed)
    halves = [random_split(torch.arange(34), 0.5, gen) for _ in range(5)]
    splits = [(train, None, test) for train, test in halves]
    return Case("karate", graph, walk(graph, 40, 40, 1.0, 1.0, seed), labels, 2, splits, "acc",
                "34 nodes, 156 directed edges, 5 half splits; DeepWalk, 40 steps, 40 per node, "
                "dim 16, window 5, 16 walks a step (examples/karate_deepwalk.toml)",
                {"dim": 16, "window": 5}, step_walks=16, walks_per_node=40)


def make_case(name: str, data: Path, seed: int) -> Case:
    if name in ("cora", "citeseer"):
        return planetoid(name, data, seed)
    if name == "karate":
        return karate(seed)
    if name == "powerlaw":
        nodes = 3000
        d = powerlaw_communities(nodes, 8, 10.0, across=0.3, seed=seed)
        graph = from_edges(d.src, d.dst, nodes)
        return Case(name, graph, walk(graph, 10, 80, 0.25, 4.0, seed), d.label, 8,
                    generated_split(nodes, seed), "acc",
                    f"{nodes} nodes, {graph.num_edges} directed edges, max degree "
                    f"{int(graph.out_degrees().max())}, 8 classes; walks p = 0.25, q = 4")
    if name == "weighted":
        nodes, classes = 3000, 8
        size = nodes / classes
        d = sbm(nodes, classes, 0, p_in=6 / size, p_out=4 / (nodes - size), seed=seed)
        half = d.src.numel() // 2  # sbm returns lo -> hi, then the same edges hi -> lo
        gen = torch.Generator().manual_seed(seed + 1)
        w = (1.0 - torch.rand(half, generator=gen)) ** (-1.0 / 1.5)  # Pareto, tail index 1.5
        graph = from_edges(d.src, d.dst, nodes, torch.cat([w, w]))
        return Case(name, graph, walk(graph, 10, 80, 1.0, 1.0, seed), d.label, classes,
                    generated_split(nodes, seed), "acc",
                    f"{nodes} nodes, {graph.num_edges} directed edges, Pareto(1.5) weights "
                    f"(largest {float(w.max()):.0f}, median {float(w.median()):.2f}), "
                    f"{classes} classes; weighted first-order walks")
    if name in ("dense3k", "dense30k"):
        nodes = 3000 if name == "dense3k" else 30_000
        per_node = 10 if name == "dense3k" else 3
        d = overlapping_communities(nodes, 36, 70.0, within=0.15, seed=seed)
        graph = from_edges(d.src, d.dst, nodes)
        return Case(name, graph, walk(graph, per_node, 80, 0.25, 4.0, seed), d.label, 36,
                    generated_split(nodes, seed), "macro_f1",
                    f"{nodes} nodes, {graph.num_edges} directed edges, 36 labels "
                    f"(multi-label); walks p = 0.25, q = 4, {per_node} per node",
                    walks_per_node=per_node)
    raise ValueError(f"unknown graph {name!r}; choose from {', '.join(GRAPHS)}")


SETTINGS = [(lr, INIT_HOPS) for lr in LRS] + [(0.03, 0)]
"""(lr, init_hops) in the native row: the lr sweep at the default start, and the random start
at 0.03 (the middle of the sweep)."""
AVX2_SETTINGS = [(0.025, INIT_HOPS), (0.03, INIT_HOPS)]
"""(lr, init_hops) in the AVX2 row (budget): word2vec's rate and 0.03."""
SMALL, LARGE, BIG = ("karate", "cora", "citeseer", "dense3k"), ("powerlaw", "weighted"), \
    ("dense30k",)
ROUNDS = [(4, 0, SMALL), (2, 0, SMALL), (4, 0, LARGE), (2, 0, LARGE), (1, 0, SMALL),
          (4, 1, SMALL), (2, 1, SMALL), (4, 0, BIG), (1, 0, LARGE), (4, 1, LARGE),
          (2, 1, LARGE), (2, 0, BIG), (1, 1, SMALL), (4, 2, SMALL), (2, 2, SMALL),
          (1, 1, LARGE), (1, 2, SMALL)]
"""(workers, training seed, graphs) in the order they run: 4 workers (where concurrent steps
pile up most) and the cheaper graphs first."""


def plan(graphs: list[str], rows: list[str], seeds: int, avx2_seeds: int
         ) -> list[dict[str, Any]]:
    """Every cell, in the order they run: round by round (:data:`ROUNDS`), each round every
    chosen graph of its group, setting and row, so that a run cut short by ``--budget`` still
    covers every row and the most telling cells."""
    cells = []
    for workers, seed, group in ROUNDS:
        for graph in (g for g in group if g in graphs):
            for row in rows:
                if seed >= (seeds if row == "native" else avx2_seeds):
                    continue
                for lr, hops in (SETTINGS if row == "native" else AVX2_SETTINGS):
                    cells.append({"graph": graph, "row": row, "lr": lr,
                                  "init_hops": hops, "workers": workers, "seed": seed})
    return cells


def key(cell: dict[str, Any]) -> tuple:
    return tuple(cell[k] for k in ("graph", "row", "lr", "init_hops", "workers", "seed"))


def train_cell(case: Case, lr: float, hops: int, workers: int, seed: int) -> dict[str, Any]:
    """Train as the ``skipgram`` task does on ``case``'s walks; evaluate the embeddings."""
    n = case.graph.num_nodes
    settings = SkipGramSettings(**{**case.settings, "init_hops": hops})
    plan = cores.plan("walks", None, {"workers": workers})
    t0 = time.perf_counter()
    with intra_op_threads(plan.worker_threads):
        model = SkipGram(n, settings, case.graph.in_strength(), torch.device("cpu"),
                         torch.Generator().manual_seed(seed), graph=case.graph)
    total = case.walks.shape[0]
    done, loss_sum, pairs = 0, 0.0, 0.0
    status = "ok"
    fix = f"lower lr (now {lr:g})"
    batches = case.walks.split(WALK_BATCH)
    try:
        for b, walks in enumerate(batches):
            with intra_op_threads(plan.worker_threads):
                step_loss, step_pairs, done = model.fit(
                    walks, lr, done, total, case.step_walks, workers=workers,
                    worker_threads=plan.worker_threads)
            finite.check_loss(float(step_loss), "skip-gram loss", epoch=1,
                              where=f"walk batch {b + 1} of {len(batches)}", fix=fix)
            loss_sum += float(step_loss)
            pairs += float(step_pairs)
        finite.check_output(model.emb[:n], "skip-gram embeddings", fix=fix)
        finite.check_output(model.out_emb[:n], "skip-gram output vectors", fix=fix)
    except NumericalError as exc:
        status = f"NumericalError: {exc}"
    seconds = time.perf_counter() - t0
    out: dict[str, Any] = {"status": status, "loss": loss_sum / max(pairs, 1.0),
                           "fit_s": round(seconds, 1), "worker_threads": plan.worker_threads,
                           "precision": str(model.matmul_dtype).replace("torch.", "")}
    if status != "ok":
        out["loss"] = float("nan")
        return out
    emb = model.embeddings()
    results = []
    with intra_op_threads(1):
        for train, val, test in case.splits:
            results.append(classify(emb, case.labels, train, test, val=val,
                                    num_classes=case.num_classes,
                                    generator=torch.Generator().manual_seed(0)))
    for k in ("accuracy", "micro_f1", "macro_f1"):
        out["acc" if k == "accuracy" else k] = round(
            statistics.fmean(getattr(r, k) for r in results), 4)
    out["loss"] = round(out["loss"], 4)
    return out


def child(row: str, folder: Path) -> int:
    """Serve one row: read a cell (JSON) per line on stdin, train it, answer one JSON line."""
    cases: dict[str, Case] = {}
    print("ROW " + json.dumps({"row": row,
                               "capability": torch.backends.cpu.get_cpu_capability()}),
          flush=True)
    for line in sys.stdin:
        cell = json.loads(line)
        name = cell["graph"]
        if name not in cases:
            cases.clear()  # one graph's walks in memory at a time
            cases[name] = torch.load(folder / f"{name}.pt", weights_only=False)
        result = train_cell(cases[name], cell["lr"], cell["init_hops"], cell["workers"],
                            cell["seed"])
        print("CELL " + json.dumps({**cell, **result}), flush=True)
    return 0


class Row:
    """A row's subprocess, started with the row's environment (as ``benchmarks/matrix.py``
    runs its rows), trained one cell at a time; the rows take turns, never run at once."""

    def __init__(self, row: str, folder: Path):
        env = {k: v for k, v in os.environ.items() if k not in AVX2}
        env.update(ROWS[row])
        self.row = row
        self.proc = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--child", row, "--folder",
             str(folder)], cwd=REPO, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            text=True)
        caps = " ".join(f"{k}={v}" for k, v in ROWS[row].items()) or "no caps"
        first = self._line()
        capability = json.loads(first[4:])["capability"] if first.startswith("ROW ") else "?"
        print(f"[{row}] {caps}: torch CPU capability {capability}", flush=True)

    def _line(self) -> str:
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the {self.row} row's subprocess exited "
                               f"({self.proc.wait()})")
        return line

    def train(self, cell: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(cell) + "\n")
        self.proc.stdin.flush()
        while not (line := self._line()).startswith("CELL "):
            pass
        return json.loads(line[5:])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def cell_line(c: dict[str, Any]) -> str:
    figures = (f"acc {c['acc']:.4f} micro-F1 {c['micro_f1']:.4f} macro-F1 {c['macro_f1']:.4f}"
               if c["status"] == "ok" else c["status"])
    return (f"{c['graph']:9s} lr {c['lr']:<6g} hops {c['init_hops']} workers {c['workers']} "
            f"seed {c['seed']}: loss {c['loss']:.4f}  {figures}  ({c['fit_s']:.0f} s, "
            f"{c['precision']})")


def mean_se(values: list[float]) -> tuple[float, float]:
    m = statistics.fmean(values)
    se = statistics.stdev(values) / len(values) ** 0.5 if len(values) > 1 else float("nan")
    return m, se


def report(cells: list[dict[str, Any]], cases: dict[str, str], metric: dict[str, str]) -> dict:
    """Print the tables and the paired differences; return the summary for the JSON line."""
    summary: dict[str, Any] = {}
    for graph in cases:
        mine = [c for c in cells if c["graph"] == graph]
        if not mine:
            continue
        key = metric[graph]
        columns = sorted({(c["row"], c["workers"]) for c in mine},
                         key=lambda rw: (list(ROWS).index(rw[0]), rw[1]))
        print(f"\n**{graph}**: {cases[graph]}. Figure: {key} (mean over training seeds), "
              f"loss per positive pair in brackets.\n")
        print("| lr | init_hops | " + " | ".join(f"{r}, {w} worker{'s' * (w > 1)}"
                                                 for r, w in columns) + " |")
        print("| --- | --- | " + " | ".join("---" for _ in columns) + " |")
        for lr, hops in sorted({(c["lr"], c["init_hops"]) for c in mine},
                               key=lambda x: (-x[1], x[0])):
            texts = []
            for r, w in columns:
                here = [c for c in mine if (c["lr"], c["init_hops"], c["row"], c["workers"])
                        == (lr, hops, r, w)]
                if not here:
                    texts.append("")
                    continue
                bad = [c for c in here if c["status"] != "ok"]
                good = [c for c in here if c["status"] == "ok"]
                text = ""
                if good:
                    text = (f"{statistics.fmean(c[key] for c in good):.4f} "
                            f"({statistics.fmean(c['loss'] for c in good):.3f})")
                if bad:
                    text += f" NaN x{len(bad)}"
                texts.append(text.strip())
            print(f"| {lr:g} | {hops} | " + " | ".join(texts) + " |")
        diffs = {}
        for name, a, b in (("lr 0.03 - 0.025", (0.03, INIT_HOPS), (0.025, INIT_HOPS)),
                           ("lr 0.035 - 0.03", (0.035, INIT_HOPS), (0.03, INIT_HOPS)),
                           ("init_hops 4 - 0", (0.03, INIT_HOPS), (0.03, 0))):
            pairs = []
            for c in mine:
                if (c["lr"], c["init_hops"]) != a or c["status"] != "ok":
                    continue
                other = [o for o in mine if (o["lr"], o["init_hops"]) == b and o["status"] == "ok"
                         and (o["row"], o["workers"], o["seed"])
                         == (c["row"], c["workers"], c["seed"])]
                if other:
                    pairs.append(c[key] - other[0][key])
            if pairs:
                m, se = mean_se(pairs)
                diffs[name] = {"mean": round(m, 4), "se": round(se, 4), "pairs": len(pairs),
                               "wins": sum(p > 0 for p in pairs),
                               "losses": sum(p < 0 for p in pairs)}
        failed = [c for c in mine if c["status"] != "ok"]
        spread = [statistics.stdev([c[key] for c in group]) for group in _seed_groups(mine)
                  if len(group) > 1]
        summary[graph] = {"differences": diffs, "failed": len(failed), "cells": len(mine),
                          "seed_sd": round(statistics.fmean(spread), 4) if spread else None}
        print(f"\n{graph}: paired differences of {key} (mean +- SE over the paired cells; "
              f"wins/losses):", "; ".join(f"{k}: {v['mean']:+.4f} +- {v['se']:.4f} "
                                          f"({v['wins']}/{v['losses']} of {v['pairs']})"
                                          for k, v in diffs.items()),
              f"| stopped non-finite: {len(failed)} of {len(mine)}"
              + (f" | training-seed spread (SD) {summary[graph]['seed_sd']:.4f}"
                 if spread else ""))
    return summary


def _seed_groups(cells: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    groups: dict[tuple, list[dict[str, Any]]] = {}
    for c in cells:
        if c["status"] == "ok":
            groups.setdefault((c["row"], c["workers"], c["lr"], c["init_hops"]), []).append(c)
    return list(groups.values())


def _interrupt(signum: int, frame: object) -> None:
    """SIGTERM as Ctrl-C: the row subprocesses and the temporary folder are cleaned up."""
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--graphs", default=",".join(GRAPHS), help=f"of {', '.join(GRAPHS)}")
    p.add_argument("--rows", default=",".join(ROWS), help=f"of {', '.join(ROWS)}")
    p.add_argument("--seeds", type=int, default=3, help="training seeds, native row (<= 3)")
    p.add_argument("--avx2-seeds", type=int, default=2, help="training seeds, AVX2 row (<= 3)")
    p.add_argument("--data", type=Path, default=REPO.parent / "shared" / "data",
                   help="folder with planetoid/ (Cora, CiteSeer raw files)")
    p.add_argument("--walk-seed", type=int, default=0)
    p.add_argument("--cases", type=Path, default=None,
                   help="folder to keep the graphs and walks in (reused when there)")
    p.add_argument("--results", type=Path, default=None,
                   help="JSON-lines file of finished cells: appended to, and the cells already "
                        "in it are not run again (a run cut short goes on from there)")
    p.add_argument("--budget", type=float, default=3600,
                   help="wall seconds; cells still to run then are left out (default 3600)")
    p.add_argument("--child", help=argparse.SUPPRESS)
    p.add_argument("--folder", type=Path, help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.child:
        return child(a.child, a.folder)
    signal.signal(signal.SIGTERM, _interrupt)
    graphs = [g.strip() for g in a.graphs.split(",") if g.strip()]
    rows = [r.strip() for r in a.rows.split(",") if r.strip()]
    for name, chosen, known in (("graph", graphs, GRAPHS), ("row", rows, ROWS)):
        bad = [x for x in chosen if x not in known]
        if bad:
            p.error(f"unknown {name} {bad[0]!r}; choose from {', '.join(known)}")
    if {"cora", "citeseer"} & set(graphs) and not (a.data / "planetoid").is_dir():
        p.error(f"{a.data / 'planetoid'} does not exist; pass --data with the folder that "
                f"holds planetoid/, or leave out cora and citeseer")
    t0 = time.perf_counter()
    described: dict[str, str] = {}
    metric: dict[str, str] = {}
    with tempfile.TemporaryDirectory(prefix="graphflow-defaults-") as tmp:
        folder = Path(tmp)
        for name in graphs:
            kept = a.cases / f"{name}-{a.walk_seed}.pt" if a.cases else None
            if kept is not None and kept.exists():
                case = torch.load(kept, weights_only=False)
            else:
                case = make_case(name, a.data, a.walk_seed)
                if kept is not None:
                    kept.parent.mkdir(parents=True, exist_ok=True)
                    torch.save(case, kept)
            described[name] = case.describe
            metric[name] = case.metric
            torch.save(case, folder / f"{name}.pt")
            print(f"{name}: {case.describe}; walks {tuple(case.walks.shape)}", flush=True)
        planned = plan(graphs, rows, a.seeds, a.avx2_seeds)
        wanted = {key(c) for c in planned}
        cells: list[dict[str, Any]] = []
        if a.results is not None and a.results.exists():
            cells = [c for c in map(json.loads, a.results.read_text().splitlines())
                     if key(c) in wanted]
            print(f"{len(cells)} cells read from {a.results}", flush=True)
        done = {key(c) for c in cells}
        todo = [c for c in planned if key(c) not in done]
        deadline = time.monotonic() + a.budget
        workers: dict[str, Row] = {}  # started at their first cell
        try:
            for cell in todo:
                if time.monotonic() > deadline:
                    print(f"--budget spent: {len(cells)} of {len(planned)} cells done",
                          flush=True)
                    break
                if cell["row"] not in workers:
                    workers[cell["row"]] = Row(cell["row"], folder)
                cells.append(workers[cell["row"]].train(cell))
                print(f"[{cell['row']}] {cell_line(cells[-1])}", flush=True)
                if a.results is not None:
                    with a.results.open("a") as f:
                        f.write(json.dumps(cells[-1]) + "\n")
        finally:
            for w in workers.values():
                w.close()
        left = len(planned) - len(cells)
    print(f"\nDefaults: lr = {DEFAULT_LR}, init_hops = {INIT_HOPS}. Cells: {len(cells)}"
          f"{f' ({left} left out by --budget)' if left else ''}, "
          f"{time.perf_counter() - t0:.0f} s wall.")
    summary = report(cells, described, metric)
    print(json.dumps({"benchmark": "defaults", "default_lr": DEFAULT_LR,
                      "default_init_hops": INIT_HOPS, "cells_left_out": left,
                      "graphs": described, "metric": metric,
                      "summary": summary, "cells": cells}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
