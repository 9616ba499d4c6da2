"""Write a molecule regression set: SMILES and two RDKit descriptors as targets.

    python examples/data/make_molecule_targets.py [--smiles CSV] [--out CSV] [--limit N]

Reads the SMILES of a table (default: the shared BBBP copy,
``../shared/data/molecules/bbbp.csv`` beside this checkout, 2,039 molecules) and writes
``--out`` (default ``examples/data/molecule_targets.csv``, what
``examples/logp_gin_regression.toml`` reads; not kept in git) with the columns:

* ``smiles``: the SMILES as given;
* ``logp``: Wildman-Crippen logP (RDKit ``Crippen.MolLogP``; Wildman & Crippen, J. Chem.
  Inf. Comput. Sci. 1999), the octanol/water partition coefficient as a sum of per-atom
  contributions by atom type: the computed cousin of MoleculeNet's Lipophilicity set;
* ``tpsa``: topological polar surface area in square ångström (RDKit ``rdMolDescriptors.
  CalcTPSA``; Ertl et al., J. Med. Chem. 2000), a sum of per-fragment contributions of the
  N and O atoms (no S or P).

Both are exact functions of the molecular graph that add up over atoms, so a graph network
with a sum read-out can learn them; the figures say how close it gets on unseen scaffolds.
SMILES RDKit cannot parse are left out and counted (every BBBP SMILES parses in RDKit
2026.09). ``--limit N`` keeps the first N rows (the tests use a few hundred). The same input
writes the same file.
"""

from __future__ import annotations

import argparse
import csv
import io
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_SMILES = HERE.parents[2] / "shared" / "data" / "molecules" / "bbbp.csv"
DEFAULT_OUT = HERE / "molecule_targets.csv"
COLUMNS = ("smiles", "logp", "tpsa")


def targets(smiles: list[str]) -> tuple[list[tuple[str, float, float]], list[int]]:
    """(rows of (smiles, logp, tpsa) for the SMILES that parse, 0-based indices of those
    that do not)."""
    from rdkit import Chem, RDLogger
    from rdkit.Chem import Crippen, rdMolDescriptors

    RDLogger.DisableLog("rdApp.*")  # failures are counted once, not logged one by one
    rows, bad = [], []
    for i, s in enumerate(smiles):  # RDKit has no array interface: one molecule at a time
        mol = Chem.MolFromSmiles(s)
        if mol is None or mol.GetNumAtoms() == 0:
            bad.append(i)
            continue
        rows.append((s, round(Crippen.MolLogP(mol), 4),
                     round(rdMolDescriptors.CalcTPSA(mol), 2)))
    return rows, bad


def read_smiles(path: Path, column: str = "smiles", limit: int | None = None) -> list[str]:
    with path.open(newline="", encoding="utf-8") as f:
        reader = csv.DictReader(f)
        if column not in (reader.fieldnames or ()):
            raise SystemExit(f"{path}: no column {column!r}; columns: "
                             f"{', '.join(reader.fieldnames or ())}")
        out = [row[column] for row in reader]
    return out[:limit] if limit is not None else out


def write(src: Path, out: Path, *, column: str = "smiles", limit: int | None = None
          ) -> tuple[int, int]:
    """Write ``out`` from ``src``'s SMILES; returns (molecules written, left out)."""
    rows, bad = targets(read_smiles(src, column, limit))
    text = io.StringIO()
    w = csv.writer(text, lineterminator="\n")
    w.writerow(COLUMNS)
    w.writerows(rows)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".partial")
    tmp.write_text(text.getvalue(), encoding="utf-8")
    tmp.replace(out)  # atomic: a reader never sees half a file
    return len(rows), len(bad)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--smiles", type=Path, default=DEFAULT_SMILES,
                   help="CSV with a SMILES column (default: the shared BBBP copy)")
    p.add_argument("--column", default="smiles", help="the SMILES column")
    p.add_argument("--out", type=Path, default=DEFAULT_OUT)
    p.add_argument("--limit", type=int, default=None, help="keep the first N rows")
    a = p.parse_args()
    if not a.smiles.is_file():
        p.error(f"{a.smiles}: not found; give --smiles PATH (a CSV with a SMILES column)")
    if a.limit is not None and a.limit < 1:
        p.error(f"--limit must be >= 1, got {a.limit}")
    written, left_out = write(a.smiles, a.out, column=a.column, limit=a.limit)
    print(f"wrote {written} molecules (logp, tpsa) to {a.out}; {left_out} SMILES did not parse "
          f"and were left out")


if __name__ == "__main__":
    main()
