"""Typed models (rgcn, the hetero wrapper) on examples/typed_tables.toml: the bundle, predict
and serve give the run's own predictions for the target type's nodes, by original id."""

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from graphflow.serve.service import RequestError, start_service

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("model", ['type = "rgcn"\nhidden = 16\nregularizer = "basis"\n'
                                   'num_bases = 4',
                                   'type = "hetero"\nlayer = "sage"\nhidden = 16\n'
                                   'aggregate = "mean"'], ids=["rgcn", "hetero"])
def test_typed_bundle_predict_and_serve(run_toml, cli, tmp_path, model):
    text = (EXAMPLES / "typed_tables.toml").read_text().replace(
        'path = "data/', f'path = "{EXAMPLES}/data/')
    head, rest = text.split("[model]\n", 1)
    text = head + "[model]\n" + model + "\n\n[train]" + rest.split("[train]", 1)[1]
    result = run_toml(text, overrides=["train.epochs=5"])
    out = tmp_path / "out"
    trained = pq.read_table(out / "predictions.parquet")
    assert trained.num_rows == result.ctx.data.graph.num_nodes("paper")

    code, _, err = cli("predict", out, "--data", tmp_path / "pipeline.toml")
    assert code == 0, err
    again = pq.read_table(out / "predict" / "predictions.parquet")
    assert again.column("id").equals(trained.column("id"))
    assert again.column("prediction").equals(trained.column("prediction"))

    service = start_service(out, quiet=True)
    health = service.health()
    assert health["node_type"] == "paper" and health["target_nodes"] == trained.num_rows
    assert "POST /predict/subgraph" not in service.model()["endpoints"]
    ids = trained.column("id").to_pylist()[:5]
    served = service.predict_nodes({"ids": ids})["predictions"]
    assert [p["id"] for p in served] == ids
    assert [p["prediction"] for p in served] == trained.column("prediction").to_pylist()[:5]
    assert [round(p["probability"], 5) for p in served] == \
        [round(v, 5) for v in trained.column("probability").to_pylist()[:5]]
    with pytest.raises(RequestError, match="typed graph: ask for its served 'paper' nodes"):
        service.predict_subgraph({"nodes": [1], "features": [[0.0]], "edges": []})
    with pytest.raises(RequestError, match="is not a node of the served graph"):
        service.predict_nodes({"ids": ["no-such-paper"]})
