"""Write the small TU-format regression set that ``examples/tu_bond_energies.toml`` reads.

    python examples/data/make_bond_energies.py

120 carbon skeletons, chains and rings of 4 to 12 atoms, whose bonds are single, double or
triple (seeded, about 70 / 20 / 10 in 100). Each graph's target is the sum of its bond
energies in kJ/mol (C-C 348, C=C 614, C#C 839, textbook mean bond enthalpies): 1,310 to
6,365, far from unit scale, and a function of the bond types alone, so a model must read the
edge features. Files in ``bond_energies/`` (1-based ids, both directions of each bond):

* ``BE_A.txt``: ``row, col`` per directed edge;
* ``BE_graph_indicator.txt``: the graph of each atom;
* ``BE_graph_attributes.txt``: the target, kJ/mol;
* ``BE_node_labels.txt``: the atom type, 1 everywhere;
* ``BE_edge_labels.txt``: the bond order of each line of ``BE_A.txt``, 1, 2 or 3.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "bond_energies"
ENERGY = {1: 348.0, 2: 614.0, 3: 839.0}
"""Mean bond enthalpies of C-C, C=C and C#C, kJ/mol."""


def skeletons(count: int = 120, seed: int = 0) -> tuple[list, list, list, list]:
    """(edges, graph of each atom, targets, bond orders), 1-based."""
    rng = np.random.default_rng(seed)
    edges, indicator, targets, orders = [], [], [], []
    first = 1
    for graph in range(1, count + 1):
        size = int(rng.integers(4, 13))
        ring = graph % 2 == 0
        bonds = size if ring else size - 1
        kinds = rng.choice([1, 2, 3], size=bonds, p=[0.7, 0.2, 0.1])
        for i, kind in enumerate(kinds.tolist()):
            a, b = first + i, first + (i + 1) % size
            edges += [(a, b), (b, a)]
            orders += [kind, kind]
        indicator += [graph] * size
        targets.append(sum(ENERGY[k] for k in kinds.tolist()))
        first += size
    return edges, indicator, targets, orders


def main() -> None:
    edges, indicator, targets, orders = skeletons()
    HERE.mkdir(exist_ok=True)
    lines = {"A": [f"{a}, {b}" for a, b in edges], "graph_indicator": indicator,
             "graph_attributes": [f"{t:.1f}" for t in targets],
             "node_labels": [1] * len(indicator), "edge_labels": orders}
    for part, rows in lines.items():
        (HERE / f"BE_{part}.txt").write_text("".join(f"{r}\n" for r in rows))
    print(f"wrote {len(targets)} graphs, {len(indicator)} atoms, {len(edges) // 2} bonds "
          f"to {HERE}")


if __name__ == "__main__":
    main()
