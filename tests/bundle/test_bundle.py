"""Model bundles: written by every supervised task, checked and rebuilt by load_bundle."""

from __future__ import annotations

import json

import pytest
import torch

from graphflow.bundle import load_bundle
from graphflow.bundle.infer import node_outputs
from graphflow.bundle.versions import compare
from graphflow.errors import ConfigError, DataError
from graphflow.testing import bundle_node_pipeline

SBM = bundle_node_pipeline("tiny")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """One tiny node-classification run (shared by the tests that only read it)."""
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    tmp = tmp_path_factory.mktemp("bundle")
    path = tmp / "pipeline.toml"
    path.write_text(SBM)
    host = create_host()
    config = load_config(path, host.registry, out_dir=tmp / "run")
    result = run_pipeline(config, host, quiet=True)
    return result


def test_every_supervised_run_writes_a_bundle(trained):
    folder = trained.out_dir / "model"
    meta = json.loads((folder / "bundle.json").read_text())
    assert meta["kind"] == "node" and meta["format"] == 1
    assert meta["model"]["type"] == "sage" and meta["model"]["hidden"] == 16
    assert meta["inputs"]["in_dim"] == 8 and meta["labels"]["classes"] == 3
    assert meta["versions"]["torch"] == torch.__version__
    assert {"model.pt", "ids.parquet", "bundle.json"} <= {p.name for p in folder.iterdir()}
    assert not list(trained.out_dir.glob(".model.*"))  # no staging folder left behind
    # the standard normalisation's statistics, fitted on the training graph
    (entry,) = meta["fitted"]
    assert entry["type"] == "normalize_features" and len(entry["state"]["mean"]) == 8
    assert any(o["what"] == "model bundle" for o in trained.record["outputs"])


def test_load_bundle_rebuilds_the_trained_model(trained):
    bundle = load_bundle(trained.out_dir)
    assert not bundle.model.training
    assert bundle.kind == "node" and bundle.in_dim == 8 and bundle.differences == []
    logits = node_outputs(bundle, trained.ctx.graph())
    assert torch.equal(logits, trained.ctx.artifacts.logits)
    # layer-wise in batches: the same up to rounding
    batched = node_outputs(bundle, trained.ctx.graph(), batch_size=64)
    assert torch.allclose(batched, logits, atol=1e-5)
    assert len(bundle.ids) == 300


def test_damaged_weights_fail_the_checksum(trained, tmp_path):
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(trained.out_dir / "model", copy)
    with open(copy / "model.pt", "ab") as fh:
        fh.write(b"\0")
    with pytest.raises(DataError, match="sha256 does not match"):
        load_bundle(copy)


def test_incompatible_graphflow_version_is_refused(trained, tmp_path):
    import shutil

    copy = tmp_path / "model"
    shutil.copytree(trained.out_dir / "model", copy)
    meta = json.loads((copy / "bundle.json").read_text())
    meta["versions"]["graphflow"] = "0.9.0"
    (copy / "bundle.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match=r"incompatible bundle: graphflow 0\.9\.0 -> "):
        load_bundle(copy)
    meta["format"] = 99
    (copy / "bundle.json").write_text(json.dumps(meta))
    with pytest.raises(ConfigError, match="bundle format 99 is newer"):
        load_bundle(copy)


def test_run_folder_without_a_bundle(tmp_path):
    with pytest.raises(DataError, match=r"no model bundle \(model/bundle.json\); train"):
        load_bundle(tmp_path)
    with pytest.raises(DataError, match="no such run folder"):
        load_bundle(tmp_path / "missing")


def test_version_differences_say_whether_they_matter():
    saved = {"graphflow": "0.1.0", "torch": "1.13.1", "dgl": "2.1.0"}
    now = {"graphflow": "0.1.3", "torch": "2.13.0+cpu", "dgl": "2.2.0"}
    found = {d.package: d.severity for d in compare(saved, now)}
    assert found == {"graphflow": "note", "torch": "warning", "dgl": "note"}
    assert compare(saved, {**now, "graphflow": "0.2.0"})[0].severity == "error"
    assert compare(saved, saved) == []


def test_feature_width_must_match(trained):
    bundle = load_bundle(trained.out_dir)
    data = trained.ctx.graph()
    g = data.graph.clone()
    g.ndata["feat"] = g.ndata["feat"][:, :5]
    with pytest.raises(DataError, match="has 5 feature columns, but the model was trained on 8"):
        bundle.check_data(data.with_graph(g))


def test_missing_stateful_transform_is_refused(trained):
    from graphflow.bundle.fitted import REPLAY

    bundle = load_bundle(trained.out_dir)
    data = trained.ctx.graph()
    fresh = data.with_graph(data.graph)
    fresh.meta = {REPLAY: bundle.fitted}  # predicting, but no normalize_features ran
    with pytest.raises(DataError, match="applied normalize_features to the features, but"):
        bundle.check_data(fresh)
