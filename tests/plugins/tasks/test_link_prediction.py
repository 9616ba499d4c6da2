"""link_prediction end to end on a small SBM graph: full batch and sampled, metrics, artifacts,
exports, determinism, --resume, score_pairs, and its error messages."""

from __future__ import annotations

import math

import pyarrow.parquet as pq
import pytest

from graphflow.errors import ConfigError, DataError
from graphflow.testing import LINK_SAMPLER as SAMPLE
from graphflow.testing import LINK_SPLIT as SPLIT
from graphflow.testing import link_pipeline as pipeline


def test_full_batch_learns_and_writes_links_and_embeddings(run_toml, tmp_path):
    export = ('[[export]]\ntype = "parquet"\nwhat = "links"\n'
              '[[export]]\ntype = "csv"\nwhat = "links"\n'
              '[[export]]\ntype = "parquet"\nwhat = "embeddings"')
    result = run_toml(pipeline(export=export, train='decoder = "mlp"\nmonitor = "val_mrr"'))
    m = result.ctx.metrics
    assert m["test_auc"] > 0.8 and 0 < m["test_mrr"] <= 1
    assert {"val_ap", "test_hits@1", "test_hits@10", "best_epoch"} <= set(m)
    links = result.ctx.artifacts.links
    split = result.ctx.data.links
    table = pq.read_table(tmp_path / "out" / "links.parquet").to_pydict()
    assert table["split"].count("test") == split.test.num_pos + split.test.num_neg
    assert set(table["label"]) == {0, 1}
    assert len(table["score"]) == links.num_pairs
    csv = (tmp_path / "out" / "links.csv").read_text().splitlines()
    assert csv[0] == '"src","dst","split","label","score"' and len(csv) == links.num_pairs + 1
    emb = pq.read_table(tmp_path / "out" / "embeddings.parquet")
    assert emb.num_rows == 200 and emb.column("embedding").type.list_size == 16


def test_sampled_training_is_deterministic(run_toml, tmp_path):
    text = pipeline(model="sage", sample=SAMPLE, epochs=3,
                    train='loss = "bpr"\nnegative_sampler = "degree"\nnegatives = 2')
    a = run_toml(text, out_dir=tmp_path / "a").ctx.metrics
    b = run_toml(text, out_dir=tmp_path / "b").ctx.metrics
    assert a == b and a["test_auc"] > 0.6


def test_resume_ends_as_an_uninterrupted_run(run_toml, tmp_path):
    full = run_toml(pipeline(epochs=6), out_dir=tmp_path / "full").ctx.metrics
    run_toml(pipeline(epochs=3), out_dir=tmp_path / "cut")
    resumed = run_toml(pipeline(epochs=6), out_dir=tmp_path / "cut", resume=True).ctx.metrics
    assert resumed == full


def test_score_pairs_scores_the_users_candidates(run_toml, tmp_path):
    (tmp_path / "cand.csv").write_text("src,dst\n0,1\n5,7\n")
    result = run_toml(pipeline(epochs=2, train=f'score_pairs = "{tmp_path / "cand.csv"}"'))
    links = result.ctx.artifacts.links
    rows = links.split == 2
    assert links.pairs[:, rows].tolist() == [[0, 5], [1, 7]]
    assert all(math.isnan(v) for v in links.label[rows].tolist())
    (tmp_path / "bad.csv").write_text("src,dst\n0,1\n5,700\n")
    with pytest.raises(DataError, match=r"bad.csv:3: dst node id 700 is not a node"):
        run_toml(pipeline(epochs=1, train=f'score_pairs = "{tmp_path / "bad.csv"}"'))


def test_without_a_split_the_message_says_to_add_link_split(run_toml):
    with pytest.raises(DataError, match=r'no link split; add \[\[transform\]\] type = '
                                        r'"link_split"'):
        run_toml(pipeline(split=""))


def test_links_export_without_links_names_the_stage_that_makes_them(run_toml):
    text = """
[pipeline]
name = "x"
[load]
type = "synthetic"
nodes = 50
[[export]]
type = "parquet"
what = "links"
"""
    with pytest.raises(ConfigError, match=r"no 'links' artifact to use; the stages before it "
                                          r"produced: none \(a \[train\] type = "
                                          r'"link_prediction" stage makes them\)'):
        run_toml(text)


def test_leaked_held_out_edge_is_refused(run_toml):
    # bidirected after link_split on a directed graph would put held-out edges back.
    split = SPLIT + '\nundirected = false\n[[transform]]\ntype = "bidirected"'
    with pytest.raises(DataError, match="is an edge of the training graph again"):
        run_toml(pipeline(split=split))


def test_self_loops_train_self_pairs_as_positives(run_toml, monkeypatch):
    from graphflow.linkpred import train

    seen = {}
    real = train.LinkFullBatch.__init__

    def spy(self, model, stepper, loss, adj, x, src, dst, *args, **kwargs):
        seen["pairs"] = (src.clone(), dst.clone())
        real(self, model, stepper, loss, adj, x, src, dst, *args, **kwargs)

    monkeypatch.setattr(train.LinkFullBatch, "__init__", spy)
    monkeypatch.setattr("graphflow_plugins.tasks.link_prediction.LinkFullBatch",
                        train.LinkFullBatch)
    result = run_toml(pipeline(train="self_loops = true\nrestore_best = false"))
    src, dst = seen["pairs"]
    edges = result.ctx.data.graph.num_edges()
    assert src.numel() == edges + 200  # every training edge, then every (u, u)
    assert src[edges:].tolist() == dst[edges:].tolist() == list(range(200))
    assert result.ctx.metrics["test_auc"] > 0.8


def test_self_loops_with_a_sampler_is_refused(run_toml):
    with pytest.raises(ConfigError, match=r"self_loops = true trains self-pairs in full batch "
                                          r"only; remove it, or remove the \[sample\] section"):
        run_toml(pipeline(model="sage", sample=SAMPLE, epochs=1, train="self_loops = true"))


BARE = """
[load]
type = "synthetic"
nodes = 60
features = 4
{split}
{sample}
[model]
type = "gcn"
{model}
[train]
type = "link_prediction"
{train}
"""


def read(tmp_path, text):
    from graphflow.config import load_config
    from graphflow.manager import create_host

    path = tmp_path / "p.toml"
    path.write_text(text)
    return load_config(path, create_host().registry)


def test_defaults_by_mode_are_resolved_when_the_pipeline_is_read(tmp_path):
    full = read(tmp_path, BARE.format(split=SPLIT, sample="", model="", train=""))
    task, model = full.train[0].task.options, full.train[0].model.options
    assert (task.epochs, task.lr, task.restore_best, task.self_loops) == (300, 0.01, False, True)
    assert (model.hidden, model.dropout, model.bias) == (32, 0.0, False)
    assert task.embedding_dim == 16
    resolved = full.resolved()  # what run.json records
    assert resolved["train"][0]["epochs"] == 300 and resolved["model"]["hidden"] == 32
    assert "model" not in resolved["train"][0]  # one model record: the stage's

    sampled = read(tmp_path, BARE.format(split=SPLIT, sample=SAMPLE, model="", train=""))
    task, model = sampled.train[0].task.options, sampled.train[0].model.options
    assert (task.epochs, task.lr, task.restore_best, task.self_loops) == (20, 0.005, True, False)
    assert (model.hidden, model.dropout, model.bias) == (64, 0.0, True)


def test_values_the_pipeline_sets_win_over_task_defaults(tmp_path):
    config = read(tmp_path, BARE.format(split=SPLIT, sample="", model="hidden = 8\nbias = true",
                                        train="epochs = 5\nrestore_best = true"))
    task, model = config.train[0].task.options, config.train[0].model.options
    assert (task.epochs, task.restore_best, task.lr) == (5, True, 0.01)
    assert (model.hidden, model.bias, model.dropout) == (8, True, 0.0)


def test_a_model_shared_by_stages_that_resolve_it_differently_is_recorded_per_stage(tmp_path):
    text = BARE.format(split=SPLIT, sample="", model="", train="")
    text = text.replace("[train]", "[[train]]") + '\n[[train]]\ntype = "node_classification"\n'
    config = read(tmp_path, text)
    resolved = config.resolved()
    assert resolved["model"]["hidden"] == 16 and resolved["model"]["dropout"] == 0.5
    assert resolved["train"][0]["model"]["hidden"] == 32  # link_prediction's encoder
    assert "model" not in resolved["train"][1]  # node_classification: the [model] as written


def test_describe_shows_the_defaults_by_mode():
    from graphflow.cli.info import describe
    from graphflow.manager import create_host

    out = describe(create_host().registry.get("task", "link_prediction"))
    assert "  epochs: int | none  (default by mode: 300 full batch, 20 sampled)" in out
    assert "  self_loops: bool | none  (default by mode: true full batch, false sampled)" in out
    assert "  lr: float | none  (default by mode: 0.01 full batch, 0.005 sampled)" in out


def test_a_task_default_the_model_rejects_is_one_line_naming_both(tmp_path, monkeypatch):
    from graphflow_plugins.tasks.link_prediction import LinkPrediction

    monkeypatch.setattr(LinkPrediction, "model_defaults",
                        lambda self, model, *, sampled: {"dropout": 1.5})
    with pytest.raises(ConfigError, match=r"\[model\] gcn: the defaults task 'link_prediction' "
                                          r"gives it \(dropout = 1.5\) are rejected: dropout "
                                          r"must lie in \[0, 1\), got 1.5; set these options "
                                          r"in \[model\]"):
        read(tmp_path, BARE.format(split=SPLIT, sample="", model="", train=""))
