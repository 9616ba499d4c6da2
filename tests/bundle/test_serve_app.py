"""The serve application in-process (Starlette's test client): a link model's pair scores."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from graphflow.testing import papers_link_pipeline

pytest.importorskip("starlette")
pytest.importorskip("httpx")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

LINKS = papers_link_pipeline(epochs=2)


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


def test_graph_model_predicts_served_and_posted_graphs(cli, tmp_path):
    """A gine bundle serves the collection's graphs by id, and posted graphs (features,
    edges between node positions, edge features) get the prediction of the same graph in
    the collection."""
    import pyarrow.csv as pacsv
    import torch
    from starlette.testclient import TestClient

    from graphflow.serve.app import create_app
    from graphflow.serve.service import start_service

    example = EXAMPLES / "tu_bond_types.toml"
    code, _, err = cli("run", example, "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    expected = pacsv.read_csv(tmp_path / "run" / "predictions.csv").to_pandas().set_index("id")
    service = start_service(tmp_path / "run", data=example, quiet=True)
    client = TestClient(create_app(service))
    assert client.get("/health").json() == {"status": "ok", "kind": "graph", "nodes": 156,
                                            "graphs": 24}
    assert "POST /predict/graphs/new" in client.get("/model").json()["endpoints"]
    answer = client.post("/predict/graphs", json={"ids": [17, 3]})
    assert answer.status_code == 200, answer.text
    rows = answer.json()["predictions"]
    assert [r["id"] for r in rows] == [17, 3]
    assert [r["class"] for r in rows] == [str(expected.loc[i, "class"]) for i in (17, 3)]
    assert [r["probability"] for r in rows] == pytest.approx(
        [expected.loc[i, "probability"] for i in (17, 3)], abs=1e-6)

    def posted(position: int, gid: object) -> dict:
        """Graph ``position`` of the served collection, as a client would post it."""
        data = service.data
        lo, hi = (int(v) for v in data.graphs.graph_ptr[position:position + 2])
        src, dst = data.graph.edges()
        inside = (src >= lo) & (src < hi)
        return {"id": gid, "features": data.graph.ndata["feat"][lo:hi].tolist(),
                "edges": torch.stack([src[inside] - lo, dst[inside] - lo], 1).tolist(),
                "edge_features": data.graph.edata["edge_feat"][inside].tolist()}

    index = {v: k for k, v in enumerate(service.data.graphs.ids.to_pylist())}
    body = {"graphs": [posted(index[17], "mol-a"), posted(index[3], "mol-b")]}
    answer = client.post("/predict/graphs/new", json=body)
    assert answer.status_code == 200, answer.text
    new = answer.json()["predictions"]
    assert [r["id"] for r in new] == ["mol-a", "mol-b"]
    assert [r["class"] for r in new] == [r["class"] for r in rows]
    assert [r["probability"] for r in new] == pytest.approx([r["probability"] for r in rows],
                                                           abs=1e-5)

    def refused(path: str, payload: object, status: int) -> str:
        answer = client.post(path, json=payload)
        assert answer.status_code == status, (path, answer.text)
        return answer.json()["error"]

    assert "graph id 99 is not a graph of the served collection" in refused(
        "/predict/graphs", {"ids": [99]}, 404)
    bad = posted(index[17], "x")
    bad["edges"][0] = [0, 40]
    assert "graphs[0] (id 'x'): edges: node 40 out of range" in refused(
        "/predict/graphs/new", {"graphs": [bad]}, 422)
    bare = {k: v for k, v in posted(index[17], "x").items() if k != "edge_features"}
    assert "trained with edge features 2 wide" in refused(
        "/predict/graphs/new", {"graphs": [bare]}, 422)
    assert "give them for every graph or for none" in refused(
        "/predict/graphs/new", {"graphs": [posted(index[3], "y"), bare]}, 422)
    wide = posted(index[17], "x")
    wide["features"] = [row + [0.0] for row in wide["features"]]
    assert "features: rows of 2 numbers, but the model reads 1" in refused(
        "/predict/graphs/new", {"graphs": [wide]}, 422)
    assert "graphs: give at least one graph" in refused(
        "/predict/graphs/new", {"graphs": []}, 422)
    assert "graphs: ids must be unique" in refused(
        "/predict/graphs/new", {"graphs": [posted(index[3], "y"), posted(index[17], "y")]}, 422)
    short = posted(index[17], "x")
    short["edge_features"] = short["edge_features"][1:]
    assert "graphs[0] (id 'x'): edge_features: give one row per edge" in refused(
        "/predict/graphs/new", {"graphs": [short]}, 422)
    odd = posted(index[17], "x")
    odd["edges"] = [[0, "a"]]
    assert "graphs[0] (id 'x'): edges: give [i, j] pairs of node positions" in refused(
        "/predict/graphs/new", {"graphs": [odd]}, 422)
    assert "graphs[0] (id 'x'): features: give one row of 1 numbers per node" in refused(
        "/predict/graphs/new", {"graphs": [{"id": "x", "features": []}]}, 422)
    assert "needs a node model; this is a graph model" in refused(
        "/predict/nodes", {"ids": [1]}, 400)


def test_graph_regression_model_serves_its_estimates(cli, tmp_path):
    import pyarrow.csv as pacsv
    import torch
    from starlette.testclient import TestClient

    from graphflow.serve.app import create_app
    from graphflow.serve.service import start_service

    rings = EXAMPLES / "data" / "rings_paths"
    folder = tmp_path / "REG"
    folder.mkdir()
    for f in rings.iterdir():
        (folder / f.name.replace("RP_", "REG_")).write_bytes(f.read_bytes())
    indicator = (folder / "REG_graph_indicator.txt").read_text().split()
    sizes = torch.bincount(torch.tensor([int(x) for x in indicator]))[1:]  # nodes per graph
    (folder / "REG_graph_attributes.txt").write_text("".join(f"{float(n)}\n"
                                                             for n in sizes.tolist()))
    (tmp_path / "reg.toml").write_text(f"""
[pipeline]
seed = 0
[load]
type = "tu"
path = "{folder.as_posix()}"
name = "REG"
features = "degree"
targets = "attributes"
[model]
type = "gin"
layers = 2
hidden = 16
[train]
type = "graph_regression"
epochs = 5
batch_size = 4
[[export]]
type = "csv"
what = "predictions"
""")
    code, _, err = cli("run", tmp_path / "reg.toml", "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    table = pacsv.read_csv(tmp_path / "run" / "predictions.csv").to_pydict()
    value_column = next(c for c in table if c != "id")
    expected = dict(zip(table["id"], table[value_column]))
    service = start_service(tmp_path / "run", quiet=True)
    rows = TestClient(create_app(service)).post("/predict/graphs", json={"ids": [5, 1]}).json()
    assert [r["id"] for r in rows["predictions"]] == [5, 1]
    assert [r["prediction"] for r in rows["predictions"]] == pytest.approx(
        [expected[5], expected[1]], abs=1e-5)
