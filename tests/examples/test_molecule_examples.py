"""The molecule examples run as documented (a few epochs, narrower): BBBP with GIN and a
split file read back; Tox21 with GIN + virtual node and its missing labels."""

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from graphflow.testing import shared_data

pytest.importorskip("rdkit")

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SMALL = ["--set", "train.epochs=2", "--set", "model.hidden=32", "--set", "train.hidden=32",
         "--set", "model.layers=2"]


def test_bbbp_gin_runs_and_its_split_file_is_read_back(cli, tmp_path):
    shared_data("molecules", "bbbp.csv")
    code, out, err = cli("run", EXAMPLES / "bbbp_gin.toml", "--out-dir", tmp_path / "a", *SMALL)
    assert code == 0, err
    record = json.loads((tmp_path / "a" / "run.json").read_text())
    m = record["metrics"]
    assert 0.5 < m["val_roc_auc"] <= 1 and 0 < m["test_roc_auc"] <= 1 and "test_ap" in m
    report = record["reports"]["load"]
    assert report["split"] == "scaffold" and report["molecules"] == 2039
    assert (report["train"], report["val"], report["test"]) == (1631, 204, 204)
    assert pq.read_table(tmp_path / "a" / "predictions.parquet").num_rows == 2039
    split = tmp_path / "a" / "split.json"
    code, out, err = cli("run", EXAMPLES / "bbbp_gin.toml", "--out-dir", tmp_path / "b",
                         *SMALL, "--set", 'load.split="file"', "--set",
                         f'load.split_file="{split}"')
    assert code == 0, err
    again = json.loads((tmp_path / "b" / "run.json").read_text())
    assert again["metrics"]["test_roc_auc"] == m["test_roc_auc"]  # same split, same seed


def test_tox21_gin_virtual_runs(cli, tmp_path):
    shared_data("molecules", "tox21.csv")
    code, out, err = cli("run", EXAMPLES / "tox21_gin_virtual.toml", "--out-dir", tmp_path,
                         *SMALL, "--set", "train.epochs=1")
    assert code == 0, err
    assert err.count("SMILES do not parse in RDKit") == 1
    m = json.loads((tmp_path / "run.json").read_text())["metrics"]
    assert 0.5 < m["test_roc_auc"] <= 1


def load_targets_script():
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_molecule_targets", EXAMPLES / "data" / "make_molecule_targets.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def test_the_molecule_targets_are_rdkits_crippen_logp_and_tpsa(tmp_path):
    script = load_targets_script()
    rows, bad = script.targets(["CCO", "c1ccccc1", "not a smiles", "CC(=O)O"])
    assert bad == [2]
    assert rows[0] == ("CCO", -0.0014, 20.23)  # TPSA: one hydroxyl O, 20.23 Å² (Ertl)
    assert rows[1] == ("c1ccccc1", 1.6866, 0.0)  # no N or O: no polar surface
    assert rows[2] == ("CC(=O)O", 0.0909, 37.3)  # carbonyl 17.07 + hydroxyl 20.23


def test_logp_gin_regression_runs_on_generated_targets(cli, tmp_path):
    bbbp = shared_data("molecules", "bbbp.csv") / "bbbp.csv"
    table = tmp_path / "targets.csv"
    assert load_targets_script().write(bbbp, table, limit=200) == (200, 0)
    code, out, err = cli("run", EXAMPLES / "logp_gin_regression.toml", "--out-dir",
                         tmp_path / "run", *SMALL, "--set", f'load.path="{table}"')
    assert code == 0, err
    record = json.loads((tmp_path / "run" / "run.json").read_text())
    m = record["metrics"]
    assert {"test_mae", "test_rmse", "val_mae"} <= set(m) and 0 < m["test_mae"] <= m["test_rmse"]
    report = record["reports"]["load"]
    assert report["split"] == "scaffold" and report["molecules"] == 200
    predictions = pq.read_table(tmp_path / "run" / "predictions.parquet")
    assert predictions.num_rows == 200


def test_bbbp_gin_explain_masks_every_bond_of_each_molecule(cli, tmp_path):
    """The explanation example, on the first 80 molecules of BBBP (narrower, 2 epochs): each
    explained molecule gets an importance for both directions of every bond RDKit sees, and
    no feature importances (atom features are category codes); a gradient method, which
    would need their gradients, is refused in one line."""
    import pyarrow.csv as pcsv
    from rdkit import Chem

    lines = (shared_data("molecules", "bbbp.csv") / "bbbp.csv").read_text().splitlines()[:81]
    (tmp_path / "bbbp80.csv").write_text("\n".join(lines) + "\n")
    code, out, err = cli("run", EXAMPLES / "bbbp_gin_explain.toml", "--out-dir", tmp_path / "r",
                         *SMALL, "--set", f'load.path="{tmp_path / "bbbp80.csv"}"',
                         "--set", "explain.epochs=20")
    assert code == 0, err
    edges = pcsv.read_csv(tmp_path / "r" / "explain" / "edges.csv").to_pydict()
    for mol in (0, 1, 2, 3):
        bonds = Chem.MolFromSmiles(lines[1 + mol].rsplit(",", 1)[0]).GetNumBonds()
        rows = [k for t, k in zip(edges["target"], edges["top_k"]) if t == mol]
        assert len(rows) == 2 * bonds and sum(rows) == 6
    assert not (tmp_path / "r" / "explain" / "features.csv").exists()
    ids = tmp_path / "ids.txt"
    ids.write_text("0\n")
    code, out, err = cli("explain", tmp_path / "r", "--data", EXAMPLES / "bbbp_gin_explain.toml",
                         "--set", f'load.path="{tmp_path / "bbbp80.csv"}"', "--graphs", ids,
                         "--method", "ig")
    assert code == 1 and "embeds its input features as categories" in err
    assert len(err.strip().splitlines()) == 1
