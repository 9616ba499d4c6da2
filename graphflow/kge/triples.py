"""Triples in: the layout WN18RR, FB15k-237 and YAGO3-10 are distributed in.

A folder holds ``train.txt``, ``valid.txt`` and ``test.txt``, one ``head<TAB>relation<TAB>
tail`` a line, and optionally ``entities.dict`` / ``relations.dict`` (``index<TAB>name``,
the order of the RotatE code). :func:`read_triples` reads them with pandas' C parser (no
Python loop over triples) into a :class:`KnowledgeGraph`: ``(n, 3)`` int64 index triples
``(head, relation, tail)`` per split and the entity and relation names, kept for every
export.

Bad input raises :class:`~graphflow.errors.DataError` in one line naming the file and the
line: a line without three fields, an empty split, a name a dict does not list, a dict with a
repeated name or an index outside ``0..n-1``, and (``unseen = "error"``) valid or test
triples naming an entity or relation that no training triple names, with their count and the
options ``unseen = "drop"`` / ``"keep"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import numpy as np
import pandas as pd
import torch

from graphflow.errors import DataError

SPLITS = ("train", "valid", "test")
Unseen = Literal["error", "drop", "keep"]


@dataclass
class KnowledgeGraph:
    """Index triples per split and the names behind the indices.

    ``splits[name]``: an ``(n, 3)`` int64 tensor of ``(head, relation, tail)``;
    ``entities`` / ``relations``: the original names (numpy object arrays), by index.
    """

    entities: np.ndarray
    relations: np.ndarray
    splits: dict[str, torch.Tensor] = field(default_factory=dict)
    name: str = "triples"

    @property
    def num_entities(self) -> int:
        return len(self.entities)

    @property
    def num_relations(self) -> int:
        return len(self.relations)

    def known(self) -> torch.Tensor:
        """Every known true triple (all splits), deduplicated: what filtering removes."""
        allt = torch.cat([t for t in self.splits.values()])
        return torch.unique(allt, dim=0)

    def __repr__(self) -> str:
        sizes = ", ".join(f"{k}={len(v)}" for k, v in self.splits.items())
        return (f"KnowledgeGraph({self.name}: {self.num_entities} entities, "
                f"{self.num_relations} relations, {sizes})")


def _read_columns(path: Path, ncols: int, what: str) -> pd.DataFrame:
    """The tab-separated file as strings, one row a line (blank lines dropped), with a
    ``line`` column (1-based); a line with another number of fields raises DataError."""
    try:
        frame = pd.read_csv(path, sep="\t", header=None, names=list(range(ncols + 1)),
                            dtype=str, keep_default_na=False, na_filter=True,
                            na_values=[], quoting=3, skip_blank_lines=False, engine="c")
    except pd.errors.ParserError as err:  # more fields than ncols + 1
        text = str(err)
        line = text.split("line ")[-1].split(",")[0] if "line " in text else "?"
        raise DataError(f"{path}, line {line}: expected {ncols} tab-separated fields "
                        f"({what}), found more") from None
    except (pd.errors.EmptyDataError, FileNotFoundError):
        frame = pd.DataFrame({i: pd.Series([], dtype=str) for i in range(ncols + 1)})
    frame["line"] = np.arange(1, len(frame) + 1)
    cells = frame[list(range(ncols + 1))]
    present = cells.notna() & (cells != "")
    blank = ~present.any(axis=1)
    good = present[list(range(ncols))].all(axis=1) & ~present[ncols]
    bad = ~good & ~blank
    if bad.any():
        row = frame[bad].iloc[0]
        found = int(present.loc[row.name].sum())
        raise DataError(f"{path}, line {int(row['line'])}: expected {ncols} tab-separated "
                        f"fields ({what}), found {found}")
    return frame[~blank].reset_index(drop=True)


def _read_dict(path: Path, what: str) -> np.ndarray:
    """``index<TAB>name`` lines as the names by index; raises DataError on a repeated name
    or indices that are not ``0..n-1``."""
    frame = _read_columns(path, 2, f"index, {what} name")
    index = pd.to_numeric(frame[0], errors="coerce")
    if index.isna().any():
        row = frame[index.isna()].iloc[0]
        raise DataError(f"{path}, line {int(row['line'])}: the index {row[0]!r} is not an "
                        f"integer")
    index = index.to_numpy(dtype=np.int64)
    n = len(frame)
    if n == 0:
        raise DataError(f"{path}: no {what}s; give index<TAB>name lines or remove the file")
    wrong = (index < 0) | (index >= n)
    dup_index = pd.Series(index).duplicated().to_numpy()
    if wrong.any() or dup_index.any():
        at = int(np.flatnonzero(wrong | dup_index)[0])
        raise DataError(f"{path}, line {int(frame['line'][at])}: index {index[at]} repeats or "
                        f"lies outside 0..{n - 1}; the indices must be 0..{n - 1}, each once")
    dup = frame[1].duplicated()
    if dup.any():
        at = int(np.flatnonzero(dup.to_numpy())[0])
        raise DataError(f"{path}, line {int(frame['line'][at])}: the {what} "
                        f"{frame[1][at]!r} is listed twice")
    names = np.empty(n, dtype=object)
    names[index] = frame[1].to_numpy()
    return names


def _codes(names: pd.Series, vocab: pd.Index, path: Path, lines: np.ndarray, what: str,
           dict_path: Path) -> np.ndarray:
    codes = vocab.get_indexer(names)
    missing = codes < 0
    if missing.any():
        at = int(np.flatnonzero(missing)[0])
        raise DataError(f"{path}, line {int(lines[at])}: the {what} {names.iloc[at]!r} is not "
                        f"in {dict_path} ({int(missing.sum())} such triples); the dict "
                        f"disagrees with the triples: fix it or remove it")
    return codes.astype(np.int64)


def read_triples(folder: Path | str, *, unseen: Unseen = "error",
                 files: dict[str, str] | None = None,
                 info=None) -> KnowledgeGraph:
    """Read ``train.txt`` / ``valid.txt`` / ``test.txt`` (+ dicts) from ``folder``.

    :param unseen: valid / test triples naming an entity or relation no training triple
        names: ``"error"`` (DataError with their count), ``"drop"`` them (one
        ``graphflow:`` line through ``info``), or ``"keep"`` them (the RotatE code's and
        the published WN18RR figures' protocol: the dicts list every entity).
    :param files: other file names per split (``{"train": "train.tsv", ...}``).
    """
    folder = Path(folder)
    names = {s: f"{s}.txt" for s in SPLITS} | dict(files or {})
    frames: dict[str, pd.DataFrame] = {}
    paths: dict[str, Path] = {}
    for split in SPLITS:
        path = folder / names[split]
        if not path.is_file():
            raise DataError(f"{path}: the {split} split is missing; the triples layout is "
                            f"train.txt, valid.txt and test.txt of head<TAB>relation<TAB>tail")
        frame = _read_columns(path, 3, "head, relation, tail")
        if frame.empty:
            raise DataError(f"{path}: the {split} split is empty; give it head<TAB>relation"
                            f"<TAB>tail lines")
        frames[split], paths[split] = frame, path
    ent_dict, rel_dict = folder / "entities.dict", folder / "relations.dict"
    if ent_dict.is_file():
        entities = _read_dict(ent_dict, "entity")
    else:
        entities = pd.unique(pd.concat(
            [pd.concat([f[0], f[2]]) for f in frames.values()], ignore_index=True).to_numpy())
    if rel_dict.is_file():
        relations = _read_dict(rel_dict, "relation")
    else:
        relations = pd.unique(pd.concat([f[1] for f in frames.values()],
                                        ignore_index=True).to_numpy())
    ent_index, rel_index = pd.Index(entities), pd.Index(relations)
    splits: dict[str, torch.Tensor] = {}
    for split, frame in frames.items():
        lines = frame["line"].to_numpy()
        h = _codes(frame[0], ent_index, paths[split], lines, "entity", ent_dict)
        r = _codes(frame[1], rel_index, paths[split], lines, "relation", rel_dict)
        t = _codes(frame[2], ent_index, paths[split], lines, "entity", ent_dict)
        splits[split] = torch.from_numpy(np.stack([h, r, t], axis=1))
    train = splits["train"]
    seen_e = torch.zeros(len(entities), dtype=torch.bool)
    seen_e[train[:, 0]] = True
    seen_e[train[:, 2]] = True
    seen_r = torch.zeros(len(relations), dtype=torch.bool)
    seen_r[train[:, 1]] = True
    for split in ("valid", "test"):
        tri = splits[split]
        ok = seen_e[tri[:, 0]] & seen_r[tri[:, 1]] & seen_e[tri[:, 2]]
        n_bad = int((~ok).sum())
        if not n_bad:
            continue
        if unseen == "error":
            at = int(torch.nonzero(~ok)[0])
            raise DataError(
                f"{paths[split]}, line {int(frames[split]['line'][at])}: {n_bad} {split} "
                f"triples name an entity or relation that no training triple names; set "
                f'unseen = "drop" to leave them out, or "keep" to rank them anyway')
        if unseen == "drop":
            splits[split] = tri[ok]
            if not len(splits[split]):
                raise DataError(f"{paths[split]}: every {split} triple names an unseen entity "
                                f"or relation; the split would be empty")
            if info is not None:
                info(f"{paths[split]}: dropped {n_bad} {split} triples naming an entity or "
                     f"relation unseen in training")
    return KnowledgeGraph(entities=np.asarray(entities, dtype=object),
                          relations=np.asarray(relations, dtype=object),
                          splits=splits, name=folder.name)
