"""SMILES → graph arrays with OGB's featurisation (``ogb.utils.smiles2graph``).

Each atom gets 9 categorical features and each bond 3, as the indices OGB's
``atom_to_feature_vector`` / ``bond_to_feature_vector`` give (``ogb/utils/features.py``):

==========================  ====================================================  =====
atom feature                values (the last one: anything else, ``misc``)          size
==========================  ====================================================  =====
atomic number               1..118, misc                                           119
chirality tag               unspecified, tetrahedral CW, CCW, other, misc          5
total degree                0..10, misc                                            12
formal charge               -5..5, misc                                            12
total hydrogens             0..8, misc                                             10
radical electrons           0..4, misc                                             6
hybridization               SP, SP2, SP3, SP3D, SP3D2, misc                        6
aromatic                    no, yes                                                2
in a ring                   no, yes                                                2
==========================  ====================================================  =====

Bonds: type (single, double, triple, aromatic, misc: 5), stereo (none, Z, E, cis, trans,
any: 6), conjugated (2). Every bond is two directed edges, ``i → j`` then ``j → i``, in RDKit's
bond order, as ``smiles2graph`` writes them; hydrogens are implicit.

RDKit has no array interface, so reading a molecule is a Python pass over its atoms and bonds;
:func:`featurize` runs it in worker processes by chunks for large sets, and the per-chunk
arrays are joined with NumPy. A SMILES that RDKit cannot parse, or that has no atom, is marked
invalid (``ok = False``) and contributes nothing.
"""

from __future__ import annotations

import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from multiprocessing import get_context

import numpy as np

ATOM_FEATURE_DIMS = (119, 5, 12, 12, 10, 6, 6, 2, 2)
"""Sizes of the 9 atom features (``ogb.utils.features.get_atom_feature_dims()``)."""
BOND_FEATURE_DIMS = (5, 6, 2)
"""Sizes of the 3 bond features (``ogb.utils.features.get_bond_feature_dims()``)."""

_CHIRALITY = ("CHI_UNSPECIFIED", "CHI_TETRAHEDRAL_CW", "CHI_TETRAHEDRAL_CCW", "CHI_OTHER")
_HYBRIDIZATION = ("SP", "SP2", "SP3", "SP3D", "SP3D2")
_BOND_TYPE = ("SINGLE", "DOUBLE", "TRIPLE", "AROMATIC")
_BOND_STEREO = ("STEREONONE", "STEREOZ", "STEREOE", "STEREOCIS", "STEREOTRANS", "STEREOANY")

CHUNK = 1000
"""Molecules per worker task."""
PARALLEL_FROM = 4000
"""Sets smaller than this are read in the calling process (workers cost a second to start)."""


@dataclass
class Molecules:
    """The graphs of ``n`` SMILES strings, concatenated.

    :ivar ok: bool (n,): parsed (with at least one atom).
    :ivar num_atoms: int64 (n,): atoms of each molecule (0 when not ok).
    :ivar atom_feat: int64 (A, 9): OGB's atom features, molecule after molecule.
    :ivar num_edges: int64 (n,): directed edges (twice the bonds).
    :ivar src, dst: int64 (E,): each molecule's own atom indices (0-based within it).
    :ivar bond_feat: int64 (E, 3): OGB's bond features of each directed edge.
    :ivar scaffolds: the Bemis-Murcko scaffold SMILES of each molecule ("" when not ok), or
        None when not asked for.
    """

    ok: np.ndarray
    num_atoms: np.ndarray
    atom_feat: np.ndarray
    num_edges: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    bond_feat: np.ndarray
    scaffolds: list[str] | None = None


def _by_value(enum: type, names: tuple[str, ...]) -> dict:
    """{RDKit enum value: its index in ``names``} for the values whose name is listed."""
    return {v: names.index(str(v)) for v in enum.values.values() if str(v) in names}


def _read_chunk(args: tuple[list, bool, bool]) -> tuple:
    """Worker: the arrays of one chunk of SMILES (see :class:`Molecules`)."""
    smiles, scaffolds, chirality = args
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")  # a failed parse is counted and reported once, not logged
    if scaffolds:
        from rdkit.Chem.Scaffolds import MurckoScaffold
    rd = Chem.rdchem
    # keyed by RDKit's enum values themselves (OGB compares their names: str(value))
    chir = _by_value(rd.ChiralType, _CHIRALITY)
    hyb = _by_value(rd.HybridizationType, _HYBRIDIZATION)
    btype = _by_value(rd.BondType, _BOND_TYPE)
    stereo = _by_value(rd.BondStereo, _BOND_STEREO)
    n = len(smiles)
    ok = np.zeros(n, dtype=bool)
    atoms = np.zeros(n, dtype=np.int64)
    edges = np.zeros(n, dtype=np.int64)
    feats: list[tuple[int, ...]] = []
    bonds: list[tuple[int, ...]] = []
    scaf: list[str] = []
    for k, s in enumerate(smiles):
        mol = Chem.MolFromSmiles(s) if isinstance(s, str) and s else None
        if mol is None or mol.GetNumAtoms() == 0:
            scaf.append("")
            continue
        ok[k] = True
        atoms[k] = mol.GetNumAtoms()
        for a in mol.GetAtoms():
            z = a.GetAtomicNum()
            deg, charge, hs, rad = (a.GetTotalDegree(), a.GetFormalCharge(),
                                    a.GetTotalNumHs(), a.GetNumRadicalElectrons())
            feats.append((z - 1 if 1 <= z <= 118 else 118,
                          chir.get(a.GetChiralTag(), 4),
                          deg if 0 <= deg <= 10 else 11,
                          charge + 5 if -5 <= charge <= 5 else 11,
                          hs if 0 <= hs <= 8 else 9,
                          rad if 0 <= rad <= 4 else 5,
                          hyb.get(a.GetHybridization(), 5),
                          int(a.GetIsAromatic()), int(a.IsInRing())))
        for b in mol.GetBonds():
            st = b.GetStereo()
            if st not in stereo:  # OGB's list.index raises here; name the molecule instead
                raise ValueError(f"bond stereo {st} of {s!r} is not one of OGB's")
            bonds.append((b.GetBeginAtomIdx(), b.GetEndAtomIdx(),
                          btype.get(b.GetBondType(), 4), stereo[st],
                          int(b.GetIsConjugated())))
        edges[k] = 2 * mol.GetNumBonds()
        if scaffolds:
            scaf.append(MurckoScaffold.MurckoScaffoldSmiles(mol=mol,
                                                            includeChirality=chirality))
    af = np.asarray(feats, dtype=np.int64).reshape(-1, 9)
    bd = np.asarray(bonds, dtype=np.int64).reshape(-1, 5)
    return ok, atoms, af, edges, bd, scaf if scaffolds else None


def featurize(smiles: list, *, scaffolds: bool = False, chirality: bool = False,
              workers: int | None = None) -> Molecules:
    """OGB's graphs of ``smiles`` (see the module docstring).

    :param scaffolds: also compute each molecule's Bemis-Murcko scaffold SMILES
        (``MurckoScaffoldSmiles(mol=..., includeChirality=chirality)``).
    :param workers: processes reading chunks of :data:`CHUNK` molecules; None = the CPUs
        (at most 8) for sets of :data:`PARALLEL_FROM` molecules or more, else in-process.
    """
    n = len(smiles)
    if workers is None:
        workers = min(os.cpu_count() or 1, 8) if n >= PARALLEL_FROM else 0
    chunks = [(smiles[i:i + CHUNK], scaffolds, chirality) for i in range(0, n, CHUNK)] or \
        [([], scaffolds, chirality)]
    if workers > 1 and len(chunks) > 1:
        # spawn: the workers import RDKit and this module only, never torch's threads
        with ProcessPoolExecutor(max_workers=min(workers, len(chunks)),
                                 mp_context=get_context("spawn")) as pool:
            parts = list(pool.map(_read_chunk, chunks))
    else:
        parts = [_read_chunk(c) for c in chunks]
    ok = np.concatenate([p[0] for p in parts])
    atoms = np.concatenate([p[1] for p in parts])
    edges = np.concatenate([p[3] for p in parts])
    bonds = np.concatenate([p[4] for p in parts])  # (B, 5): begin, end, 3 features
    # each bond is two directed edges, i -> j then j -> i (smiles2graph's order)
    src = np.stack([bonds[:, 0], bonds[:, 1]], 1).reshape(-1)
    dst = np.stack([bonds[:, 1], bonds[:, 0]], 1).reshape(-1)
    bond_feat = np.repeat(bonds[:, 2:], 2, axis=0)
    scaf = [s for p in parts for s in p[5]] if scaffolds else None
    return Molecules(ok=ok, num_atoms=atoms,
                     atom_feat=np.concatenate([p[2] for p in parts]), num_edges=edges,
                     src=src, dst=dst, bond_feat=bond_feat, scaffolds=scaf)


def one_hot(codes: np.ndarray, dims: tuple[int, ...]) -> np.ndarray:
    """float32 (rows, sum(dims)): each categorical column of ``codes`` (rows, len(dims))
    one-hot in its own block."""
    offsets = np.concatenate([[0], np.cumsum(dims)[:-1]]).astype(np.int64)
    out = np.zeros((codes.shape[0], int(sum(dims))), dtype=np.float32)
    rows = np.repeat(np.arange(codes.shape[0]), codes.shape[1])
    out[rows, (codes + offsets).reshape(-1)] = 1.0
    return out
