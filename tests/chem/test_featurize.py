"""OGB's featurisation: graphflow.chem.featurize against ogb.utils.smiles2graph on every
molecule of the shared BBBP and Tox21 sets, and the one-hot form."""

import os

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import would ask PyPI for its version

import numpy as np
import pyarrow.csv as pacsv
import pytest

from graphflow.testing import shared_data

pytest.importorskip("rdkit")
ogb_mol = pytest.importorskip("ogb.utils.mol")
ogb_features = pytest.importorskip("ogb.utils.features")

from graphflow.chem.featurize import (ATOM_FEATURE_DIMS, BOND_FEATURE_DIMS,  # noqa: E402
                                      featurize, one_hot)


def test_feature_sizes_are_ogbs():
    assert list(ATOM_FEATURE_DIMS) == ogb_features.get_atom_feature_dims()
    assert list(BOND_FEATURE_DIMS) == ogb_features.get_bond_feature_dims()


def _ogb_arrays(smiles):
    """smiles2graph of every molecule, concatenated as featurize lays them out."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    ok = np.array([Chem.MolFromSmiles(s) is not None for s in smiles])
    graphs = [ogb_mol.smiles2graph(s) for s, k in zip(smiles, ok) if k]
    return (ok, np.array([g["num_nodes"] for g in graphs]),
            np.concatenate([g["node_feat"] for g in graphs]),
            np.array([g["edge_index"].shape[1] for g in graphs]),
            np.concatenate([g["edge_index"] for g in graphs], axis=1),
            np.concatenate([g["edge_feat"] for g in graphs]))


@pytest.mark.parametrize("name", ["bbbp.csv", "tox21.csv"])
def test_identical_to_smiles2graph_on_the_shared_sets(name):
    root = shared_data("molecules", name)
    smiles = pacsv.read_csv(root / name).column("smiles").to_pylist()
    mols = featurize(smiles, workers=2)  # the worker path, by chunks
    ok, nodes, x, edges, index, ef = _ogb_arrays(smiles)
    np.testing.assert_array_equal(mols.ok, ok)
    np.testing.assert_array_equal(mols.num_atoms[ok], nodes)
    np.testing.assert_array_equal(mols.num_edges[ok], edges)
    np.testing.assert_array_equal(mols.atom_feat, x)
    np.testing.assert_array_equal(np.stack([mols.src, mols.dst]), index)
    np.testing.assert_array_equal(mols.bond_feat, ef)


def test_invalid_and_bondless_molecules():
    mols = featurize(["C1CC", "", "[Na+].[Cl-]", "CCO", None], workers=0)
    np.testing.assert_array_equal(mols.ok, [False, False, True, True, False])
    np.testing.assert_array_equal(mols.num_atoms, [0, 0, 2, 3, 0])
    np.testing.assert_array_equal(mols.num_edges, [0, 0, 0, 4, 0])
    ref = ogb_mol.smiles2graph("[Na+].[Cl-]")["node_feat"]
    np.testing.assert_array_equal(mols.atom_feat[:2], ref)
    np.testing.assert_array_equal(mols.src, [0, 1, 1, 2])
    np.testing.assert_array_equal(mols.dst, [1, 0, 2, 1])


def test_one_hot_blocks():
    codes = np.array([[0, 4, 1], [2, 0, 0]])
    out = one_hot(codes, BOND_FEATURE_DIMS)
    assert out.shape == (2, 13)
    np.testing.assert_array_equal(np.flatnonzero(out[0]), [0, 5 + 4, 11 + 1])
    np.testing.assert_array_equal(np.flatnonzero(out[1]), [2, 5, 11])
