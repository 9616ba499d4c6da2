"""Write a TU-format collection of 600 graphs in 6 classes that differ in their motifs.

    python examples/data/make_motifs.py OUT_DIR [--graphs 600] [--seed 0]

Each graph is a random tree of 18 to 26 nodes with 2 random extra edges (random cycles, of
any length), and motifs hung on random tree nodes by one edge each: the two motifs of its
class, and with probability one half a third one drawn from all six (a distractor, which
can make a graph's motifs those of another class too). Motifs: a triangle (C3), cycles of
4, 5 and 6 nodes (C4, C5, C6), a 4-clique (K4) and a house (a 4-cycle with a triangle on one
side, 5 nodes). Classes (label 1..6): C3 + C4, C3 + C5, C4 + C5, C6 + K4, house + C3,
K4 + C4. Every node has one of 3 labels drawn at random: the labels say nothing of the class,
the structure all of it. About 33 nodes a graph.

Files in ``OUT_DIR`` (1-based ids, both directions of every edge; the ``tu`` loader reads
them with ``name = "MOTIFS"``): ``MOTIFS_A.txt``, ``MOTIFS_graph_indicator.txt``,
``MOTIFS_graph_labels.txt``, ``MOTIFS_node_labels.txt``. The generation is vectorised over
graphs, motifs and nodes (numpy), and seeded: the same seed writes the same files.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

NAME = "MOTIFS"
MOTIFS: dict[str, np.ndarray] = {  # local edges of each motif, one direction
    "C3": np.array([[0, 1], [1, 2], [2, 0]]),
    "C4": np.array([[0, 1], [1, 2], [2, 3], [3, 0]]),
    "C5": np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 0]]),
    "C6": np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0]]),
    "K4": np.array([[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]]),
    "house": np.array([[0, 1], [1, 2], [2, 3], [3, 0], [2, 4], [3, 4]]),
}
KINDS = list(MOTIFS)
SIZES = np.array([int(MOTIFS[k].max()) + 1 for k in KINDS])
CLASSES = [("C3", "C4"), ("C3", "C5"), ("C4", "C5"), ("C6", "K4"), ("house", "C3"),
           ("K4", "C4")]
BASE = (18, 26)
EXTRA_EDGES = 2
DISTRACTOR = 0.5
NODE_LABELS = 3


def collection(graphs: int = 600, seed: int = 0) -> dict[str, np.ndarray]:
    """The collection as arrays: ``edges`` (E, 2) 0-based, both directions, no loops, no
    repeats; ``graph`` (N,) the graph of each node, sorted; ``labels`` (G,) 1..6;
    ``node_labels`` (N,) 1..3. Classes are balanced (graph ``g`` has class ``g % 6 + 1``,
    then shuffled)."""
    rng = np.random.default_rng(seed)
    label = rng.permutation(np.arange(graphs) % len(CLASSES))  # (G,) class ids 0..5
    base = rng.integers(BASE[0], BASE[1] + 1, graphs)  # (G,) tree sizes
    # motif instances: the class's two, then a distractor in half the graphs
    pair = np.array([[KINDS.index(a), KINDS.index(b)] for a, b in CLASSES])  # (6, 2)
    extra = np.flatnonzero(rng.random(graphs) < DISTRACTOR)
    owner = np.concatenate([np.repeat(np.arange(graphs), 2), extra])  # (I,)
    kind = np.concatenate([pair[label].reshape(-1), rng.integers(len(KINDS), size=extra.size)])
    order = np.argsort(owner, kind="stable")
    owner, kind = owner[order], kind[order]
    size = SIZES[kind]  # (I,)
    total = base + np.bincount(owner, weights=size, minlength=graphs).astype(np.int64)
    ptr = np.concatenate([[0], np.cumsum(total)])  # (G + 1,)
    # first node of each instance: after its graph's tree and the graph's earlier instances
    before = np.cumsum(size) - size  # exclusive running sum over all instances
    first_of_graph = np.searchsorted(owner, np.arange(graphs))  # (G,) first instance index
    start = ptr[owner] + base[owner] + before - before[first_of_graph[owner]]  # (I,)
    # the trees: local node i >= 1 hangs on a uniform earlier node
    tree_owner = np.repeat(np.arange(graphs), base)
    local = np.arange(tree_owner.size) - np.repeat(np.cumsum(base) - base, base)
    child = local >= 1
    parent = np.floor(rng.random(tree_owner.size) * np.maximum(local, 1)).astype(np.int64)
    parts = [np.stack([ptr[tree_owner] + local, ptr[tree_owner] + parent], 1)[child]]
    # extra edges between tree nodes (random cycles)
    e_owner = np.repeat(np.arange(graphs), EXTRA_EDGES)
    a, b = (ptr[e_owner] + np.floor(rng.random(e_owner.size) * base[e_owner]).astype(np.int64)
            for _ in range(2))
    parts.append(np.stack([a, b], 1))
    # the motifs, one template at a time, and the edge hanging each on a tree node
    for k, name in enumerate(KINDS):
        at = start[kind == k]  # (n_k,)
        parts.append((at[:, None, None] + MOTIFS[name][None]).reshape(-1, 2))
    hook = ptr[owner] + np.floor(rng.random(owner.size) * base[owner]).astype(np.int64)
    parts.append(np.stack([start, hook], 1))
    one_way = np.concatenate(parts)
    one_way = one_way[one_way[:, 0] != one_way[:, 1]]  # an extra edge may be a loop
    both = np.concatenate([one_way, one_way[:, ::-1]])
    edges = np.unique(both, axis=0)  # sorted, no repeats
    n = int(ptr[-1])
    return {"edges": edges, "graph": np.repeat(np.arange(graphs), total),
            "labels": label + 1, "node_labels": rng.integers(1, NODE_LABELS + 1, n)}


def write_tu(folder: Path, data: dict[str, np.ndarray]) -> Path:
    """``data`` (from :func:`collection`) as the TU files ``MOTIFS_*.txt`` in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    np.savetxt(folder / f"{NAME}_A.txt", data["edges"] + 1, fmt="%d", delimiter=", ")
    for part, key in (("graph_indicator", "graph"), ("graph_labels", "labels"),
                      ("node_labels", "node_labels")):
        offset = 1 if key == "graph" else 0
        np.savetxt(folder / f"{NAME}_{part}.txt", data[key] + offset, fmt="%d")
    return folder


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="folder for the MOTIFS_*.txt files")
    p.add_argument("--graphs", type=int, default=600)
    p.add_argument("--seed", type=int, default=0)
    a = p.parse_args()
    if a.graphs < len(CLASSES):
        p.error(f"--graphs must be at least {len(CLASSES)}, got {a.graphs}")
    data = collection(a.graphs, a.seed)
    write_tu(a.out, data)
    print(f"wrote {a.graphs} graphs, {data['graph'].size} nodes, {len(data['edges']) // 2} "
          f"edges to {a.out}")


if __name__ == "__main__":
    main()
