"""The smiles loader: SMILES tables into molecule collections, its splits, cache and refusals."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import torch

pytest.importorskip("rdkit")

from graphflow.context import RunContext  # noqa: E402
from graphflow.errors import DataError  # noqa: E402
from graphflow_plugins.loaders.smiles import SmilesLoader, SmilesOptions  # noqa: E402

CSV = ("smiles,a,b\n"
       "CCO,1,0\n"
       "c1ccccc1O,0,\n"
       "not a smiles,1,1\n"
       "c1ccncc1N,,1\n"
       "CC(=O)O,0,1\n"
       "C1CCCCC1,1,0\n")


def context(tmp_path, host, quiet=False):
    from graphflow.config import load_config

    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetic"\nnodes = 10\n[model]\ntype = "gcn"\n'
                    '[train]\ntype = "node_classification"\n')
    config = load_config(path, host.registry, out_dir=tmp_path / "out")
    return RunContext(config=config, host=host, device=torch.device("cpu"), seed=0,
                      rng=torch.Generator().manual_seed(0), out_dir=tmp_path / "out",
                      quiet=quiet)


def load(tmp_path, host, text=CSV, name="mols.csv", **options):
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text)
    else:
        pq.write_table(text, path)
    ctx = context(tmp_path, host)
    return SmilesLoader(SmilesOptions(path=path, **options)).load(ctx), ctx


def test_reads_molecules_targets_and_skips_invalid_with_one_line(tmp_path, host, capsys):
    data, ctx = load(tmp_path, host, split="random")
    err = capsys.readouterr().err
    assert err.count("graphflow:") == 1
    assert "1 of 6 SMILES do not parse in RDKit and were left out (lines 4)" in err
    g = data.graphs
    assert g.ids.to_pylist() == [0, 1, 3, 4, 5]  # rows, the invalid one left out
    y = g.labels.numpy()
    assert y.shape == (5, 2) and np.isnan(y[1, 1]) and np.isnan(y[2, 0])
    assert y[0].tolist() == [1, 0] and y[4].tolist() == [1, 0]
    assert g.sizes().tolist() == [3, 7, 7, 4, 6]
    assert data.graph.ndata["feat"].shape == (27, 9)
    assert data.graph.edata["edge_feat"].shape == (2 * (2 + 7 + 7 + 3 + 6), 3)
    # the split: every molecule in one part, recorded and written for a later run
    parts = torch.stack([g.masks[p] for p in ("train", "val", "test")])
    assert parts.sum(0).tolist() == [1] * 5
    assert ctx.reports["train"]["split"] == "random"
    written = json.loads((ctx.out_dir / "split.json").read_text())
    assert sorted(written["train"] + written["val"] + written["test"]) == [0, 1, 3, 4, 5]


def test_a_split_file_is_read_back(tmp_path, host):
    (tmp_path / "s.json").write_text(json.dumps({"train": [0, 1, 3], "val": [4], "test": [5]}))
    data, _ = load(tmp_path, host, split="file", split_file=tmp_path / "s.json")
    assert data.graphs.masks["test"].tolist() == [False, False, False, False, True]
    (tmp_path / "s.json").write_text(json.dumps({"train": [0, 1], "val": [4], "test": [5]}))
    with pytest.raises(DataError, match="1 molecules are in no part"):
        load(tmp_path, host, split="file", split_file=tmp_path / "s.json")


def test_onehot_and_parquet(tmp_path, host):
    table = pa.table({"smi": ["CCO", "CN"], "y": [0.5, None]})
    data, _ = load(tmp_path, host, table, name="m.parquet", smiles="smi",
                   featurization="onehot", split="none")
    x = data.graph.ndata["feat"]
    assert x.shape == (5, 174) and x.sum(1).tolist() == [9.0] * 5
    assert data.graph.edata["edge_feat"].shape == (6, 13)
    assert np.isnan(data.graphs.labels[1, 0].item()) and not data.graphs.masks


def test_the_cache_is_used_the_second_time(tmp_path, host, monkeypatch):
    monkeypatch.setenv("GRAPHFLOW_CACHE_DIR", str(tmp_path / "cache"))
    first, _ = load(tmp_path, host, split="scaffold")
    files = list((tmp_path / "cache" / "molecules").glob("*.npz"))
    assert len(files) == 1

    def no_parse(*a, **k):
        raise AssertionError("parsed again")

    monkeypatch.setattr("graphflow.chem.featurize.featurize", no_parse)
    second, _ = load(tmp_path, host, split="scaffold")
    assert torch.equal(first.graph.ndata["feat"], second.graph.ndata["feat"])
    assert torch.equal(first.graphs.masks["train"], second.graphs.masks["train"])


@pytest.mark.parametrize("text, options, words", [
    ("smi,a\nCCO,1\n", {}, r"mols.csv: no SMILES column 'smiles'; columns: smi"),
    ("smiles,a\nCCO,1\n", {"targets": ["b"]}, r"mols.csv: no target column 'b'"),
    ("smiles,a\nCCO,1\nCN,yes\n", {}, r"mols.csv line 3: target 'a' is 'yes', not a number"),
    ("smiles,a\nxx,1\nyy,0\n", {}, r"mols.csv: no SMILES of column 'smiles' parses"),
    (CSV, {"on_invalid": "error"}, r"mols.csv line 4: RDKit cannot parse 'not a smiles'"),
    ("smiles,a,b\nCCO,1,0\nCN,0,1\n", {"split": "stratified"}, r"takes one target"),
])
def test_bad_input_in_one_line(tmp_path, host, text, options, words):
    from graphflow.errors import GraphflowError

    with pytest.raises(GraphflowError, match=words) as info:
        load(tmp_path, host, text, **options)
    assert "\n" not in str(info.value)
