"""Typed link prediction end to end (examples/typed_link_prediction.toml, shortened), its
refusals, and the per-relation / overall figures."""

import json
import math
from pathlib import Path

import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.linkpred.decoders import DotDecoder
from graphflow.linkpred.edge_split import reverse_relations, typed_random_split
from graphflow.linkpred.held_out import HeldOutPairs, LinkSplit, TypedLinkSplit
from graphflow.linkpred.typed import TypedLinkModel, typed_figures, typed_scored_links
from graphflow.testing import make_typed_graph
from graphflow.train.metrics import roc_auc

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
EXAMPLE = EXAMPLES / "typed_link_prediction.toml"
TYPED = EXAMPLES / "data" / "typed"
RELATIONS = {"writes": ("author", "paper"), "cites": ("paper", "paper"),
             "published_in": ("paper", "venue"), "coauthor": ("author", "author")}


def original_ids(ntype: str) -> set[str]:
    if ntype == "paper":
        return set(pacsv.read_csv(TYPED / "papers.csv").column("id").to_pylist())
    if ntype == "author":
        return set(pq.read_table(TYPED / "authors.parquet").column("id").to_pylist())
    return set(pacsv.read_csv(TYPED / "published_in.csv").column("dst").to_pylist())


def test_the_example_reports_per_relation_auc_and_mrr_and_exports_original_ids(cli, tmp_path):
    code, out, err = cli("run", EXAMPLE, "--out-dir", tmp_path, "--set", "train.epochs=4",
                         "--set", "train.eval_every=2")
    assert code == 0, err
    metrics = json.loads((tmp_path / "run.json").read_text())["metrics"]
    for split in ("val", "test"):
        for figure in ("auc", "mrr", "ap", "hits@10"):
            assert 0 <= metrics[f"{split}_{figure}"] <= 1
            for rel in RELATIONS:
                assert 0 <= metrics[f"{split}_{figure}/{rel}"] <= 1
    assert metrics["test_auc"] > 0.5  # a trained encoder ranks held-out edges above chance
    epochs = [json.loads(line) for line in (tmp_path / "metrics.jsonl").read_text().splitlines()]
    assert [e["epoch"] for e in epochs] == [1, 2, 3, 4]
    assert "val_auc/cites" in epochs[1] and "val_auc" in epochs[3]

    links = pq.read_table(tmp_path / "links.parquet")
    assert links.column_names == ["src", "dst", "relation", "src_type", "dst_type", "split",
                                  "label", "score"]
    rows = links.to_pydict()
    assert set(rows["relation"]) == set(RELATIONS) and set(rows["split"]) == {"val", "test"}
    for rel, (s, d) in RELATIONS.items():
        mine = [i for i, r in enumerate(rows["relation"]) if r == rel]
        assert {rows["src_type"][i] for i in mine} == {s}
        assert {rows["dst_type"][i] for i in mine} == {d}
        assert {rows["src"][i] for i in mine} <= original_ids(s)
        assert {rows["dst"][i] for i in mine} <= original_ids(d)
        assert {rows["label"][i] for i in mine} == {0, 1}
    assert all(math.isfinite(x) for x in rows["score"])


def pipeline(model: str, extra: str = "") -> str:
    text = EXAMPLE.read_text().replace('"data/typed/', f'"{TYPED}/')
    head, _, _ = text.partition("[model]")
    return (head + model + '\n[train]\ntype = "link_prediction"\ndecoder = "distmult"\n'
            "epochs = 2\n" + extra)


def test_a_hetero_encoder_trains_on_one_target_relation(run_toml):
    text = pipeline('[model]\ntype = "hetero"\nlayer = "sage"\nhidden = 8\n').replace(
        'target = "all"', 'target = "paper:cites:paper"')
    result = run_toml(text)
    metrics = result.record["metrics"]
    assert {k for k in metrics if k.startswith("test_auc")} == {"test_auc", "test_auc/cites"}
    assert result.ctx.artifacts.links.names == ["cites"]


@pytest.mark.parametrize("model, extra, error, message", [
    ('[model]\ntype = "sage"\n', "", ConfigError, 'type = "hetero" with layer = "sage"'),
    ('[model]\ntype = "rgcn"\n', '[sample]\ntype = "typed_neighbor"\nfanouts = [5, 5]\n',
     ConfigError, "on a typed graph trains full batch; remove the \\[sample\\] section"),
])
def test_what_typed_link_prediction_does_not_do_is_refused_before_training(
        run_toml, model, extra, error, message):
    with pytest.raises(error, match=message):
        run_toml(pipeline(model) + extra)


def test_a_typed_graph_without_a_split_is_refused(run_toml):
    text = pipeline('[model]\ntype = "rgcn"\n')
    start = text.index('[[transform]]\ntype = "link_split"')
    text = text[:start] + text[text.index("[model]"):]
    with pytest.raises(DataError, match="has no link split; add \\[\\[transform\\]\\] type = "
                                        '"link_split"'):
        run_toml(text)


def test_overall_figures_pool_the_relations():
    gen = torch.Generator().manual_seed(0)
    h = {"a": torch.randn(8, 4, generator=gen), "b": torch.randn(5, 4, generator=gen)}
    r1, r2 = ("a", "x", "b"), ("a", "y", "a")

    def pairs(n_src, n_dst, p, q):
        return HeldOutPairs(torch.stack([torch.randint(n_src, (p,), generator=gen),
                                         torch.randint(n_dst, (p,), generator=gen)]),
                            torch.stack([torch.randint(n_src, (q,), generator=gen),
                                         torch.randint(n_dst, (q,), generator=gen)]))

    split = TypedLinkSplit(
        rels={r1: LinkSplit(pairs(8, 5, 3, 6), pairs(8, 5, 4, 8), False),
              r2: LinkSplit(pairs(8, 8, 2, 4), pairs(8, 8, 6, 12), False)},
        reverse={r1: None, r2: None}, names={r1: "x", r2: "y"})
    model = TypedLinkModel(torch.nn.Identity(), [DotDecoder(), DotDecoder()], [r1, r2])
    figures, scores = typed_figures(model, h, split, "test", ranking=True, eval_negatives=7,
                                    hits=[1, 3], seed=0)
    pos1, neg1 = scores[r1]
    p1 = split.rels[r1].test.pos
    assert torch.allclose(pos1, (h["a"][p1[0]] * h["b"][p1[1]]).sum(1))  # dst rows from "b"
    assert figures["test_auc/x"] == pytest.approx(roc_auc(pos1, neg1))
    pos = torch.cat([scores[r1][0], scores[r2][0]])
    neg = torch.cat([scores[r1][1], scores[r2][1]])
    assert figures["test_auc"] == pytest.approx(roc_auc(pos, neg))
    assert figures["test_mrr"] == pytest.approx((4 * figures["test_mrr/x"]
                                                 + 6 * figures["test_mrr/y"]) / 10)
    again = typed_figures(model, h, split, "test", ranking=True, eval_negatives=7, hits=[1, 3],
                          seed=0)[0]
    assert again == figures  # the same ranked destinations at every evaluation
    links = typed_scored_links(split, {"test": scores})
    assert links.num_pairs == 4 + 8 + 6 + 12
    assert links.relation.tolist() == [0] * 12 + [1] * 18


def test_the_task_refuses_a_split_whose_held_out_edges_are_back_in_the_graph():
    from graphflow_plugins.tasks.link_prediction import typed_held_out

    WRITES = ("author", "writes", "paper")
    data = make_typed_graph()
    g = data.graph
    train, sp = typed_random_split(g, targets=[WRITES], reverse=reverse_relations(g, None),
                                   val=0.1, test=0.2, negatives=1,
                                   generator=torch.Generator().manual_seed(0))
    out = GraphData(graph=train, ids=NodeIds.identity(train.num_nodes()), name="t",
                    typed_ids=data.typed_ids)
    out.links = sp
    assert typed_held_out(out, "train") is sp
    back = GraphData(graph=g, ids=NodeIds.identity(g.num_nodes()), name="t",
                     typed_ids=data.typed_ids)
    back.links = sp  # the full graph: the held-out edges are there again
    with pytest.raises(DataError, match="of relation author:writes:paper is an edge of the "
                                        "training graph again"):
        typed_held_out(back, "train")


def test_link_split_options_of_the_other_kind_of_graph_are_refused(run_toml, tmp_path):
    typed = pipeline('[model]\ntype = "rgcn"\n').replace("negatives = 1 ",
                                                          'path = "split.csv"\nnegatives = 1 ')
    with pytest.raises(ConfigError, match="path \\(a split file\\) is for graphs with one node "
                                          "type"):
        run_toml(typed)
    (tmp_path / "e.txt").write_text("a b\nb c\nc d\nd a\na c\n")
    plain = ('[load]\ntype = "edgelist"\npath = "e.txt"\n[[transform]]\ntype = "link_split"\n'
             'val = 1\ntest = 1\ntarget = "cites"\n')
    with pytest.raises(ConfigError, match="target and reverse are for typed graphs"):
        run_toml(plain)


def test_features_a_typed_link_stage_lacks_are_refused_when_the_pipeline_is_read(cli, tmp_path):
    code, out, err = cli("run", EXAMPLE, "--out-dir", tmp_path, "--nproc", "2")
    assert code != 0 and "Traceback" not in err
    assert ("link_prediction cannot run data-parallel (--nproc): link prediction on a typed "
            "graph trains full batch in one process") in err
    path = tmp_path / "embeddings.toml"
    path.write_text(pipeline('[model]\ntype = "rgcn"\n')
                    + '[[export]]\ntype = "parquet"\nwhat = "embeddings"\n')
    code, out, err = cli("validate", path)
    assert code != 0 and "cannot export embeddings: a typed link model has no" in err
    assert not (tmp_path / "run.json").exists()
