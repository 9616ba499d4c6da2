"""The scaffold split against MoleculeNet's procedure (DeepChem's ScaffoldSplitter, as OGB and
Hu et al. 2020 apply it), random splits and split files."""

import json

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv
import pytest

from graphflow.chem.splits import random_split, read_split_file, scaffold_split
from graphflow.errors import DataError
from graphflow.testing import shared_data


def reference_scaffold_split(smiles, frac_train=0.8, frac_valid=0.1):
    """DeepChem's ScaffoldSplitter.split / pretrain-gnns' scaffold_split, written out from
    their published definition (a dict of scaffold -> indices, sorted by (len, first index)
    with reverse=True, greedy fill)."""
    from rdkit.Chem.Scaffolds import MurckoScaffold

    scaffolds = {}
    for i, s in enumerate(smiles):
        scaffold = MurckoScaffold.MurckoScaffoldSmiles(smiles=s, includeChirality=False)
        scaffolds.setdefault(scaffold, []).append(i)
    scaffolds = {k: sorted(v) for k, v in scaffolds.items()}
    sets = [v for _, v in sorted(scaffolds.items(), key=lambda x: (len(x[1]), x[1][0]),
                                 reverse=True)]
    train_cutoff = frac_train * len(smiles)
    valid_cutoff = (frac_train + frac_valid) * len(smiles)
    train, valid, test = [], [], []
    for s in sets:
        if len(train) + len(s) > train_cutoff:
            if len(train) + len(valid) + len(s) > valid_cutoff:
                test += s
            else:
                valid += s
        else:
            train += s
    return train, valid, test


# a small published-style case: benzene derivatives, a pyridine pair, acyclic molecules
# (scaffold ""), a naphthalene, a cyclohexane
SMALL = ["c1ccccc1O", "CCO", "c1ccccc1C", "c1ccncc1N", "CCCC", "c1ccc2ccccc2c1",
         "c1ccccc1CC", "C1CCCCC1", "c1ccncc1", "CC(=O)O"]


def _ours(smiles):
    from graphflow.chem.featurize import featurize

    return scaffold_split(featurize(smiles, scaffolds=True, workers=0).scaffolds)


def test_small_case_matches_the_reference():
    pytest.importorskip("rdkit")
    ref = reference_scaffold_split(SMALL)
    # groups: acyclic "" {1, 4, 9}, benzene {0, 2, 6}, pyridine {3, 8}, naphthalene {5},
    # cyclohexane {7}; by (size, first index) descending: "", benzene, pyridine, cyclohexane,
    # naphthalene. Train takes 3 + 3 + 2 = 8 <= 0.8 * 10; cyclohexane: 9 > 8, 9 <= 9, valid;
    # naphthalene: 10 > 9, test.
    assert ref == ([1, 4, 9, 0, 2, 6, 3, 8], [7], [5])
    ours = _ours(SMALL)
    assert [ours[p].tolist() for p in ("train", "val", "test")] == list(ref)


def test_bbbp_matches_the_reference():
    pytest.importorskip("rdkit")
    root = shared_data("molecules", "bbbp.csv")
    smiles = pacsv.read_csv(root / "bbbp.csv").column("smiles").to_pylist()
    ref = reference_scaffold_split(smiles)
    ours = _ours(smiles)
    assert [ours[p].tolist() for p in ("train", "val", "test")] == list(ref)


def test_random_split_covers_once_and_follows_the_seed():
    a = random_split(100, (0.8, 0.1, 0.1), seed=3)
    allpos = np.concatenate(list(a.values()))
    assert sorted(allpos.tolist()) == list(range(100))
    assert [v.size for v in a.values()] == [80, 10, 10]
    assert random_split(100, (0.8, 0.1, 0.1), seed=3)["test"].tolist() == a["test"].tolist()
    assert random_split(100, (0.8, 0.1, 0.1), seed=4)["test"].tolist() != a["test"].tolist()


def test_split_file_refusals(tmp_path):
    ids = pa.array([0, 1, 2, 4])
    path = tmp_path / "split.json"
    path.write_text(json.dumps({"train": [0, 1], "val": [2], "test": [4]}))
    assert {k: v.tolist() for k, v in read_split_file(path, ids).items()} == \
        {"train": [0, 1], "val": [2], "test": [3]}
    for bad, words in (({"train": [0, 1], "val": [2], "test": [3]}, "graph 3, which is not"),
                       ({"train": [0, 1], "val": [1, 2], "test": [4]}, "graph 1 is listed twice"),
                       ({"train": [0, 1], "val": [], "test": [4]}, "1 molecules are in no part")):
        path.write_text(json.dumps(bad))
        with pytest.raises(DataError, match=words):
            read_split_file(path, ids)
