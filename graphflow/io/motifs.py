"""The explanation benchmarks of GNNExplainer (Ying et al. 2019), with their ground truth.

A base graph with motifs attached; a node's label is its role in its motif (0: base), and the
edges inside a motif are the ground truth an explanation of a motif node should find.

* :func:`ba_shapes`: a Barabási–Albert base of 300 nodes (``m = 5``) and 80 five-node
  "house" motifs; labels 0 (base), 1 (the two nodes under the roof), 2 (the floor),
  3 (the roof); 700 nodes (:data:`HOUSE`).
* :func:`tree_cycles`: a balanced binary tree of height 8 (511 nodes) and 80 six-node
  cycles; labels 0 (tree) and 1 (cycle); 991 nodes.
* :func:`tree_grid`: the same tree and 80 3×3 grids; labels 0 and 1; 1231 nodes.

As in the paper's generator (``synthetic_structsim.build_graph`` of the GNNExplainer code):
motif ``k``'s first node is linked to base node ``k * floor(base_nodes / motifs)``, and then
random edges between uniform node pairs are added, ``noise`` times the number of undirected
edges (the paper's text says 10%, the default here; its code passed 1%). Features are all
ones (the paper's ``ConstFeatureGen``), so only structure separates the classes.

Everything is vectorised in torch: the Barabási–Albert base by the Batagelj–Brandes edge
list (each new edge end copies a uniformly chosen earlier end, i.e. picks a node with
probability proportional to its degree), resolved by pointer jumping in ``O(log E)``
vector passes, with no loop over nodes.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

HOUSE = (
    torch.tensor([[0, 1], [1, 2], [2, 3], [3, 0], [0, 4], [1, 4]]),  # (6, 2) edges
    torch.tensor([1, 1, 2, 2, 3]),  # roles: 0-1 under the roof, 2-3 floor, 4 roof
)
"""The house motif of the GNNExplainer code (``synthetic_structsim.house``): its edges
within the motif and each node's label."""

CYCLE6 = (torch.stack([torch.arange(6), (torch.arange(6) + 1) % 6], 1), torch.ones(6, dtype=torch.int64))
"""A six-node cycle: edges ``k -> k+1 mod 6``, every node label 1."""

_g = torch.arange(9).view(3, 3)
GRID3 = (torch.cat([torch.stack([_g[:, :-1].reshape(-1), _g[:, 1:].reshape(-1)], 1),
                    torch.stack([_g[:-1, :].reshape(-1), _g[1:, :].reshape(-1)], 1)]),
         torch.ones(9, dtype=torch.int64))
"""A 3×3 grid (``nx.grid_graph([3, 3])``): 12 edges, every node label 1."""
del _g


@dataclass
class MotifGraph:
    """An undirected graph (edges in both directions) with motif roles and ground truth.

    :ivar src, dst: int64 (E,) edges, both directions of every undirected edge.
    :ivar label: int64 (N,) role of each node (0: base).
    :ivar motif_edge: bool (E,) whether the edge joins two nodes of one motif.
    :ivar motif: int64 (N,) the motif each node belongs to, -1 for base nodes.
    :ivar feat: float32 (N, F) all ones.
    """

    src: torch.Tensor
    dst: torch.Tensor
    num_nodes: int
    label: torch.Tensor
    motif_edge: torch.Tensor
    motif: torch.Tensor
    feat: torch.Tensor
    num_classes: int


def barabasi_albert(nodes: int, m: int, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """Undirected Barabási–Albert edges ``(lo, hi)``, each once, vectorised.

    Starts from a star of ``m + 1`` nodes (as networkx does); every later node ``v`` draws
    ``m`` endpoints among nodes ``< v`` with probability proportional to their degree. In the
    Batagelj–Brandes edge list ``M`` (``M[2e]``: the new node of edge ``e``, ``M[2e+1]``: its
    target), a target is ``M[r]`` for ``r`` uniform over the ends written before ``v``'s
    edges; the chains ``r -> M[r]`` are resolved by pointer jumping. Repeated draws of one
    target by one node are kept once (networkx redraws them), so a node may get fewer than
    ``m`` edges.
    """
    if nodes <= m or m < 1:
        raise ValueError(f"barabasi_albert needs nodes > m >= 1, got nodes={nodes}, m={m}")
    n_new = nodes - m - 1
    e_star = m
    n_edges = e_star + n_new * m
    ends = torch.empty(2 * n_edges, dtype=torch.int64)  # the edge list M
    ends[0:2 * e_star:2] = 0  # star centre
    ends[1:2 * e_star:2] = torch.arange(1, m + 1)
    new_node = torch.arange(m + 1, nodes).repeat_interleave(m)  # (n_new * m,)
    ends[2 * e_star::2] = new_node
    first = 2 * (e_star + (new_node - m - 1) * m)  # (n_new * m,) ends written before v's edges
    pick = (torch.rand(n_new * m, generator=gen, dtype=torch.float64) * first).long()
    # pointer[p]: for the target end p, the earlier end it copies; known ends point to
    # themselves. Jump until every pointer lands on a known (even) end.
    pointer = torch.arange(2 * n_edges)
    pointer[2 * e_star + 1::2] = pick
    known = torch.ones(2 * n_edges, dtype=torch.bool)
    known[2 * e_star + 1::2] = False
    while not bool(known[pointer].all()):  # O(log E) passes over the whole list
        pointer = torch.where(known[pointer], pointer, pointer[pointer])
    ends = ends[pointer]
    u, v = ends[0::2], ends[1::2]
    lo, hi = torch.minimum(u, v), torch.maximum(u, v)
    key = torch.unique(lo * nodes + hi)
    return key // nodes, key % nodes


def binary_tree(height: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The balanced binary tree of ``height`` (``2^(height+1) - 1`` nodes, ``nx.balanced_tree(2,
    height)``): edges ``(parent, child)``."""
    child = torch.arange(1, 2 ** (height + 1) - 1)
    return (child - 1) // 2, child


def attach_motifs(base_lo: torch.Tensor, base_hi: torch.Tensor, base_nodes: int,
                  motif: tuple[torch.Tensor, torch.Tensor], motifs: int, noise: float,
                  features: int, gen: torch.Generator) -> MotifGraph:
    """Attach ``motifs`` copies of ``motif`` to the base, add ``noise`` random edges, and
    return the graph with both edge directions, labels and the motif edge mask."""
    if motifs < 1 or motifs > base_nodes:
        raise ValueError(f"motifs = {motifs}: need 1 <= motifs <= {base_nodes} base nodes")
    if noise < 0:
        raise ValueError(f"noise = {noise}: must be >= 0")
    edges, roles = motif
    size = roles.numel()
    start = base_nodes + torch.arange(motifs) * size  # (K,) first node of each motif
    m_lo = (start[:, None] + edges[None, :, 0]).reshape(-1)  # (K * e,)
    m_hi = (start[:, None] + edges[None, :, 1]).reshape(-1)
    spacing = base_nodes // motifs
    anchor = torch.arange(motifs) * spacing  # (K,) base node of each motif
    n = base_nodes + motifs * size
    lo = torch.cat([base_lo, m_lo, anchor])
    hi = torch.cat([base_hi, m_hi, start])
    inside = torch.cat([torch.zeros(base_lo.numel(), dtype=torch.bool),
                        torch.ones(m_lo.numel(), dtype=torch.bool),
                        torch.zeros(motifs, dtype=torch.bool)])
    a, b = torch.minimum(lo, hi), torch.maximum(lo, hi)
    key = a * n + b
    extra = int(round(noise * key.numel()))
    if extra:
        # Draw more pairs than needed, drop self-loops, existing edges and repeats, keep `extra`.
        ru = torch.randint(n, (2 * extra + 16,), generator=gen)
        rv = torch.randint(n, (2 * extra + 16,), generator=gen)
        rkey = torch.minimum(ru, rv) * n + torch.maximum(ru, rv)
        ok = (ru != rv) & ~torch.isin(rkey, key)
        rkey = rkey[ok]
        uniq, first = _first_occurrence(rkey)
        rkey = uniq[torch.argsort(first)][:extra]
        key = torch.cat([key, rkey])
        inside = torch.cat([inside, torch.zeros(rkey.numel(), dtype=torch.bool)])
    a, b = key // n, key % n
    label = torch.cat([torch.zeros(base_nodes, dtype=torch.int64), roles.repeat(motifs)])
    motif_of = torch.cat([torch.full((base_nodes,), -1, dtype=torch.int64),
                          torch.arange(motifs).repeat_interleave(size)])
    return MotifGraph(src=torch.cat([a, b]), dst=torch.cat([b, a]), num_nodes=n, label=label,
                      motif_edge=torch.cat([inside, inside]), motif=motif_of,
                      feat=torch.ones(n, features), num_classes=int(roles.max()) + 1)


def _first_occurrence(key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Unique values of ``key`` and the position of each one's first occurrence."""
    uniq, inverse = torch.unique(key, return_inverse=True)
    pos = torch.full((uniq.numel(),), key.numel(), dtype=torch.int64)
    pos.scatter_reduce_(0, inverse, torch.arange(key.numel()), reduce="amin")
    return uniq, pos


def ba_shapes(*, base: int = 300, motifs: int = 80, noise: float = 0.1, features: int = 10,
              m: int = 5, seed: int = 0) -> MotifGraph:
    """BA-Shapes: a Barabási–Albert base of ``base`` nodes and ``motifs`` houses (4 classes)."""
    gen = torch.Generator().manual_seed(seed)
    lo, hi = barabasi_albert(base, m, gen)
    return attach_motifs(lo, hi, base, HOUSE, motifs, noise, features, gen)


def tree_cycles(*, height: int = 8, motifs: int = 80, noise: float = 0.1, features: int = 10,
                seed: int = 0) -> MotifGraph:
    """Tree-Cycles: a binary tree of ``height`` and ``motifs`` six-node cycles (2 classes)."""
    gen = torch.Generator().manual_seed(seed)
    lo, hi = binary_tree(height)
    return attach_motifs(lo, hi, 2 ** (height + 1) - 1, CYCLE6, motifs, noise, features, gen)


def tree_grid(*, height: int = 8, motifs: int = 80, noise: float = 0.1, features: int = 10,
              seed: int = 0) -> MotifGraph:
    """Tree-Grid: a binary tree of ``height`` and ``motifs`` 3×3 grids (2 classes)."""
    gen = torch.Generator().manual_seed(seed)
    lo, hi = binary_tree(height)
    return attach_motifs(lo, hi, 2 ** (height + 1) - 1, GRID3, motifs, noise, features, gen)
