"""benchmarks/molecules.py runs end to end on a few BBBP molecules (no timing is checked)."""

import os

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import would ask PyPI for its version

import pytest

from graphflow.testing import shared_data

pytest.importorskip("rdkit")
pytest.importorskip("ogb")


def test_both_sides_train_and_report(capsys):
    from benchmarks import molecules

    root = shared_data("molecules", "bbbp.csv")
    result = molecules.main(["--data", str(root / "bbbp.csv"), "--limit", "300", "--epochs",
                             "2", "--hidden", "16", "--layers", "2"])
    assert result["molecules"] == 300
    assert set(result["epoch_s"]) == {"graphflow", "peer"}
    assert all(r["n"] == 2 for r in result["epoch_s"].values())
    assert all(0 <= v <= 1 for v in result["test_rocauc"].values())
    assert result["parameters"]["graphflow"] == result["parameters"]["peer"]  # one network
    assert capsys.readouterr().out.strip().startswith("{")
