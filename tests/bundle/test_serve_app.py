"""The serve application in-process (Starlette's test client): a link model's pair scores."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LINKS = f"""
[pipeline]
name = "links"
seed = 0

[load]
type = "edgelist"
path = "{EXAMPLES / 'data' / 'papers.tsv'}"
delimiter = "tab"
directed = false
nodes = "{EXAMPLES / 'data' / 'papers_nodes.parquet'}"

[[transform]]
type = "normalize_features"
method = "standard"

[[transform]]
type = "link_split"
val = 0.05
test = 0.1

[model]
type = "sage"

[train]
type = "link_prediction"
epochs = 2

[[export]]
type = "parquet"
what = "links"
"""


def test_link_model_scores_pairs_as_the_run_did(cli, tmp_path):
    from starlette.testclient import TestClient

    from graphflow.serve.app import create_app
    from graphflow.serve.service import start_service

    (tmp_path / "links.toml").write_text(LINKS)
    code, _, err = cli("run", tmp_path / "links.toml", "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    links = pq.read_table(tmp_path / "run" / "links.parquet").to_pandas().head(5)
    # the served graph: the run's own data sections (the same split, from the same seed)
    service = start_service(tmp_path / "run", quiet=True)
    client = TestClient(create_app(service, max_bytes=4096))
    assert client.get("/health").json()["kind"] == "link"
    pairs = [[s, d] for s, d in zip(links.src, links.dst)]
    answer = client.post("/score/pairs", json={"pairs": pairs})
    assert answer.status_code == 200, answer.text
    assert [r["score"] for r in answer.json()["scores"]] == pytest.approx(list(links.score),
                                                                         abs=1e-6)
    bad = client.post("/score/pairs", json={"pairs": [["paper-0000", "paper-9999"]]})
    assert bad.status_code == 404
    assert "paper-9999" in bad.json()["error"]
    assert client.post("/score/pairs", json={"pairs": [["paper-0000"]]}).status_code == 422
    assert client.post("/predict/nodes", json={"ids": ["paper-0000"]}).status_code == 400
    assert client.post("/score/pairs", content=b"x" * 5000).status_code == 413
