"""A kg_completion bundle and graphflow predict --queries on it."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

TRAIN = "".join(f"e{i}\tnext\te{(i + 1) % 12}\ne{i}\tprev\te{(i - 1) % 12}\n" for i in range(12))
PIPELINE = """
[pipeline]
name = "ring"
seed = 0
[load]
type = "triples"
path = "{folder}"
[model]
type = "distmult"
dim = 8
[train]
type = "kg_completion"
epochs = 2
batch_size = 8
negatives = 4
reciprocal = true
"""


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A two-epoch run on a 12-entity ring (module-scoped: one training for the file)."""
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    root = tmp_path_factory.mktemp("kg")
    folder = root / "ring"
    folder.mkdir()
    (folder / "train.txt").write_text(TRAIN)
    (folder / "valid.txt").write_text("e0\tnext\te1\n")
    (folder / "test.txt").write_text("e3\tnext\te4\ne5\tprev\te4\n")
    path = root / "p.toml"
    path.write_text(PIPELINE.format(folder=folder.as_posix()))
    host = create_host()
    result = run_pipeline(load_config(path, host.registry, out_dir=root / "run"), host,
                          quiet=True)
    return root, result


def test_the_bundle_rebuilds_the_model_and_the_graph(trained):
    from graphflow.bundle import load_bundle
    from graphflow.kge.bundle import knowledge_graph

    _, result = trained
    bundle = load_bundle(result.out_dir, warn=lambda line: None)
    assert bundle.kind == "kg" and bundle.model.reciprocal
    model = result.ctx.artifacts.model
    assert torch.equal(bundle.model.entity.weight, model.entity.weight)
    kg = knowledge_graph(bundle.path, bundle.meta)
    theirs = result.ctx.data.meta["kg"]
    assert list(kg.entities) == list(theirs.entities)
    assert list(kg.relations) == list(theirs.relations)
    for split, triples in theirs.splits.items():
        assert torch.equal(kg.splits[split], triples)


@pytest.mark.parametrize("suffix", [".txt", ".csv"])
def test_predict_answers_tail_and_head_queries(trained, cli, suffix):
    root, result = trained
    queries = root / f"q{suffix}"
    rows = [("e3", "next", "?"), ("?", "prev", "e4")]
    if suffix == ".csv":
        queries.write_text("head,relation,tail\n" + "".join(f"{','.join(r)}\n" for r in rows))
    else:
        queries.write_text("".join("\t".join(r) + "\n" for r in rows))
    out = root / f"answers-{suffix[1:]}"
    code, stdout, err = cli("predict", result.out_dir, "--queries", queries, "--top-k", "3",
                            "--out", out, "--format", "csv", "--quiet")
    assert code == 0, err
    path = out / "answers.csv"
    assert str(path) in stdout
    table = pd.read_csv(path, keep_default_na=False)
    assert list(table.columns) == ["query", "head", "relation", "tail", "rank", "score",
                                   "known", "split"]
    assert table["query"].tolist() == [0, 0, 0, 1, 1, 1]
    assert table["rank"].tolist() == [1, 2, 3, 1, 2, 3]
    model, kg = result.ctx.artifacts.model.eval(), result.ctx.data.meta["kg"]
    index = {name: i for i, name in enumerate(kg.entities)}
    with torch.no_grad():
        tails = model.score_t(torch.tensor([index["e3"]]), torch.tensor([0]))[0]
        heads = model.score_h(torch.tensor([1]), torch.tensor([index["e4"]]))[0]
    first, second = table[table["query"] == 0], table[table["query"] == 1]
    assert (first["head"] == "e3").all() and (second["tail"] == "e4").all()
    assert first["score"].tolist() == pytest.approx(torch.topk(tails, 3).values.tolist(),
                                                    abs=1e-5)
    assert second["score"].tolist() == pytest.approx(torch.topk(heads, 3).values.tolist(),
                                                     abs=1e-5)
    # (e3, next, e4) is a test triple and a training one; (e5, prev, e4) likewise
    known = {(h, t): (k, s) for h, t, k, s in zip(table["head"], table["tail"], table["known"],
                                                   table["split"])}
    if ("e3", "e4") in known:
        assert known["e3", "e4"] == (True, "train")
    for (h, t), (k, s) in known.items():
        true = (h, t) in {("e3", "e4"), ("e5", "e4")}
        assert bool(k) == true and (s == "train") == true


@pytest.mark.parametrize("text, where", [
    ("e3\tnext\t?\nx9\tnext\t?\n", "line 2: unknown entity 'x9'"),
    ("e3\tsideways\t?\n", "line 1: unknown relation 'sideways'"),
])
def test_predict_refuses_unknown_names_in_one_line(trained, cli, text, where):
    root, result = trained
    queries = root / "bad.txt"
    queries.write_text(text)
    code, _, err = cli("predict", result.out_dir, "--queries", queries, "--out",
                       root / "bad-out", "--quiet")
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert str(queries) in err and where in err
    assert not (root / "bad-out" / "answers.parquet").exists()


def test_predict_needs_queries(trained, cli):
    root, result = trained
    code, _, err = cli("predict", result.out_dir, "--quiet")
    assert code == 1 and "--queries FILE" in err and len(err.strip().splitlines()) == 1


def test_serve_completes_queries_as_predict_does(trained):
    from starlette.testclient import TestClient

    from graphflow.kge.bundle import predict_queries
    from graphflow.serve.app import create_app
    from graphflow.serve.service import start_service

    root, result = trained
    client = TestClient(create_app(start_service(result.out_dir, quiet=True)))
    health = client.get("/health").json()
    assert health == {"status": "ok", "kind": "kg", "entities": 12, "relations": 2}
    answer = client.post("/complete", json={"queries": [["e3", "next", "?"],
                                                        ["?", "prev", "e4"]], "k": 3})
    assert answer.status_code == 200, answer.text
    rows = answer.json()["answers"]
    queries = root / "served.txt"
    queries.write_text("e3\tnext\t?\n?\tprev\te4\n")
    _, table, _ = predict_queries(result.out_dir, queries, root / "served-out", k=3)
    assert [r["tail"] for r in rows] == table["tail"].tolist()
    assert [r["head"] for r in rows] == table["head"].tolist()
    assert [r["score"] for r in rows] == pytest.approx(table["score"].tolist(), abs=1e-6)
    assert [r["split"] for r in rows] == table["split"].tolist()
    bad = client.post("/complete", json={"queries": [["e3", "next", "?"], ["zz", "next", "?"]]})
    assert bad.status_code == 422 and "queries[1]: unknown entity 'zz'" in bad.json()["error"]
    wrong = client.post("/predict/nodes", json={"ids": ["e1"]})
    assert wrong.status_code == 404 and "POST /complete" in wrong.json()["error"]
