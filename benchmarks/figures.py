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
before the run, and the figures as medians with their least and largest repetition.
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


def cpu_text(machine: dict[str, Any]) -> str:
    cpu = machine.get("cpu", {})
    isa = cpu.get("isa", [])
    width = "AVX-512" if any(f.startswith("avx512") for f in isa) else "AVX2" \
        if "avx2" in isa else "no AVX2"
    bf16 = ", BF16" if any("bf16" in f for f in isa) else ""
    amx = ", AMX" if any(f.startswith("amx") for f in isa) else ""
    caps = machine.get("caps", {})
    capped = [f"{k}={caps[k]}" for k in ("ONEDNN_MAX_CPU_ISA", "ATEN_CPU_CAPABILITY",
                                         "MKL_ENABLE_INSTRUCTIONS") if k in caps]
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


def node2vec(recs: list[dict[str, Any]]) -> str:
    """Node2Vec end to end against DGL / PecanPy walks + gensim: per case and peer, macro-F1
    and end-to-end seconds of each side (median, least-largest over the trainings: ``sbm`` and
    ``dense`` train each side's one walk set with several training seeds, ``social`` runs each
    side end to end once per seed), and the ratio of the medians (range over the pairs)."""
    lines = ["| CPU | run | case, workers | peer | graphflow macro-F1 | peer macro-F1 | "
             "graphflow s | peer s | peer / graphflow |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in reversed(recs):
        res = r["result"]
        rows = []  # (case text, peer key, ours f1, peer f1, ours s, peer s)
        for case in ("sbm", "dense"):
            if f"{case}_ratio" not in res:
                continue
            totals = {side: [res[f"{case}_{side}_walk_s"] + t
                             for t in res[f"{case}_{side}_train_s_runs"]]
                      for side in ("graphflow", *PEERS)}
            text = (f"{case} ({res[f'{case}_nodes']:,} nodes), "
                    f"{res[f'{case}_train_workers']}")
            for peer in PEERS:
                rows.append((text, peer, res[f"{case}_graphflow_macro_f1_runs"],
                             res[f"{case}_{peer}_macro_f1_runs"], totals["graphflow"],
                             totals[peer]))
        for w in sorted(int(k[len("social_w"):-len("_ratio_spread")]) for k in res
                        if k.startswith("social_w") and k.endswith("_ratio_spread")):
            pre = f"social_w{w}"
            rows.append((f"social ({res['social_nodes']:,} nodes), {w}", "pecanpy_gensim",
                         res[f"{pre}_graphflow_macro_f1_runs"],
                         res[f"{pre}_pecanpy_gensim_macro_f1_runs"],
                         res[f"{pre}_graphflow_total_s_runs"],
                         res[f"{pre}_pecanpy_gensim_total_s_runs"]))
        for text, peer, ours_f1, peer_f1, ours_s, peer_s in rows:
            lines.append(f"| {cpu_text(r['machine'])} | {provenance(r)} | {text} | "
                         f"{PEERS[peer]} | {span(records.spread(ours_f1), '', 4)} | "
                         f"{span(records.spread(peer_f1), '', 4)} | "
                         f"{span(records.spread(ours_s), ' s', 1)} | "
                         f"{span(records.spread(peer_s), ' s', 1)} | "
                         f"{span(records.ratio_spread(peer_s, ours_s), 'x')} |")
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


RENDER: dict[str, Callable[[list[dict[str, Any]]], str]] = {
    "graph_classification": graph_classification,
    "graph_classification_quality": graph_classification_quality,
    "matrix": matrix,
    "sampling": sampling,
    "linkpred": linkpred,
    "kge": kge,
    "node2vec": node2vec,
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
    if name not in RENDER:
        raise KeyError(f"no table for benchmark {name!r}; known: {', '.join(RENDER)}")
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
