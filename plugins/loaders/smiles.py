"""``[load] type = "smiles"``: a molecule set as a table of SMILES strings and targets."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError, first_line
from graphflow.graph import GraphData
from graphflow.graphs.build import Sources, build_collection
from graphflow.io.atomic import atomic_path, write_json
from graphflow.io.parquet import read_parquet
from graphflow.options import option

Featurization = Literal["ogb", "onehot"]
SplitMethod = Literal["scaffold", "random", "stratified", "file", "none"]

CACHE_VERSION = 1
"""Bumped when the cached arrays change meaning."""


@dataclass
class SmilesOptions:
    path: Path = option(doc="The table: .csv, .tsv / .txt / .smi (tab-separated), or .parquet, "
                            "with a header row.")
    smiles: str = option("smiles", "The column of SMILES strings.")
    targets: list[str] = option([], "Target columns (empty cells = missing, NaN); default: "
                                    "every column but the SMILES one.")
    featurization: Featurization = option(
        "ogb", '"ogb": OGB\'s 9 atom and 3 bond categorical features as integer codes (what '
               'AtomEncoder / BondEncoder embed; identical to ogb.utils.smiles2graph), or '
               '"onehot": the same features one-hot (174 atom, 13 bond columns).')
    on_invalid: Literal["skip", "error"] = option(
        "skip", 'A SMILES RDKit cannot parse: "skip" it (one warning counting them) or '
                'stop with an "error".')
    split: SplitMethod = option(
        "scaffold", 'train/val/test split of the molecules: "scaffold" (Bemis-Murcko, the '
                    'OGB / MoleculeNet procedure), "random" or "stratified" (one task, from '
                    'the seed), "file" (split_file), or "none" (the task splits).')
    fractions: list[float] = option([0.8, 0.1, 0.1], "train / val / test fractions.")
    split_file: Path | None = option(
        None, 'A split written by an earlier run (its split.json: {"train": [...], "val": '
              '[...], "test": [...]} of graph ids = row numbers), with split = "file".')
    scaffold_chirality: bool = option(
        False, "Keep stereochemistry in the scaffolds (includeChirality; OGB / DeepChem: "
               "false).")
    workers: int | None = option(
        None, "Processes parsing SMILES by chunks; default: the CPUs (at most 8) from 4,000 "
              "molecules, else none.")
    cache: bool = option(True, "Keep the parsed molecules on disk (GRAPHFLOW_CACHE_DIR or "
                               "~/.cache/graphflow/molecules), keyed by the file's hash and "
                               "the options, and read them back next time.")
    delimiter: str = option("", 'Column separator of a text table; default: "," for .csv, '
                                "tab otherwise.")

    def __post_init__(self) -> None:
        if len(self.fractions) != 3 or any(f < 0 for f in self.fractions) \
                or sum(self.fractions) > 1 + 1e-9:
            raise ValueError(f"fractions must be 3 numbers (train, val, test) summing to at "
                             f"most 1, got {self.fractions}")
        if (self.split == "file") != (self.split_file is not None):
            raise ValueError('split = "file" and split_file go together')


def _read(path: Path, delimiter: str) -> tuple[pa.Table, int, str]:
    """The table, the line (CSV) or row (Parquet) of its first data row, and the word."""
    if not path.is_file():
        raise DataError(f"SMILES table not found: {path}")
    if path.suffix.lower() == ".parquet":
        return read_parquet(path, what="SMILES table").table, 1, "row"
    sep = delimiter or ("," if path.suffix.lower() == ".csv" else "\t")
    try:
        table = pacsv.read_csv(path, parse_options=pacsv.ParseOptions(delimiter=sep),
                               convert_options=pacsv.ConvertOptions(strings_can_be_null=True))
    except pa.ArrowInvalid as exc:
        raise DataError(f"SMILES table {path}: cannot read it ({first_line(exc)})") from None
    return table, 2, "line"


def _targets(table: pa.Table, names: list[str], path: Path, first: int, word: str
             ) -> np.ndarray:
    out = np.empty((table.num_rows, len(names)), dtype=np.float32)
    for j, name in enumerate(names):
        if name not in table.column_names:
            raise DataError(f"SMILES table {path}: no target column {name!r}; columns: "
                            f"{', '.join(table.column_names)}")
        col = table.column(name).combine_chunks()
        if pa.types.is_null(col.type):
            out[:, j] = np.nan
            continue
        if not (pa.types.is_integer(col.type) or pa.types.is_floating(col.type)
                or pa.types.is_boolean(col.type)):
            bad = _first_non_number(col)
            raise DataError(f"SMILES table {path} {word} {bad + first}: target {name!r} is "
                            f"{col[bad].as_py()!r}, not a number (empty = missing)")
        out[:, j] = col.cast(pa.float64()).to_numpy(zero_copy_only=False)
    return out


def _first_non_number(col: pa.Array) -> int:
    for i, v in enumerate(col.to_pylist()):  # only on the way to an error
        if v is None:
            continue
        try:
            float(v)
        except (TypeError, ValueError):
            return i
    return 0


def _cache_file(path: Path, smiles: str, scaffolds: bool, chirality: bool) -> Path:
    from rdkit import __version__ as rdkit_version

    from graphflow.runtime.calibrate import cache_dir

    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    key = json.dumps({"file": h.hexdigest(), "smiles": smiles, "scaffolds": scaffolds,
                      "chirality": chirality, "rdkit": rdkit_version,
                      "version": CACHE_VERSION}, sort_keys=True)
    return cache_dir() / "molecules" / f"{hashlib.sha256(key.encode()).hexdigest()[:24]}.npz"


class SmilesLoader(Loader):
    """Molecules from a table of SMILES strings (RDKit: ``pip install 'graphflow[chem]'``).

    One graph per parsed molecule (graph id = its row, 0-based), atoms as nodes with implicit
    hydrogens, each bond two directed edges. Features: OGB's (``featurization = "ogb"``:
    ``ndata["feat"]`` holds the 9 atom codes, ``edata["edge_feat"]`` the 3 bond codes, as
    floats; what ``[model] input_encoder = "atom"`` and ``gine``'s ``edge_encoder = "bond"``
    embed) or the same one-hot. Targets are float, NaN where a cell is empty: 0/1 columns
    train ``graph_classification`` (binary cross-entropy over the present entries), others
    ``graph_regression``. The split (scaffold by default) is set on the collection, recorded in
    run.json's reports and written to ``split.json`` in the run folder, which ``split =
    "file"`` reads back.
    """

    name = "smiles"
    summary = "Molecules: a CSV / Parquet table of SMILES and targets (RDKit, OGB features)"
    Options = SmilesOptions

    def check(self) -> None:
        o = self.options
        if not o.path.is_file():
            raise DataError(f"SMILES table not found: {o.path}")
        if o.split_file is not None and not o.split_file.is_file():
            raise DataError(f"split file not found: {o.split_file}")

    def load(self, ctx: RunContext) -> GraphData:
        from graphflow.chem import require_rdkit

        require_rdkit()
        from graphflow.chem.featurize import (ATOM_FEATURE_DIMS, BOND_FEATURE_DIMS, Molecules,
                                              featurize, one_hot)

        o = self.options
        table, first, word = _read(o.path, o.delimiter)
        if o.smiles not in table.column_names:
            raise DataError(f"SMILES table {o.path}: no SMILES column {o.smiles!r}; columns: "
                            f"{', '.join(table.column_names)} (set smiles = the column)")
        names = o.targets or [c for c in table.column_names if c != o.smiles]
        if not names:
            raise DataError(f"SMILES table {o.path}: no target column besides {o.smiles!r}")
        y = _targets(table, names, o.path, first, word)
        smiles = table.column(o.smiles).combine_chunks().cast(pa.string()).to_pylist()
        scaffolds = o.split == "scaffold"
        mols = self._molecules(ctx, smiles, scaffolds, featurize, Molecules)
        bad = np.flatnonzero(~mols.ok)
        if bad.size == len(smiles):
            raise DataError(f"SMILES table {o.path}: no SMILES of column {o.smiles!r} parses "
                            f"in RDKit ({len(smiles)} rows); is it the SMILES column?")
        if bad.size:
            rows = ", ".join(str(int(i) + first) for i in bad[:5])
            if o.on_invalid == "error":
                raise DataError(f"SMILES table {o.path} {word} {int(bad[0]) + first}: RDKit "
                                f"cannot parse {smiles[int(bad[0])]!r} (on_invalid = "
                                f'"skip" leaves such molecules out)')
            ctx.info(f"graphflow: {o.path.name}: {bad.size} of {len(smiles)} SMILES do not "
                     f"parse in RDKit and were left out ({word}s {rows}"
                     f"{', ...' if bad.size > 5 else ''})")
        keep = np.flatnonzero(mols.ok)
        g = keep.size
        atoms = mols.num_atoms[keep]
        edges = mols.num_edges[keep]
        atom_ptr = np.zeros(g + 1, dtype=np.int64)
        np.cumsum(atoms, out=atom_ptr[1:])
        graph_of_node = np.repeat(np.arange(g, dtype=np.int64), atoms)
        shift = np.repeat(atom_ptr[:-1], edges)  # each edge's molecule's first node
        src, dst = mols.src + shift, mols.dst + shift
        if o.featurization == "onehot":
            x = one_hot(mols.atom_feat, ATOM_FEATURE_DIMS)
            e = one_hot(mols.bond_feat, BOND_FEATURE_DIMS)
        else:
            x = mols.atom_feat.astype(np.float32)
            e = mols.bond_feat.astype(np.float32)
        ids = pa.array(keep)
        data = build_collection(
            name=o.path.stem, num_nodes=int(atom_ptr[-1]), src=src, dst=dst,
            graph_of_node=graph_of_node, num_graphs=g,
            sources=Sources(edges=f"SMILES table {o.path}", graph_index=f"SMILES table {o.path}",
                            graph_labels=f"SMILES table {o.path}"),
            graph_targets=y[keep], node_attributes=x, edge_features=e, features="attributes",
            graph_ids=ids,
            meta={"source": str(o.path), "featurization": o.featurization, "targets": names,
                  "atom_feature_dims": list(ATOM_FEATURE_DIMS),
                  "bond_feature_dims": list(BOND_FEATURE_DIMS)})
        if o.split == "none":
            return data
        parts = self._split(ctx, mols, keep, y[keep], ids)
        import torch

        masks = {}
        for p, pos in parts.items():
            m = torch.zeros(g, dtype=torch.bool)
            m[torch.from_numpy(pos)] = True
            masks[p] = m
        data.graphs = data.graphs.with_masks(masks)
        from graphflow.chem.splits import split_record

        record = split_record(parts, ids, o.split)
        ctx.reports[ctx.section] = {"molecules": g, "invalid": int(bad.size),
                                    "split": o.split, "fractions": list(o.fractions),
                                    **{p: int(v.size) for p, v in parts.items()}}
        if ctx.world.is_main:
            out = ctx.out_dir / "split.json"
            write_json(out, record)
            ctx.add_output(out, f"{o.split} split (graph ids), for split_file")
        return data

    def _molecules(self, ctx: RunContext, smiles: list, scaffolds: bool, featurize, Molecules):
        o = self.options
        cache = _cache_file(o.path, o.smiles, scaffolds, o.scaffold_chirality) if o.cache \
            else None
        if cache is not None and cache.is_file():
            try:
                with np.load(cache, allow_pickle=False) as z:
                    return Molecules(ok=z["ok"], num_atoms=z["num_atoms"],
                                     atom_feat=z["atom_feat"], num_edges=z["num_edges"],
                                     src=z["src"], dst=z["dst"], bond_feat=z["bond_feat"],
                                     scaffolds=z["scaffolds"].tolist() if scaffolds else None)
            except (OSError, KeyError, ValueError):
                pass  # unreadable: parse again and rewrite it
        try:
            mols = featurize(smiles, scaffolds=scaffolds, chirality=o.scaffold_chirality,
                             workers=o.workers)
        except ValueError as exc:
            raise DataError(f"SMILES table {o.path}: {first_line(exc)}") from None
        if cache is not None:
            arrays = {"ok": mols.ok, "num_atoms": mols.num_atoms, "atom_feat": mols.atom_feat,
                      "num_edges": mols.num_edges, "src": mols.src, "dst": mols.dst,
                      "bond_feat": mols.bond_feat,
                      "scaffolds": np.asarray(mols.scaffolds or [], dtype=str)}
            try:
                with atomic_path(cache) as tmp:
                    with open(tmp, "wb") as fh:
                        np.savez(fh, **arrays)
            except (OSError, DataError) as exc:
                ctx.info(f"graphflow: could not cache the parsed molecules in {cache.parent} "
                         f"({first_line(exc)}); they will be parsed again next run")
        return mols

    def _split(self, ctx: RunContext, mols, keep: np.ndarray, y: np.ndarray,
               ids: pa.Array) -> dict[str, np.ndarray]:
        from graphflow.chem.splits import random_split, read_split_file, scaffold_split

        o = self.options
        fr = tuple(o.fractions)
        if o.split == "scaffold":
            return scaffold_split([mols.scaffolds[i] for i in keep.tolist()], fr)
        if o.split == "random":
            return random_split(keep.size, fr, ctx.seed)
        if o.split == "file":
            return read_split_file(o.split_file, ids)
        # stratified: one task
        if y.shape[1] != 1:
            raise ConfigError(f'[load] split = "stratified" takes one target, {o.path} has '
                              f'{y.shape[1]}; use "scaffold" or "random"')
        import torch

        from graphflow.graphs.folds import stratified_parts

        t = torch.from_numpy(y[:, 0].copy())
        labels = torch.where(torch.isnan(t), -1, t).to(torch.int64)
        masks = stratified_parts(labels, keep.size, train=fr[0], val=fr[1], test=fr[2],
                                 seed=ctx.seed)
        return {p: masks[p].nonzero().squeeze(1).numpy() for p in ("train", "val", "test")}
