"""The embedding_eval task: link prediction without leaks, classification paths, clear errors."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.embeddings.evaluation import EvalOptions, evaluate_embeddings

SBM = """
[pipeline]
seed = 2

[load]
type = "{kind}"
nodes = 300
classes = 3
features = 0
p_in = 0.08
p_out = 0.002
edges = 2000
{transform}
[sample]
type = "node2vec"
walk_length = 20
walks_per_node = 8
q = 0.5
{sample_extra}

[[train]]
type = "skipgram"
dim = 16
window = 5
lr = 0.1

[[train]]
type = "embedding_eval"
{eval_extra}
"""


def held_out(test):
    return f'\n[[transform]]\ntype = "link_split"\nval = 0.0\ntest = {test}\n'


def pipeline(kind="synthetic", sample_extra="", eval_extra="", transform=""):
    text = SBM.format(kind=kind, sample_extra=sample_extra, eval_extra=eval_extra,
                      transform=transform)
    if kind == "synthetic":
        text = text.replace("edges = 2000\n", "")
    return text


def test_link_prediction_on_held_out_edges(run_toml):
    result = run_toml(pipeline(transform=held_out(0.15), eval_extra="link_prediction = true"))
    m = result.record["metrics"]
    # In an SBM, edges are random within communities: the best any embedding can do is to
    # rank within-community pairs first, and a third of the random non-edges are within one
    # too, which caps the AUC near 0.95 * (2/3 + 1/3 * 1/2) ~ 0.8.
    assert 0.7 < m["link_auc"] < 0.85
    assert "emb_test_acc" in m  # classification runs too (the SBM has labels and masks)
    held = result.ctx.graph().links.test.pos
    src, dst, _ = result.ctx.sampler_graph.graph.edge_list()
    walked = set(zip(src.tolist(), dst.tolist()))
    assert not any((u, v) in walked or (v, u) in walked for u, v in held.t().tolist())


def test_link_prediction_on_a_grid_ranks_held_out_neighbors_first(run_toml, tmp_path):
    side = 15
    lines = []
    for r in range(side):
        for c in range(side):
            v = r * side + c
            if c + 1 < side:
                lines.append(f"{v} {v + 1}")
            if r + 1 < side:
                lines.append(f"{v} {v + side}")
    path = tmp_path / "grid.txt"
    path.write_text("\n".join(lines) + "\n")
    text = f"""
[pipeline]
seed = 0
[load]
type = "edgelist"
path = "{path}"
[sample]
type = "deepwalk"
walk_length = 20
walks_per_node = 10
[[transform]]
type = "link_split"
val = 0.0
test = 0.1
[[train]]
type = "skipgram"
dim = 16
window = 3
lr = 0.1          # 225 nodes: small batches and a larger step train enough in one epoch
batch_size = 8
[[train]]
type = "embedding_eval"
classification = false
link_prediction = true
"""
    m = run_toml(text).record["metrics"]
    assert m["link_auc"] > 0.85  # held-out neighbors stay close in the walk graph (random: 0.5)
    assert "emb_test_acc" not in m


def test_skipgram_eval_includes_link_prediction_when_edges_were_held_out(run_toml):
    text = pipeline(transform=held_out(0.1)).replace(
        'window = 5\n', 'window = 5\neval = true\n')
    text = text[:text.index('[[train]]\ntype = "embedding_eval"')]
    m = run_toml(text).record["metrics"]
    assert "link_auc" in m and "emb_test_acc" in m


def test_link_prediction_without_held_out_edges_says_how_to_get_them(run_toml):
    with pytest.raises(ConfigError, match=r"\[train.1\] embedding_eval: link_prediction = true "
                                          r"needs held-out edges: add a \[\[transform\]\] "
                                          r'type = "link_split"'):
        run_toml(pipeline(eval_extra="link_prediction = true"))


def test_classification_without_labels_is_a_data_error(run_toml):
    text = pipeline(kind="synthetic").replace('type = "synthetic"',
                                              'type = "synthetic"\nkind = "powerlaw"')
    text = text.replace("classes = 3\n", "").replace("p_in = 0.08\n", "")
    text = text.replace("p_out = 0.002\n", "").replace("features = 0\n", "features = 0\nedges = 3000\n")
    with pytest.raises(DataError, match=r"\[train.1\] embedding_eval: node classification needs "
                                        r"node labels .* set classification = false"):
        run_toml(text)


def test_nothing_to_evaluate(run_toml):
    with pytest.raises(ConfigError, match="nothing to evaluate: set classification = true"):
        run_toml(pipeline(eval_extra="classification = false"))


def test_eval_without_embeddings_names_the_missing_stage(run_toml):
    text = pipeline()
    text = text[:text.index("[sample]")] + '[[train]]\ntype = "embedding_eval"\n'
    with pytest.raises(ConfigError, match=r"no 'embeddings' artifact to use; the stages before "
                                          r"it produced: none"):
        run_toml(text)


@pytest.mark.parametrize("override,message", [
    ("train.1.train_fraction=1.0", r"train_fraction = 1.0: must lie in \(0, 1\)"),
    ("train.1.splits=0", r"splits = 0: must be >= 1"),
    ("train.1.l2=-1.0", r"l2 = -1.0: must be >= 0"),
])
def test_bad_eval_options(run_toml, override, message):
    with pytest.raises(ConfigError, match=message):
        run_toml(pipeline(), [override])


def _ctx(num_nodes=6, **ndata):
    g = dgl.graph((torch.arange(num_nodes - 1), torch.arange(1, num_nodes)), num_nodes=num_nodes)
    g.ndata.update(ndata)
    data = GraphData(graph=g, ids=NodeIds.identity(num_nodes), name="path")
    return SimpleNamespace(graph=lambda: data, seed=0, sampler_graph=None,
                           log_metrics=lambda **_: None, info=lambda _: None)


@pytest.mark.parametrize("rows,ndata,message", [
    (5, {}, r"embeddings have 5 rows but the graph has 6 nodes; the graph changed"),
    (6, {"label": torch.tensor([0, 1, 0, 1, 0, 1]), "train_mask": torch.zeros(6, dtype=bool),
         "test_mask": torch.ones(6, dtype=bool)},
     r"train_mask/test_mask select 0/6 labelled nodes; both need at least one"),
    (6, {"label": torch.tensor([0, -1, -1, -1, -1, -1])},
     r"1 labelled node\(s\); node classification needs at least 2"),
])
def test_evaluation_data_errors(rows, ndata, message):
    with pytest.raises(DataError, match=message):
        evaluate_embeddings(_ctx(**ndata), torch.zeros(rows, 4), EvalOptions())
