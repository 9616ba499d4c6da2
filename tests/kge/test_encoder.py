"""R-GCN + DistMult on a typed graph from tables: filtered ranks against a brute-force loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "typed_kg_completion.toml"


def pipeline(train: str = "") -> str:
    text = EXAMPLE.read_text()
    text = text.replace('path = "data/', f'path = "{(EXAMPLE.parent / "data").as_posix()}/')
    text = text.replace("hidden = 32", "hidden = 8").replace("embedding_dim = 32",
                                                             "embedding_dim = 8")
    return text.replace("epochs = 100\neval_every = 10", f"epochs = 2\n{train}")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    root = tmp_path_factory.mktemp("typed_kg")
    path = root / "p.toml"
    path.write_text(pipeline())
    host = create_host()
    return run_pipeline(load_config(path, host.registry, out_dir=root / "run"), host,
                        quiet=True)


def brute_force_mrr(result) -> tuple[float, dict[str, float]]:
    """Every test triple's tail and head ranked by a Python loop over the candidates of the
    right type, the other known triples filtered out, ties realistic."""
    from graphflow.kge.encoder import typed_view
    from graphflow.nn.typed import TypedAdjacency
    from graphflow.train import typed_node

    data, model = result.ctx.data, result.ctx.artifacts.model
    g = data.graph
    view = typed_view(data)
    with torch.no_grad():
        h = model.encoder(TypedAdjacency.from_graph(g),
                          typed_node.model_inputs(data, typed_node.typed_features(data)))
        h = {t: v.detach() for t, v in h.items()}
    known = {tuple(t) for t in view.kg.known().tolist()}
    recip: dict[str, list[float]] = {}
    for hh, r, tt in view.kg.splits["test"].tolist():
        s, _, d = view.relations[r]
        w = model.decoder(view.relations[r]).weight.detach()
        head, tail = hh - view.offsets[s], tt - view.offsets[d]
        for side in ("tail", "head"):
            if side == "tail":
                scores = (h[s][head] * w * h[d]).sum(-1)  # every entity of type d
                true, off = tail, view.offsets[d]
                other = [e for e in range(len(scores))
                         if e != true and (hh, r, e + off) not in known]
            else:
                scores = (h[s] * w * h[d][tail]).sum(-1)
                true, off = head, view.offsets[s]
                other = [e for e in range(len(scores))
                         if e != true and (e + off, r, tt) not in known]
            above = sum(float(scores[e]) > float(scores[true]) for e in other)
            tied = sum(float(scores[e]) == float(scores[true]) for e in other)
            rank = above + 1 + tied / 2
            recip.setdefault(str(view.kg.relations[r]), []).append(1 / rank)
    every = [x for v in recip.values() for x in v]
    return sum(every) / len(every), {k: sum(v) / len(v) for k, v in recip.items()}


def test_filtered_ranks_match_a_brute_force_loop(trained):
    overall, per_relation = brute_force_mrr(trained)
    metrics = trained.ctx.metrics
    assert metrics["test_mrr"] == pytest.approx(overall, abs=1e-5)
    assert set(per_relation) == {"writes", "cites", "published_in", "coauthor"}
    for name, value in per_relation.items():
        assert metrics[f"test_mrr/{name}"] == pytest.approx(value, abs=1e-5)


def test_the_run_record_holds_per_relation_mrr(trained):
    record = json.loads((trained.out_dir / "run.json").read_text())
    for name in ("test_mrr", "test_hits@10", "test_mrr/cites", "test_mrr/writes",
                 "test_hits@10/published_in"):
        assert name in record["metrics"]
    lines = (trained.out_dir / "metrics.jsonl").read_text().splitlines()
    assert any("val_mrr" in json.loads(x) for x in lines)


@pytest.mark.parametrize("train, message", [
    ('reciprocal = true', "reciprocal: options of the shallow models"),
    ('loss = "margin"', 'loss = "margin": an encoder [model] trains with binary'),
])
def test_refuses_what_the_encoder_does_not_read(cli, tmp_path, train, message):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(train))
    code, _, err = cli("run", path, "--out-dir", tmp_path / "out")
    errors = [line for line in err.splitlines() if line.startswith("graphflow: error:")]
    assert code == 1 and len(errors) == 1 and message in errors[0], err
    assert "Traceback" not in err
