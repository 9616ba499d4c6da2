"""benchmarks/molecules_parse.py reads its repeated table cold, then from the cache (no timing
is checked)."""

import os

import pyarrow.csv as pacsv
import pytest

from graphflow.testing import shared_data

pytest.importorskip("rdkit")


def test_the_table_repeats_the_shared_smiles_and_both_reads_finish(tmp_path, capsys):
    from benchmarks import molecules_parse

    root = shared_data("molecules", "bbbp.csv")
    shared_data("molecules", "tox21.csv")
    table = pacsv.read_csv(molecules_parse.write_table(tmp_path, 12000, root))
    assert table.num_rows == 12000 and table.column_names == ["smiles", "y"]
    smiles = table.column("smiles").to_pylist()
    assert smiles[9870:9880] == smiles[:10]  # BBBP (2,039) + Tox21 (7,831), then again
    before = {k: os.environ.get(k) for k in molecules_parse.ENV}
    result = molecules_parse.main(["--rows", "60", "--workers", "0", "--data", str(root)])
    assert result["molecules"] == 60 and result["cold_s"] > 0 and result["warm_s"] > 0
    assert {k: os.environ.get(k) for k in molecules_parse.ENV} == before  # restored
    assert capsys.readouterr().out.splitlines()[-1].startswith("{")
