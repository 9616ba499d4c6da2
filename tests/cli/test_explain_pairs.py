"""``graphflow explain --pairs``: a link prediction bundle's pair scores explained end to end."""

from __future__ import annotations

import json

import pyarrow.csv as pcsv
import pytest

LINKS = """
[pipeline]
name = "links"
seed = 0

[load]
type = "synthetic"
kind = "ba_shapes"
motifs = 10
features = 4

[[transform]]
type = "link_split"
val = 0.1
test = 0.1

[model]
type = "gcn"
layers = 2
hidden = 8

[train]
type = "link_prediction"
epochs = 2

[explain]                 # the stage explains pairs too
pairs = "pairs.csv"
epochs = 3
"""


@pytest.fixture(scope="module")
def link_run(tmp_path_factory):
    from graphflow.cli.main import main

    tmp = tmp_path_factory.mktemp("links")
    (tmp / "p.toml").write_text(LINKS)
    (tmp / "pairs.csv").write_text("src,dst\n300,301\n")
    assert main(["run", str(tmp / "p.toml"), "--out-dir", str(tmp / "run"), "--quiet"]) == 0
    return tmp


def test_pairs_of_a_link_model_are_explained(link_run, cli, tmp_path):
    from graphflow.compat.dgl import dgl
    import torch

    from graphflow.io.motifs import ba_shapes

    (tmp_path / "pairs.txt").write_text("300 301\n0 305\n")
    code, out, err = cli("explain", link_run / "run", "--data", link_run / "p.toml", "--pairs",
                         tmp_path / "pairs.txt", "--epochs", "5", "--format", "csv",
                         "--top-k", "3", "--out", tmp_path / "ex")
    assert code == 0, err
    assert "explained 2 pairs with gnnexplainer" in out
    edges = pcsv.read_csv(tmp_path / "ex" / "edges.csv").to_pydict()
    assert set(edges["target"]) == {"300->301", "0->305"}
    assert set(zip(edges["src_target"], edges["dst_target"])) == {(300, 301), (0, 305)}
    assert all(0.0 <= v <= 1.0 for v in edges["importance"]) and sum(edges["top_k"]) == 6
    # a 2-layer encoder: the pair's edges lie within 2 hops (in-edges) of its endpoints
    g = ba_shapes(motifs=10)
    graph = dgl.graph((g.src, g.dst), num_nodes=g.num_nodes)
    near = torch.unique(torch.cat([graph.in_edges(torch.tensor([300, 301]))[0],
                                   torch.tensor([300, 301])]))
    pair = [(s, d) for t, s, d in zip(edges["target"], edges["src"], edges["dst"])
            if t == "300->301"]
    assert pair and all(d in set(near.tolist()) for _, d in pair)
    assert any(d == 300 for _, d in pair) and any(d == 301 for _, d in pair)
    feats = pcsv.read_csv(tmp_path / "ex" / "features.csv").to_pydict()
    assert len(feats["importance"]) == 2 * 4
    summary = json.loads((tmp_path / "ex" / "explain.json").read_text())
    assert summary["level"] == "link" and summary["targets"] == 2
    assert 0.0 <= summary["fidelity_plus"] <= 1.0


def test_the_explain_stage_explains_pairs(link_run):
    import pyarrow.parquet as pq

    table = pq.read_table(link_run / "run" / "explain" / "edges.parquet").to_pydict()
    assert set(table["target"]) == {"300->301"} and all(0 <= v <= 1 for v in table["importance"])
    record = json.loads((link_run / "run" / "run.json").read_text())
    assert record["stages"][-1]["section"] == "explain"
    assert record["reports"]["explain"]["level"] == "link"


def test_pgexplainer_and_nodes_are_refused_for_a_link_model(link_run, cli, tmp_path):
    (tmp_path / "pairs.csv").write_text("src,dst\n300,301\n")
    code, out, err = cli("explain", link_run / "run", "--data", link_run / "p.toml", "--pairs",
                         tmp_path / "pairs.csv", "--method", "pgexplainer",
                         "--out", tmp_path / "ex")
    assert code == 1 and "--method pgexplainer cannot explain a link model; methods that " \
                         "can: gnnexplainer, ig, saliency" in err
    assert len(err.strip().splitlines()) == 1
    (tmp_path / "nodes.txt").write_text("300\n")
    code, out, err = cli("explain", link_run / "run", "--data", link_run / "p.toml", "--nodes",
                         tmp_path / "nodes.txt", "--out", tmp_path / "ex")
    assert code == 1 and "is a link model; name the node pairs to explain with --pairs" in err
    (tmp_path / "bad.csv").write_text("src,dst\n300,99999\n")
    code, out, err = cli("explain", link_run / "run", "--data", link_run / "p.toml", "--pairs",
                         tmp_path / "bad.csv", "--out", tmp_path / "ex")
    assert code == 1 and "99999" in err and "Traceback" not in err
