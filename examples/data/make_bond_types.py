"""Write the small TU-format collection that ``examples/tu_bond_types.toml`` reads.

    python examples/data/make_bond_types.py

24 rings of 5 to 8 atoms, all of one atom type. Half have single bonds only (class 1), the
other half one double bond at a seeded place (class 2). The classes differ in their edge
labels alone: a model that reads node features and structure cannot tell them apart, one that
reads edge features can. Files in ``bond_types/`` (1-based ids, both directions of each bond):

* ``BT_A.txt``: ``row, col`` per directed edge;
* ``BT_graph_indicator.txt``: the graph of each atom;
* ``BT_graph_labels.txt``: 1 (single bonds) or 2 (one double bond);
* ``BT_node_labels.txt``: the atom type, 1 everywhere;
* ``BT_edge_labels.txt``: the bond type of each line of ``BT_A.txt``, 1 or 2.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent / "bond_types"


def rings(seed: int = 0) -> tuple[list, list, list, list]:
    """(edges, graph of each node, graph labels, edge labels), 1-based."""
    rng = np.random.default_rng(seed)
    edges, indicator, labels, bonds = [], [], [], []
    first = 1
    for size in (5, 6, 7, 8):
        for label in (1, 2, 1, 2, 1, 2):
            double = int(rng.integers(size)) if label == 2 else -1
            graph = len(labels) + 1
            for i in range(size):
                a, b = first + i, first + (i + 1) % size
                edges += [(a, b), (b, a)]
                bonds += [2 if i == double else 1] * 2
            indicator += [graph] * size
            labels.append(label)
            first += size
    return edges, indicator, labels, bonds


def main() -> None:
    edges, indicator, labels, bonds = rings()
    HERE.mkdir(exist_ok=True)
    lines = {"A": [f"{a}, {b}" for a, b in edges], "graph_indicator": indicator,
             "graph_labels": labels, "node_labels": [1] * len(indicator), "edge_labels": bonds}
    for part, rows in lines.items():
        (HERE / f"BT_{part}.txt").write_text("".join(f"{r}\n" for r in rows))
    print(f"wrote {len(labels)} graphs, {len(indicator)} atoms, {len(edges) // 2} bonds "
          f"to {HERE}")


if __name__ == "__main__":
    main()
