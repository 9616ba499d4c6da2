"""Splits of a molecule set into train / valid / test positions.

* :func:`scaffold_split`: the scaffold split of MoleculeNet (DeepChem's ``ScaffoldSplitter``)
  as OGB and Hu et al. (ICLR 2020) use it. Molecules are grouped by their Bemis-Murcko
  scaffold SMILES; each group's positions ascending; the groups sorted by (size, first
  position), descending (Python's ``sorted(..., key=lambda s: (len(s), s[0]), reverse=True)``:
  the largest first, among equal sizes the later first position first); then each group in
  turn goes to train while train stays within ``frac_train * n``, else to valid while train
  + valid stay within ``(frac_train + frac_valid) * n``, else to test. Deterministic: no seed.
* :func:`random_split`: a permutation from the seed, cut at the fractions.
* :func:`read_split_file` / :func:`split_record`: a split as JSON lists of graph ids, written
  by one run and read back by another (checked: every molecule once, none unknown).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow as pa

from graphflow.errors import DataError

PARTS = ("train", "val", "test")


def scaffold_split(scaffolds: list[str], fractions: tuple[float, float, float] = (0.8, 0.1, 0.1)
                   ) -> dict[str, np.ndarray]:
    """int64 positions of ``train`` / ``val`` / ``test`` (see the module docstring)."""
    n = len(scaffolds)
    if n == 0:
        return {p: np.zeros(0, dtype=np.int64) for p in PARTS}
    # group by scaffold: np.unique gives each position its group, first positions ascending
    _, first, group = np.unique(np.asarray(scaffolds, dtype=object), return_index=True,
                                return_inverse=True)
    group = group.reshape(-1)
    sizes = np.bincount(group)
    # sorted by (size, first position), both descending (reverse=True on the tuple)
    order = np.lexsort((-first, -sizes))
    cut_train = fractions[0] * n
    cut_valid = (fractions[0] + fractions[1]) * n
    part_of_group = np.empty(len(sizes), dtype=np.int64)
    n_train = n_valid = 0
    for gi, size in zip(order.tolist(), sizes[order].tolist()):  # one pass over the groups
        if n_train + size > cut_train:
            if n_train + n_valid + size > cut_valid:
                part_of_group[gi] = 2
            else:
                part_of_group[gi] = 1
                n_valid += size
        else:
            part_of_group[gi] = 0
            n_train += size
    # positions grouped in the groups' order, ascending within each group
    part = part_of_group[group]
    rank = np.empty(len(sizes), dtype=np.int64)
    rank[order] = np.arange(len(sizes))
    by_group = np.lexsort((np.arange(n), rank[group]))
    return {p: by_group[part[by_group] == k] for k, p in enumerate(PARTS)}


def random_split(n: int, fractions: tuple[float, float, float], seed: int
                 ) -> dict[str, np.ndarray]:
    """A permutation of ``0..n-1`` from ``seed`` cut at the fractions (positions sorted);
    fractions summing to 1 leave no molecule out (test takes the rest)."""
    perm = np.random.default_rng(seed).permutation(n)
    a = int(round(fractions[0] * n))
    b = min(n, a + int(round(fractions[1] * n)))
    c = n if abs(sum(fractions) - 1) < 1e-9 else min(n, b + int(round(fractions[2] * n)))
    return {"train": np.sort(perm[:a]), "val": np.sort(perm[a:b]), "test": np.sort(perm[b:c])}


def split_record(parts: dict[str, np.ndarray], ids: pa.Array, method: str) -> dict:
    """The split as JSON: the method and each part's graph ids."""
    return {"method": method,
            **{p: ids.take(pa.array(parts[p])).to_pylist() for p in PARTS}}


def read_split_file(path: Path, ids: pa.Array) -> dict[str, np.ndarray]:
    """The positions of a split file's ``train`` / ``val`` / ``test`` graph ids.

    :raises DataError: the file is unreadable, lists an id that is not a molecule of the
        set, lists one twice, or leaves molecules out.
    """
    if not path.is_file():
        raise DataError(f"split file not found: {path}")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise DataError(f"split file {path}: not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(obj, dict) or "train" not in obj:
        raise DataError(f'split file {path}: expected {{"train": [...], "val": [...], '
                        f'"test": [...]}} of graph ids')
    known = ids.to_pylist()
    lookup = {v: i for i, v in enumerate(known)}
    seen = np.full(len(known), -1, dtype=np.int64)
    out: dict[str, np.ndarray] = {}
    for k, p in enumerate(PARTS):
        listed = obj.get(p, [])
        if not isinstance(listed, list):
            raise DataError(f"split file {path}: {p!r} must be a list of graph ids")
        pos = np.fromiter((lookup.get(v, -1) for v in listed), dtype=np.int64,
                          count=len(listed))
        if (pos < 0).any():
            bad = listed[int(np.flatnonzero(pos < 0)[0])]
            raise DataError(f"split file {path}: {p!r} lists graph {bad!r}, which is not a "
                            f"molecule of this set (an invalid SMILES, or another file)")
        uniq, counts = np.unique(pos, return_counts=True)
        twice = uniq[counts > 1]
        again = pos[seen[pos] >= 0]
        if twice.size or again.size:
            g = known[int(twice[0] if twice.size else again[0])]
            raise DataError(f"split file {path}: graph {g!r} is listed twice; the parts must "
                            f"not overlap")
        seen[pos] = k
        out[p] = np.sort(pos)
    missing = np.flatnonzero(seen < 0)
    if missing.size:
        raise DataError(f"split file {path}: {missing.size} molecules are in no part (the "
                        f"first: graph {known[int(missing[0])]!r}); the file must cover the set")
    return out
