"""The figure tables of the README and docs, generated from the records of benchmark runs.

A page holds a generated table between two markers naming the benchmark whose records it
shows::

    <!-- figures: graph_classification -->
    | CPU | command | ... |
    <!-- /figures -->

``python benchmarks/figures.py`` rewrites every such block from ``benchmarks/results/``
(:mod:`benchmarks.records`); ``--check`` changes nothing and exits 1 when a block differs from
what its records give, or names a benchmark without records (``tests/benchmarks/test_figures.py``
runs it). A figure never needs typing by hand: run the benchmark with ``--record``, then this.

Each table shows every record of its benchmark, newest first: the CPU (model name, family /
model, AVX-512 or AVX2 only, the caps in effect), the command, the commit, the load average
before the run, and the figures as medians with their least and largest repetition. The
``headline`` block (the README's speed table, :func:`headline`) draws on several benchmarks
instead: a row per benchmark, each of its cases from its newest record.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks import records  # noqa: E402

PAGES = ("README.md", "docs")
"""Where blocks are looked for: the README and every page under docs/."""
BLOCK = re.compile(r"(<!-- figures: (?P<name>[a-z0-9_]+) -->\n)(?P<body>.*?)(<!-- /figures -->)",
                   re.S)


ISA_CAPS = ("ONEDNN_MAX_CPU_ISA", "DNNL_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
            "MKL_ENABLE_INSTRUCTIONS")
"""The environment caps that emulate an older instruction set (set before the command)."""


def cpu_text(machine: dict[str, Any]) -> str:
    cpu = machine.get("cpu", {})
    isa = cpu.get("isa", [])
    width = "AVX-512" if any(f.startswith("avx512") for f in isa) else "AVX2" \
        if "avx2" in isa else "no AVX2"
    bf16 = ", BF16" if any("bf16" in f for f in isa) else ""
    amx = ", AMX" if any(f.startswith("amx") for f in isa) else ""
    caps = machine.get("caps", {})
    capped = [f"{k}={caps[k]}" for k in ISA_CAPS if k in caps]
    text = (f"{cpu.get('model_name', '?')} (family {cpu.get('family', '?')} model "
            f"{cpu.get('model', '?')}), {cpu.get('cores', '?')} cores, {width}{bf16}{amx}")
    return text + (f"; caps {' '.join(capped)}" if capped else "")


def span(s: dict[str, float], unit: str = "", digits: int = 2) -> str:
    """``median (min-max)`` of a :func:`benchmarks.records.spread`."""
    f = f"{{:.{digits}f}}"
    return (f"{f.format(s['median'])}{unit} ({f.format(s['min'])}-{f.format(s['max'])}, "
            f"n={s['n']})")


def provenance(r: dict[str, Any]) -> str:
    commit = (r.get("commit") or "?")[:7] + ("+changes" if r.get("dirty") else "")
    return f"`{r['command']}` at {commit}, load {r.get('load_before')}"


def graph_classification(recs: list[dict[str, Any]]) -> str:
    lines = ["| CPU | run | threads, batch | graphflow epoch s | DGL epoch s | DGL / graphflow "
             "| MUTAG GIN protocol (graphflow / DGL) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        sp = res["epoch_s_spread"]
        mutag = res.get("mutag")
        quality = (f"{mutag['graphflow']['gin_acc']:.3f} ± {mutag['graphflow']['std']:.3f} / "
                   f"{mutag['dgl']['gin_acc']:.3f} ± {mutag['dgl']['std']:.3f}"
                   if mutag else "not run")
        lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {res['threads']}, "
                     f"{res['batch_size']} | {span(sp['graphflow'], ' s', 1)} | "
                     f"{span(sp['dgl'], ' s', 1)} | {span(res['ratio_spread'], 'x')} | "
                     f"{quality} |")
    return "\n".join(lines)


def graph_classification_quality(recs: list[dict[str, Any]]) -> str:
    """The quality part alone (``--skip-speed``): per set and side, the GIN-protocol accuracy
    (``cv_gin_acc``: the best epoch of the fold-mean test curve) of every seed, with its
    standard deviation over the folds and that epoch, and the mean over the seeds."""
    lines = ["| CPU | run | set (epochs, rate halved every) | side | cv_gin_acc by seed "
             "(± over folds, best epoch) | mean over seeds (least-largest) |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        first = True
        for name, q in r["result"].get("quality", {}).items():
            for side, m in q["mean"].items():
                seeds = "; ".join(f"{s}: {v[side]['gin_acc']:.3f} ± {v[side]['std']:.3f} "
                                  f"({v[side]['epoch']})" for s, v in q["seeds"].items())
                where = (f"{cpu_text(r['machine'])} | {provenance(r)}" if first else " | ")
                lines.append(f"| {where} | {name} ({q['epochs']}, {q['lr_step']}) | {side} | "
                             f"{seeds} | **{m['mean']:.3f}** ({m['min']:.3f}-{m['max']:.3f}) |")
                first = False
    pooled: dict[tuple[str, int, int, str], dict[str, float]] = {}
    for r in recs:  # oldest first: a seed measured again keeps its newest figure
        for name, q in r["result"].get("quality", {}).items():
            for s, v in q["seeds"].items():
                for side, fig in v.items():
                    pooled.setdefault((name, q["epochs"], q["lr_step"], side), {})[s] = \
                        fig["gin_acc"]
    lines += ["", "Every recorded seed of each set and side, pooled over the records above:", "",
              "| set (epochs, rate halved every) | side | seeds | mean (least-largest) |",
              "| --- | --- | --- | --- |"]
    for (name, epochs, step, side), by_seed in sorted(pooled.items()):
        v = list(by_seed.values())
        seeds = ",".join(sorted(by_seed, key=int))
        lines.append(f"| {name} ({epochs}, {step}) | {side} | {seeds} ({len(v)}) | "
                     f"**{sum(v) / len(v):.3f}** ({min(v):.3f}-{max(v):.3f}) |")
    return "\n".join(lines)


def matrix(recs: list[dict[str, Any]]) -> str:
    from benchmarks.matrix import headline, products_cell

    out = []
    for r in reversed(recs):
        res = r["result"]
        columns = sorted({c for row in res["results"].values() for c in row})
        out += [f"{cpu_text(r['machine'])}; {provenance(r)}", "",
                "| row | caps | threads | products | " + " | ".join(columns) + " |",
                "| --- | --- | --- | --- | " + " | ".join("---" for _ in columns) + " |"]
        for row, (caps, threads) in res["rows"].items():
            capped = ", ".join(f"{k}={v}" for k, v in caps.items()) or "none"
            probe = res.get("products", {}).get(row, {"error": "not probed"})
            cells = [headline(c, res["results"][row][c])[0] if c in res["results"][row]
                     else "" for c in columns]
            out.append(f"| {row} | {capped} | {threads} | {products_cell(probe)} | "
                       + " | ".join(cells) + " |")
        out.append("")
    return "\n".join(out).rstrip()


def _epochs_table(recs: list[dict[str, Any]], ratio_key: str, batches_key: str) -> str:
    lines = ["| CPU | run | threads, arithmetic (graphflow / DGL) | batches an epoch | "
             "graphflow epoch s | DGL epoch s | DGL / graphflow |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        prec = res.get("precision", {"graphflow": "fp32", "dgl": "fp32"})
        threads = res.get("threads", res.get("graphflow_threads", "?"))
        lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {threads}, "
                     f"{prec['graphflow']} / {prec['dgl']} | {res.get(batches_key, '?')} | "
                     f"{span(res['graphflow_epoch_spread'], ' s', 1)} | "
                     f"{span(res['dgl_epoch_spread'], ' s', 1)} | "
                     f"{span(res[ratio_key], 'x')} |")
    return "\n".join(lines)


def sampling(recs: list[dict[str, Any]]) -> str:
    """Sampled GraphSAGE training, whole epochs of both peers (``train_speedup_spread``)."""
    return _epochs_table([r for r in recs if "train_speedup_spread" in r["result"]],
                         "train_speedup_spread", "train_batches")


def linkpred(recs: list[dict[str, Any]]) -> str:
    """Sampled link prediction, whole epochs of both peers (``epoch_ratio_spread``)."""
    return _epochs_table([r for r in recs if "epoch_ratio_spread" in r["result"]],
                         "epoch_ratio_spread", "batches_per_epoch")


def kge(recs: list[dict[str, Any]]) -> str:
    """Knowledge-graph embeddings against PyKEEN: seconds per epoch and the filtered test MRR
    after the last epoch of each side."""
    lines = ["| CPU | run | model, dim, negatives, batch, epochs | graphflow epoch s | "
             "PyKEEN epoch s | PyKEEN / graphflow | filtered test MRR (graphflow / PyKEEN) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        st, sp = res["settings"], res["epoch_spread"]
        lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {st['model']}, {st['dim']}, "
                     f"{st['negatives']}, {st['batch']}, {st['epochs']} | "
                     f"{span(sp['graphflow'], ' s', 1)} | {span(sp['pykeen'], ' s', 1)} | "
                     f"{span(res['ratio_spread'], 'x')} | {res['mrr']['graphflow'][-1]:.4f} / "
                     f"{res['mrr']['pykeen'][-1]:.4f} |")
    return "\n".join(lines)


PEERS = {"dgl_gensim": "DGL + gensim", "pecanpy_gensim": "PecanPy + gensim"}


def _node2vec_rows(res: dict[str, Any]) -> list[tuple[Any, ...]]:
    """(case key, case text, peer key, graphflow macro-F1 runs, peer's, graphflow end-to-end
    seconds, peer's) of every case and peer in one node2vec result; ``sbm`` and ``dense``
    add each side's one walk time to each of its trainings."""
    rows = []
    for case in ("sbm", "dense"):
        if f"{case}_ratio" not in res:
            continue
        totals = {side: [res[f"{case}_{side}_walk_s"] + t
                         for t in res[f"{case}_{side}_train_s_runs"]]
                  for side in ("graphflow", *PEERS)}
        text = f"{case} ({res[f'{case}_nodes']:,} nodes), {res[f'{case}_train_workers']}"
        for peer in PEERS:
            rows.append((case, text, peer, res[f"{case}_graphflow_macro_f1_runs"],
                         res[f"{case}_{peer}_macro_f1_runs"], totals["graphflow"],
                         totals[peer]))
    for w in sorted(int(k[len("social_w"):-len("_ratio_spread")]) for k in res
                    if k.startswith("social_w") and k.endswith("_ratio_spread")):
        pre = f"social_w{w}"
        rows.append((pre, f"social ({res['social_nodes']:,} nodes), {w}", "pecanpy_gensim",
                     res[f"{pre}_graphflow_macro_f1_runs"],
                     res[f"{pre}_pecanpy_gensim_macro_f1_runs"],
                     res[f"{pre}_graphflow_total_s_runs"],
                     res[f"{pre}_pecanpy_gensim_total_s_runs"]))
    return rows


def node2vec(recs: list[dict[str, Any]]) -> str:
    """Node2Vec end to end against DGL / PecanPy walks + gensim: per case and peer, macro-F1
    and end-to-end seconds of each side (median, least-largest over the trainings: ``sbm`` and
    ``dense`` train each side's one walk set with several training seeds, ``social`` runs each
    side end to end once per seed), and the ratio of the medians (range over the pairs)."""
    lines = ["| CPU | run | case, workers | peer | graphflow macro-F1 | peer macro-F1 | "
             "graphflow s | peer s | peer / graphflow |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        for _, text, peer, ours_f1, peer_f1, ours_s, peer_s in _node2vec_rows(r["result"]):
            lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {text} | "
                         f"{PEERS[peer]} | {span(records.spread(ours_f1), '', 4)} | "
                         f"{span(records.spread(peer_f1), '', 4)} | "
                         f"{span(records.spread(ours_s), ' s', 1)} | "
                         f"{span(records.spread(peer_s), ' s', 1)} | "
                         f"{span(records.ratio_spread(peer_s, ours_s), 'x')} |")
    return "\n".join(lines)


def node2vec_walks(recs: list[dict[str, Any]]) -> str:
    """Node2Vec's biased walks (and the uniform ones) against DGL's samplers: each side's steps
    a second (median, least-largest over the alternating repetitions) and graphflow's rate
    over DGL's (the medians' ratio, range over the repetitions' pairs)."""
    lines = ["| CPU | run | graph, walkers, threads | walks | graphflow M steps/s | "
             "DGL M steps/s | graphflow / DGL |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        graph = (f"R-MAT {res['walk_graph_nodes']:,} nodes, {res['walk_graph_edges']:,} "
                 f"directed edges; {res['walk_seeds']:,} walkers of 80 steps; "
                 f"{res['walk_threads']} threads")
        for kind, text in (("biased", "biased, p = 0.25, q = 4"), ("uniform", "uniform")):
            ours = [v / 1e6 for v in res[f"{kind}_steps_per_s_runs"]]
            theirs = [v / 1e6 for v in res[f"dgl_{kind}_steps_per_s_runs"]]
            lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {graph} | {text} | "
                         f"{span(records.spread(ours), '', 2)} | "
                         f"{span(records.spread(theirs), '', 2)} | "
                         f"{span(res[f'{kind}_ratio_spread'], 'x')} |")
    return "\n".join(lines)


def gcn(recs: list[dict[str, Any]]) -> str:
    """Full-batch GCN epochs against DGL's ``GraphConv`` (or PyG's ``GCNConv``): per graph,
    each side's milliseconds (median, least-largest over the alternating epochs) and the
    ratios, with graphflow's sparse first-layer input and with the peer's dense one."""
    lines = ["| CPU | run | graph | threads | graphflow ms | graphflow, dense input ms | "
             "peer | peer ms | peer / graphflow | peer / graphflow, dense input |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        for g in res["results"]:
            peer, sp = g["peer"], g["spread_ms"]
            dense = sp.get("graphflow_dense")
            vs_dense = g["ratios"].get(f"{peer}/graphflow_dense")
            lines.append(
                f"| {cpu_text(r['machine'])} | {provenance(r)} | {g['graph']} "
                f"({g['nodes']:,} nodes, {g['edges']:,} edges) | {res['threads']} | "
                f"{span(sp['graphflow'], '', 2)} ({g['inputs']['graphflow']}) | "
                f"{span(dense, '', 2) if dense else '-'} | {peer} | "
                f"{span(sp[peer], '', 2)} | {span(g['ratios'][f'{peer}/graphflow'], 'x')} | "
                f"{span(vs_dense, 'x') if vs_dense else '-'} |")
    return "\n".join(lines)


def molecules(recs: list[dict[str, Any]]) -> str:
    """OGB's molecule GIN in graphflow against OGB's example code on DGL: seconds per epoch
    (median, least-largest over the alternating epochs), their ratio and each side's test
    ROC-AUC at its best validation epoch."""
    lines = ["| CPU | run | data, molecules, epochs, threads | graphflow epoch s | "
             "OGB's GIN on DGL epoch s | DGL / graphflow | test ROC-AUC (graphflow / DGL) |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        sp = res["epoch_s"]
        lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | "
                     f"{Path(res['data']).name}, {res['molecules']:,}, {res['epochs']}, "
                     f"{res['threads']} | {span(sp['graphflow'], ' s', 2)} | "
                     f"{span(sp['peer'], ' s', 2)} | {span(res['ratio'], 'x')} | "
                     f"{res['test_rocauc']['graphflow']:.3f} / {res['test_rocauc']['peer']:.3f} |")
    return "\n".join(lines)


def _size(n: int) -> str:
    """A count in a few characters: 2,708; 10.3k; 200k; 4M; 1.33M."""
    return (f"{n / 1e6:.3g}M" if n >= 1_000_000 else f"{n / 1e3:.3g}k" if n >= 10_000
            else f"{n:,}")


def _capped(r: dict[str, Any]) -> bool:
    return any(k in r["machine"].get("caps", {}) for k in ISA_CAPS)


def _newest(recs: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]
            ) -> list[dict[str, Any]]:
    """The newest record of each sub-case (``key``; None: not a case of this table), in the
    order of the keys."""
    newest: dict[Any, dict[str, Any]] = {}
    for r in recs:  # oldest first
        k = key(r)
        if k is not None:
            newest[k] = r
    return [newest[k] for k in sorted(newest)]


Case = tuple[str, dict[str, Any], str]
"""(label, record, figures) of one sub-case of a headline row."""

GCN_PEERS = {"dgl": "DGL `GraphConv`", "pyg": "PyG `GCNConv`"}


def _gcn_cases(recs: list[dict[str, Any]]) -> list[Case]:
    newest: dict[tuple[str, str, str], tuple[dict[str, Any], dict[str, Any]]] = {}
    for r in recs:
        for g in r["result"]["results"]:
            newest[(g["graph"], g["peer"], g.get("device", "cpu"))] = (r, g)
    cases = []
    for (graph, peer, device), (r, g) in newest.items():
        text = span(g["ratios"][f"{peer}/graphflow"], "x")
        dense = g["ratios"].get(f"{peer}/graphflow_dense")
        if dense and g["inputs"]["graphflow"] != "dense":
            text += f", {span(dense, 'x')} with graphflow on the peer's dense input"
        where = "" if device == "cpu" else (
            f" on {device}" + (", HARDWARE COMPARISON" if g.get("hardware_comparison") else ""))
        cases.append((f"{graph} ({_size(g['nodes'])} nodes){where} against "
                      f"{GCN_PEERS.get(peer, peer)}", r, text))
    return cases


def _epoch_cases(ratio_key: str) -> Callable[[list[dict[str, Any]]], list[Case]]:
    """Sampled training (``sampling``, ``linkpred``): the newest record of each graph size,
    thread count and instruction set (native, or the ISA caps), both sides in the same
    arithmetic (a record of graphflow in bfloat16 against the peer in float32 is in the full
    table only)."""
    def key(r: dict[str, Any]) -> Any:
        res = r["result"]
        prec = res.get("precision", {})
        if ratio_key not in res or len(set(prec.values())) > 1:
            return None
        return (res.get("nodes", 0), res.get("edges", 0), res.get("threads", 0), _capped(r))

    def cases(recs: list[dict[str, Any]]) -> list[Case]:
        out: list[Case] = []
        for r in _newest(recs, key):
            res = r["result"]
            prec = set(res.get("precision", {"graphflow": "fp32"}).values()).pop()
            label = (f"{_size(res['nodes'])} nodes, {_size(res['edges'])} edges, "
                     f"{res.get('threads', '?')} threads, {prec}")
            if _capped(r) and out and out[-1][0] == label:  # the native case just before
                label = "the same with the AVX2 caps"
            elif _capped(r):
                label += ", AVX2 caps"
            out.append((label, r, span(res[ratio_key], "x")))
        return out
    return cases


def _node2vec_cases(recs: list[dict[str, Any]]) -> list[Case]:
    """Each case (sbm, dense, social per worker count) from its newest record, against the
    peer that was faster there end to end, with both sides' median macro-F1."""
    newest: dict[str, dict[str, Any]] = {}
    for r in recs:
        for case in dict.fromkeys(row[0] for row in _node2vec_rows(r["result"])):
            newest[case] = r
    cases = []
    for case, r in sorted(newest.items(), key=lambda kv: (
            ["sbm", "dense"].index(kv[0]) if kv[0] in ("sbm", "dense") else 2,
            int(kv[0][len("social_w"):]) if kv[0].startswith("social_w") else 0)):
        rows = [row for row in _node2vec_rows(r["result"]) if row[0] == case]
        _, text, peer, ours_f1, peer_f1, ours_s, peer_s = min(
            rows, key=lambda row: records.spread(row[6])["median"])
        res = r["result"]
        nodes = res["social_nodes" if case.startswith("social") else f"{case}_nodes"]
        workers = int(text.rsplit(", ", 1)[1])
        cases.append((f"{case.split('_')[0]} ({_size(nodes)} nodes, {workers} "
                      f"worker{'s' if workers != 1 else ''}) "
                      f"against {PEERS[peer]}", r,
                      f"{span(records.ratio_spread(peer_s, ours_s), 'x')}, macro-F1 "
                      f"{records.spread(ours_f1)['median']:.3f} vs "
                      f"{records.spread(peer_f1)['median']:.3f}"))
    return cases


def _gin_cases(recs: list[dict[str, Any]]) -> list[Case]:
    def key(r: dict[str, Any]) -> Any:
        res = r["result"]
        if "ratio_spread" not in res:
            return None
        return (res["graphs"], tuple(res["graph_nodes"]), res.get("model", "gin"),
                res.get("edge_features", 0), res["threads"], res["batch_size"])

    cases = []
    for r in _newest(recs, key):
        res = r["result"]
        lo, hi = res["graph_nodes"]
        model = res.get("model", "gin").upper()
        edges = (f", {res['edge_features']} edge types" if res.get("edge_features") else "")
        cases.append((f"{model}, {_size(res['graphs'])} graphs of {lo}-{hi} nodes{edges}, "
                      f"batch {res['batch_size']}, {res['threads']} threads", r,
                      span(res["ratio_spread"], "x")))
    return cases


def _molecule_cases(recs: list[dict[str, Any]]) -> list[Case]:
    cases = []
    for r in _newest(recs, lambda r: (Path(r["result"]["data"]).name, r["result"]["threads"])):
        res = r["result"]
        auc = res["test_rocauc"]
        cases.append((f"{Path(res['data']).stem.upper()}, {res['molecules']:,} molecules, "
                      f"{res['threads']} thread{'s' if res['threads'] != 1 else ''}", r,
                      f"{span(res['ratio'], 'x')}, test ROC-AUC {auc['graphflow']:.3f} vs "
                      f"{auc['peer']:.3f}"))
    return cases


def _kge_cases(recs: list[dict[str, Any]]) -> list[Case]:
    def key(r: dict[str, Any]) -> Any:
        st = r["result"]["settings"]
        return (r["result"].get("data", "?"), st["model"], st["dim"])

    cases = []
    for r in _newest(recs, key):
        res, st = r["result"], r["result"]["settings"]
        cases.append((f"{str(res.get('data', '?')).upper()}, {st['model']}, dim {st['dim']}", r,
                      f"{span(res['ratio_spread'], 'x')}, filtered test MRR "
                      f"{res['mrr']['graphflow'][-1]:.3f} vs {res['mrr']['pykeen'][-1]:.3f} "
                      f"after {st['epochs']} epochs"))
    return cases


HEADLINE: tuple[tuple[str, str, Callable[[list[dict[str, Any]]], list[Case]], str], ...] = (
    ("gcn", "full-batch GCN, an epoch", _gcn_cases, "docs/sparse.md"),
    ("sampling", "sampled GraphSAGE, whole epochs, against a DGL `DataLoader` + `SAGEConv` "
     "script", _epoch_cases("train_speedup_spread"), "docs/sampling.md"),
    ("linkpred", "sampled link prediction, whole epochs, against DGL's edge-prediction recipe",
     _epoch_cases("epoch_ratio_spread"), "docs/link_prediction.md"),
    ("node2vec", "Node2Vec, walks + skip-gram end to end", _node2vec_cases,
     "docs/node2vec.md"),
    ("graph_classification", "graph classification, whole epochs, against DGL's "
     "`GraphDataLoader` + `GINConv` recipe", _gin_cases, "docs/graph_classification.md"),
    ("molecules", "OGB's molecule GIN, an epoch, against OGB's example code on DGL",
     _molecule_cases, "docs/molecules.md"),
    ("kge", "knowledge-graph embeddings, an epoch, against PyKEEN", _kge_cases,
     "docs/knowledge_graphs.md"),
)
"""The README's speed table: (benchmark, workload, its sub-cases from its records, the page
holding the benchmark's full table)."""


def _env_command(r: dict[str, Any]) -> str:
    caps = r["machine"].get("caps", {})
    env = " ".join(f"{k}={caps[k]}" for k in ISA_CAPS if k in caps)
    return f"`{(env + ' ') if env else ''}{r['command']}`"


def headline(folder: Path | None = None) -> str:
    """One row per benchmark of :data:`HEADLINE` with records: each sub-case from its newest
    record, graphflow's median ratio against the peer (the peer's time over graphflow's) with
    its range over the epoch pairs or seeds and their count; the CPUs (their caps in the
    command), the commands and the page with every record. A benchmark without records has no
    row."""
    lines = ["| workload | graphflow against its peer: median (range, n) | CPU | command | "
             "every record |",
             "| --- | --- | --- | --- | --- |"]
    for name, workload, cases_of, page in HEADLINE:
        recs = records.read(name, folder)
        cases = cases_of(recs) if recs else []
        if not cases:
            continue
        peers = {label.rpartition(" against ")[2] for label, _, _ in cases}
        if len(peers) == 1 and " against " in cases[0][0]:  # one peer: named once
            workload += f", against {peers.pop()}"
            cases = [(label.rpartition(" against ")[0], r, text) for label, r, text in cases]
        cpus = dict.fromkeys(cpu_text({**r["machine"], "caps": {}}) for _, r, _ in cases)
        commands = dict.fromkeys(_env_command(r) for _, r, _ in cases)
        figures = "; ".join(f"{label}: {text}" for label, _, text in cases)
        lines.append(f"| {workload} | {figures} | {'; '.join(cpus)} | "
                     f"{'; '.join(commands)} | [{page}]({page}) |")
    if len(lines) == 2:
        raise LookupError("no records of any headline benchmark under benchmarks/results/")
    return "\n".join(lines)


SUMMARY: dict[str, Callable[[Path | None], str]] = {"headline": headline}
"""Tables drawn from the records of several benchmarks: name -> its table from the records
under a folder."""


RENDER: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "graph_classification": graph_classification,
    "graph_classification_quality": graph_classification_quality,
    "matrix": matrix,
    "sampling": sampling,
    "linkpred": linkpred,
    "kge": kge,
    "node2vec": node2vec,
    "node2vec_walks": node2vec_walks,
    "gcn": gcn,
    "molecules": molecules,
}
"""Benchmark name -> its table from its records."""


def pages(root: Path = REPO) -> list[Path]:
    found = []
    for entry in PAGES:
        path = root / entry
        found += sorted(path.rglob("*.md")) if path.is_dir() else [path] if path.exists() \
            else []
    return found


def render(name: str, folder: Path | None = None) -> str:
    if name in SUMMARY:
        return SUMMARY[name](folder)
    if name not in RENDER:
        raise KeyError(f"no table for benchmark {name!r}; known: "
                       f"{', '.join([*RENDER, *SUMMARY])}")
    recs = records.read(name, folder)
    if not recs:
        raise LookupError(f"no records of {name} under benchmarks/results/{name}/: run it "
                          f"with --record")
    return RENDER[name](recs)


def regenerate(text: str, folder: Path | None = None) -> str:
    return BLOCK.sub(lambda m: m.group(1) + render(m.group("name"), folder) + "\n"
                     + m.group(4), text)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--check", action="store_true",
                   help="change nothing; exit 1 when a block differs from its records")
    a = p.parse_args(argv)
    stale = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        if "<!-- figures:" not in text:
            continue
        try:
            new = regenerate(text)
        except (KeyError, LookupError) as exc:
            print(f"{page.relative_to(REPO)}: {exc.args[0]}", file=sys.stderr)
            return 1
        if new != text:
            stale.append(page)
            if not a.check:
                page.write_text(new, encoding="utf-8")
    for page in stale:
        print(f"{page.relative_to(REPO)}: "
              f"{'differs from its records' if a.check else 'regenerated'}", file=sys.stderr)
    return 1 if a.check and stale else 0


if __name__ == "__main__":
    raise SystemExit(main())
