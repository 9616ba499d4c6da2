"""benchmarks/figures.py: the figure tables in the README and docs are generated from the
benchmark records, and a table that differs from its records fails."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchmarks import figures, records  # noqa: E402


def test_every_figure_block_in_the_docs_equals_its_records():
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "figures.py"), "--check"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr


def _gin_record(folder: Path) -> None:
    times = {"graphflow": [10.0, 12.0, 11.0], "dgl": [20.0, 21.0, 23.0]}
    result = {"threads": 2, "batch_size": 32, "epoch_s_all": times,
              "epoch_s_spread": {k: records.spread(v) for k, v in times.items()},
              "ratio_spread": records.ratio_spread(times["dgl"], times["graphflow"]),
              "ratio": 21.0 / 11.0}
    records.write("graph_classification", result, load_before=0.1, folder=folder,
                  argv=[str(ROOT / "benchmarks" / "graph_classification.py")])


def test_a_block_is_regenerated_from_the_records_and_stale_text_is_replaced(tmp_path):
    _gin_record(tmp_path)
    page = ("intro\n<!-- figures: graph_classification -->\n| typed by hand | 9.99x |\n"
            "<!-- /figures -->\nafter\n")
    new = figures.regenerate(page, tmp_path)
    assert "9.99x" not in new and new.startswith("intro\n") and new.endswith("after\n")
    assert "11.0 s (10.0-12.0, n=3)" in new and "21.0 s (20.0-23.0, n=3)" in new
    assert "1.91x (1.75-2.09, n=3)" in new  # the medians' ratio, and the pairs' range
    assert "`python benchmarks/graph_classification.py`" in new
    assert figures.regenerate(new, tmp_path) == new  # stable


def test_a_block_without_records_or_renderer_is_an_error(tmp_path):
    with pytest.raises(LookupError, match="no records of graph_classification"):
        figures.regenerate("<!-- figures: graph_classification -->\nx\n<!-- /figures -->",
                           tmp_path)
    with pytest.raises(KeyError, match="no table for benchmark 'nope'"):
        figures.regenerate("<!-- figures: nope -->\nx\n<!-- /figures -->", tmp_path)


def test_sampled_training_records_give_their_epochs_and_ratio(tmp_path):
    ours, theirs = [10.0, 12.0], [15.0, 20.0]
    result = {"threads": 2, "precision": {"graphflow": "bf16-mixed", "dgl": "fp32"},
              "train_batches": 196, "graphflow_epoch_s": ours, "dgl_epoch_s": theirs,
              "graphflow_epoch_spread": records.spread(ours),
              "dgl_epoch_spread": records.spread(theirs),
              "train_speedup_spread": records.ratio_spread(theirs, ours)}
    records.write("sampling", result, load_before=0.2, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "sampling.py"), "--quick"])
    table = figures.render("sampling", tmp_path)
    assert "| 2, bf16-mixed / fp32 | 196 |" in table
    assert "11.0 s (10.0-12.0, n=2)" in table and "1.59x (1.50-1.67, n=2)" in table


def test_quality_records_give_each_seeds_figure_and_the_mean(tmp_path):
    def fig(acc, epoch):
        return {"gin_acc": acc, "std": 0.05, "epoch": epoch, "last_epoch_acc": acc}

    quality = {"mutag": {"graphs": 188, "epochs": 100, "lr_step": 50,
                         "seeds": {"0": {"graphflow": fig(0.9, 40), "dgl": fig(0.88, 61)},
                                   "1": {"graphflow": fig(0.86, 12), "dgl": fig(0.87, 7)}},
                         "mean": {"graphflow": {"mean": 0.88, "min": 0.86, "max": 0.9},
                                  "dgl": {"mean": 0.875, "min": 0.87, "max": 0.88}}}}
    records.write("graph_classification_quality", {"threads": 1, "quality": quality},
                  load_before=0.3, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "graph_classification.py"), "--skip-speed"])
    table = figures.render("graph_classification_quality", tmp_path).splitlines()
    rows = table[2:4]
    assert "--skip-speed" in rows[0] and "--skip-speed" not in rows[1]
    assert "| mutag (100, 50) | dgl | 0,1 (2) | **0.875** (0.870-0.880) |" in table
    assert "| mutag (100, 50) | graphflow | 0,1 (2) | **0.880** (0.860-0.900) |" in table
    assert "| mutag (100, 50) | graphflow | 0: 0.900 ± 0.050 (40); 1: 0.860 ± 0.050 (12) | " \
        "**0.880** (0.860-0.900) |" in rows[0]
    assert rows[1].endswith("| dgl | 0: 0.880 ± 0.050 (61); 1: 0.870 ± 0.050 (7) | "
                            "**0.875** (0.870-0.880) |")


def test_kge_records_give_each_sides_epochs_ratio_and_last_mrr(tmp_path):
    times = {"graphflow": [10.0, 12.0], "pykeen": [30.0, 30.0]}
    result = {"settings": {"model": "distmult", "dim": 200, "negatives": 64, "batch": 1000,
                           "lr": 0.1, "epochs": 2, "seed": 0},
              "mrr": {"graphflow": [0.3, 0.41], "pykeen": [0.2, 0.39]},
              "epoch_spread": {k: records.spread(v) for k, v in times.items()},
              "ratio_spread": records.ratio_spread(times["pykeen"], times["graphflow"])}
    records.write("kge", result, load_before=0.1, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "kge.py")])
    row = figures.render("kge", tmp_path).splitlines()[2]
    assert "| distmult, 200, 64, 1000, 2 | 11.0 s (10.0-12.0, n=2) | 30.0 s (30.0-30.0, n=2) " \
        "| 2.73x (2.50-3.00, n=2) | 0.4100 / 0.3900 |" in row


def _node2vec_result() -> dict:
    result = {"social_nodes": 10312, "sbm_nodes": 20000, "sbm_train_workers": 2, "sbm_ratio": 2.0,
              "sbm_graphflow_walk_s": 2.0, "sbm_graphflow_train_s_runs": [8.0, 10.0],
              "sbm_graphflow_macro_f1_runs": [0.78, 0.79]}
    for peer, walk in (("dgl_gensim", 10.0), ("pecanpy_gensim", 4.0)):
        result.update({f"sbm_{peer}_walk_s": walk, f"sbm_{peer}_train_s_runs": [36.0, 36.0],
                       f"sbm_{peer}_macro_f1_runs": [0.77, 0.78]})
    for w, ours, theirs in ((1, [40.0, 44.0, 42.0], [100.0, 110.0, 90.0]),
                            (2, [20.0, 22.0, 21.0], [60.0, 66.0, 63.0])):
        result[f"social_w{w}_graphflow_total_s_runs"] = ours
        result[f"social_w{w}_pecanpy_gensim_total_s_runs"] = theirs
        result[f"social_w{w}_ratio_spread"] = records.ratio_spread(theirs, ours)
        result[f"social_w{w}_graphflow_macro_f1_runs"] = [0.30, 0.29, 0.31]
        result[f"social_w{w}_pecanpy_gensim_macro_f1_runs"] = [0.28, 0.29, 0.285]
    return result


def test_node2vec_records_give_a_row_per_case_peer_and_worker_count(tmp_path):
    records.write("node2vec", _node2vec_result(), load_before=0.1, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "node2vec.py")])
    rows = figures.render("node2vec", tmp_path).splitlines()[2:]
    assert len(rows) == 4
    assert "| sbm (20,000 nodes), 2 | DGL + gensim | 0.7850 (0.7800-0.7900, n=2) | " \
        "0.7750 (0.7700-0.7800, n=2) | 11.0 s (10.0-12.0, n=2) | 46.0 s (46.0-46.0, n=2) | " \
        "4.18x (3.83-4.60, n=2) |" in rows[0]
    assert "| sbm (20,000 nodes), 2 | PecanPy + gensim |" in rows[1]
    assert "| social (10,312 nodes), 2 | PecanPy + gensim | 0.3000 (0.2900-0.3100, n=3) | " \
        "0.2850 (0.2800-0.2900, n=3) | 21.0 s (20.0-22.0, n=3) | 63.0 s (60.0-66.0, n=3) | " \
        "3.00x (3.00-3.00, n=3) |" in rows[3]


def _gcn_record(folder: Path) -> None:
    ours, dense, dgl = [1.0, 1.2, 1.1], [2.0, 2.0, 2.0], [4.0, 4.4, 4.2]
    cora = {"graph": "cora", "nodes": 2708, "edges": 13264, "peer": "dgl",
            "inputs": {"graphflow": "sparse", "graphflow_dense": "dense", "dgl": "dense"},
            "spread_ms": {"graphflow": records.spread(ours), "graphflow_dense": records.spread(dense),
                          "dgl": records.spread(dgl)},
            "ratios": {"dgl/graphflow": records.ratio_spread(dgl, ours),
                       "dgl/graphflow_dense": records.ratio_spread(dgl, dense)}}
    records.write("gcn", {"threads": 2, "results": [cora]}, load_before=0.1, folder=folder,
                  argv=[str(ROOT / "benchmarks" / "gcn.py"), "--quick"])


def test_gcn_records_give_both_inputs_and_their_ratios(tmp_path):
    _gcn_record(tmp_path)
    row = figures.render("gcn", tmp_path).splitlines()[2]
    assert "| cora (2,708 nodes, 13,264 edges) | 2 | 1.10 (1.00-1.20, n=3) (sparse) | " \
        "2.00 (2.00-2.00, n=3) | dgl | 4.20 (4.00-4.40, n=3) | 3.82x (3.67-4.00, n=3) | " \
        "2.10x (2.00-2.20, n=3) |" in row


def _molecules_record(folder: Path) -> None:
    ours, peer = [5.0, 6.0], [7.0, 7.0]
    result = {"data": "/x/bbbp.csv", "molecules": 2039, "epochs": 2, "threads": 1,
              "epoch_s": {"graphflow": records.spread(ours), "peer": records.spread(peer)},
              "ratio": records.ratio_spread(peer, ours),
              "test_rocauc": {"graphflow": 0.7, "peer": 0.69}}
    records.write("molecules", result, load_before=0.1, folder=folder,
                  argv=[str(ROOT / "benchmarks" / "molecules.py")])


def test_molecules_records_give_epochs_ratio_and_roc_auc(tmp_path):
    _molecules_record(tmp_path)
    row = figures.render("molecules", tmp_path).splitlines()[2]
    assert "| bbbp.csv, 2,039, 2, 1 | 5.50 s (5.00-6.00, n=2) | 7.00 s (7.00-7.00, n=2) | " \
        "1.27x (1.17-1.40, n=2) | 0.700 / 0.690 |" in row


CPU = {"model_name": "Test CPU", "vendor": "GenuineIntel", "family": 6, "model": 1,
       "isa": ["avx2", "avx512f"], "cores": 2}
AVX2 = {"ONEDNN_MAX_CPU_ISA": "AVX2", "ATEN_CPU_CAPABILITY": "avx2",
        "MKL_ENABLE_INSTRUCTIONS": "AVX2"}


def _sampling_record(folder: Path, stamp: str, ours: list[float], theirs: list[float],
                     caps: dict | None = None, precision: str = "fp32") -> None:
    result = {"threads": 2, "nodes": 200_000, "edges": 4_000_000, "train_batches": 196,
              "precision": {"graphflow": precision, "dgl": "fp32"},
              "graphflow_epoch_spread": records.spread(ours),
              "dgl_epoch_spread": records.spread(theirs),
              "train_speedup_spread": records.ratio_spread(theirs, ours),
              "machine": {"cpu": CPU, "caps": {"torch_threads": 2, **(caps or {})}}}
    path = records.write("sampling", result, load_before=0.1, folder=folder,
                         argv=[str(ROOT / "benchmarks" / "sampling.py"), "--quick"])
    path.rename(path.with_name(f"{stamp}-{path.name.split('-', 1)[1]}"))  # the order written


def test_the_headline_table_has_a_row_per_benchmark_from_its_newest_records(tmp_path):
    _gcn_record(tmp_path)
    _sampling_record(tmp_path, "20260101T000000Z", [20.0, 20.0], [20.0, 20.0])  # superseded
    _sampling_record(tmp_path, "20260102T000000Z", [10.0, 12.0], [15.0, 20.0])
    _sampling_record(tmp_path, "20260103T000000Z", [10.0, 10.0], [12.0, 13.0], caps=AVX2)
    _sampling_record(tmp_path, "20260104T000000Z", [30.0, 30.0], [15.0, 15.0],
                     precision="bf16-mixed")  # not the same arithmetic: full table only
    node2vec = {**_node2vec_result(), "sbm_dgl_gensim_walk_s": 2.0}  # DGL the faster on sbm
    records.write("node2vec", node2vec, load_before=0.1, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "node2vec.py"), "--record"])
    _molecules_record(tmp_path)
    table = figures.render("headline", tmp_path).splitlines()
    assert table[0].startswith("| workload | graphflow against its peer: median (range, n) | CPU |")
    rows = {row.split(" | ")[0].lstrip("| "): row for row in table[2:]}
    assert len(rows) == 4  # gcn, sampling, node2vec, molecules; no linkpred, GIN or kge records
    gcn = rows["full-batch GCN, an epoch, against DGL `GraphConv`"]
    assert "| cora (2,708 nodes): 3.82x (3.67-4.00, n=3), 2.10x (2.00-2.20, n=3) with graphflow " \
        "on the peer's dense input |" in gcn
    assert gcn.endswith("| `python benchmarks/gcn.py --quick` | [docs/sparse.md](docs/sparse.md) |")
    sage = next(row for name, row in rows.items() if name.startswith("sampled GraphSAGE"))
    assert "| 200k nodes, 4M edges, 2 threads, fp32: 1.59x (1.50-1.67, n=2); the same with the " \
        "AVX2 caps: 1.25x (1.20-1.30, n=2) |" in sage
    assert "Test CPU (family 6 model 1), 2 cores, AVX-512 |" in sage and "; caps" not in sage
    assert "| `python benchmarks/sampling.py --quick`; `ONEDNN_MAX_CPU_ISA=AVX2 " \
        "ATEN_CPU_CAPABILITY=avx2 MKL_ENABLE_INSTRUCTIONS=AVX2 python benchmarks/sampling.py " \
        "--quick` | [docs/sampling.md](docs/sampling.md) |" in sage
    # each case against its faster peer, named in the case where they differ
    assert "| sbm (20k nodes, 2 workers) against DGL + gensim: 3.45x (3.17-3.80, n=2), macro-F1 " \
        "0.785 vs 0.775; social (10.3k nodes, 1 worker) against PecanPy + gensim: 2.38x " \
        "(2.14-2.50, n=3), macro-F1 0.300 vs 0.285; social (10.3k nodes, 2 workers) against " \
        "PecanPy + gensim: 3.00x (3.00-3.00, n=3), macro-F1 0.300 vs 0.285 |" \
        in rows["Node2Vec, walks + skip-gram end to end"]
    assert "| BBBP, 2,039 molecules, 1 thread: 1.27x (1.17-1.40, n=2), test ROC-AUC 0.700 vs " \
        "0.690 |" in rows["OGB's molecule GIN, an epoch, against OGB's example code on DGL"]
    assert figures.regenerate("<!-- figures: headline -->\nold\n<!-- /figures -->",
                              tmp_path).splitlines()[1:-1] == table


def test_the_headline_table_needs_a_record(tmp_path):
    with pytest.raises(LookupError, match="no records of any headline benchmark"):
        figures.render("headline", tmp_path)


def test_each_headline_row_links_the_page_with_its_benchmarks_full_table():
    for name, _, _, page in figures.HEADLINE:
        assert f"<!-- figures: {name} -->" in (ROOT / page).read_text(encoding="utf-8"), page


RATIO = re.compile(r"(?<![\w.])\d+\.\d+(?:-\d+\.\d+)?[x×](?!\w)")
"""A speed ratio as the pages write one: a decimal number, or range, with ``x`` or ``×`` right
after it (``1.51x``, ``1.48-1.55x``, ``0.98×``). Whole numbers (``2x``) and a spaced ``×`` (a
formula) are not taken for one."""

ALLOWED = {
    ("docs/cores.md", "below 0.95x torch's"):
        "the calibration's margin (graphflow.runtime.calibrate.ONEDNN_MARGIN), a rule",
    ("docs/performance.md", "at least 1.5x DGL end to end"): "the project's goal",
    ("docs/performance.md", "the time 1.5x DGL's batch leaves graphflow"):
        "what batch_parts.py prints against the goal",
    ("docs/node2vec.md", "hubs get 1.4x their degree's share of tokens"):
        "a share of the noise distribution, not a speed",
}
"""(page, exact phrase): why a ratio in that phrase is no measured figure."""


def typed_ratios(text: str, allowed: list[str] = ()) -> list[tuple[int, str]]:
    """(line, ratio) of every ratio outside the generated blocks and the allowed phrases."""
    spans = [m.span() for m in figures.BLOCK.finditer(text)]
    spans += [(m.start(), m.end()) for phrase in allowed
              for m in re.finditer(re.escape(phrase), text)]
    return [(text.count("\n", 0, m.start()) + 1, m.group(0)) for m in RATIO.finditer(text)
            if not any(a <= m.start() < b for a, b in spans)]


def test_the_ratio_rule_finds_typed_ratios_outside_blocks_and_allowed_phrases():
    page = ("led by 1.51x (1.48-1.55x over pairs), 0.98× bf16 and 1.7x-2.6x there\n"
            "<!-- figures: sampling -->\n| 1.49x (1.47-1.53, n=4) |\n<!-- /figures -->\n"
            "`below_1.5x`, about 2x, `1.5 × bound + 10`, v1.2x3, at least 1.5x DGL\n")
    assert typed_ratios(page, ["at least 1.5x DGL"]) == [
        (1, "1.51x"), (1, "1.48-1.55x"), (1, "0.98×"), (1, "1.7x"), (1, "2.6x")]


def test_no_speed_ratio_is_typed_outside_a_generated_block():
    found = []
    for page in figures.pages(ROOT):
        name = page.relative_to(ROOT).as_posix()
        allowed = [phrase for p, phrase in ALLOWED if p == name]
        found += [f"{name}:{line}: {ratio}" for line, ratio in
                  typed_ratios(page.read_text(encoding="utf-8"), allowed)]
    assert not found, ("speed ratios typed by hand: record the run (--record) and put the figure "
                       "in a generated block (benchmarks/figures.py), or remove it:\n"
                       + "\n".join(found))


def test_every_allowed_phrase_is_still_on_its_page():
    for page, phrase in ALLOWED:
        assert phrase in (ROOT / page).read_text(encoding="utf-8"), \
            f"{page} no longer says {phrase!r}: drop it from ALLOWED"


def test_walk_records_give_each_sides_rate_and_the_ratio(tmp_path):
    result = {"walk_graph_nodes": 1000, "walk_graph_edges": 8000, "walk_seeds": 500,
              "walk_threads": 2}
    for kind, ours, theirs in (("biased", [30e6, 34e6, 32e6], [3e6, 4e6, 2e6]),
                               ("uniform", [90e6, 80e6, 100e6], [20e6, 20e6, 25e6])):
        result[f"{kind}_steps_per_s_runs"] = ours
        result[f"dgl_{kind}_steps_per_s_runs"] = theirs
        result[f"{kind}_ratio_spread"] = records.ratio_spread([1e6 / v for v in theirs],
                                                              [1e6 / v for v in ours])
    records.write("node2vec_walks", result, load_before=0.1, folder=tmp_path,
                  argv=[str(ROOT / "benchmarks" / "node2vec.py"), "--skip-e2e", "--record"])
    table = figures.render("node2vec_walks", tmp_path)
    biased = next(line for line in table.splitlines() if "| biased" in line)
    assert "32.00 (30.00-34.00, n=3) | 3.00 (2.00-4.00, n=3) | 10.67x (8.50-16.00, n=3)" \
        in biased
    assert "500 walkers of 80 steps; 2 threads" in biased
    assert "`python benchmarks/node2vec.py --skip-e2e --record`" in biased
