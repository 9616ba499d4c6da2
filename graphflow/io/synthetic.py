"""Seeded graph generators, vectorised in torch (no Python loop over nodes or edges).

* :func:`sbm`: a stochastic block model with class-correlated features, for node
  classification (the quickstart, tests, the arxiv-scale benchmark).
* :func:`rmat`: an R-MAT / Kronecker graph with power-law degrees, for scale
  (1M nodes / 20M edges in seconds).
* :func:`overlapping_communities`: a multi-label graph of overlapping communities.
* :func:`powerlaw_communities`: power-law degrees with planted classes (a degree-corrected SBM).

Both return plain tensors; the ``synthetic`` loader turns them into a graph.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import torch


@dataclass
class Generated:
    """Edges ``src -> dst`` over ``num_nodes`` nodes, with optional features and labels."""

    src: torch.Tensor  # int64 (E,)
    dst: torch.Tensor  # int64 (E,)
    num_nodes: int
    feat: torch.Tensor | None = None  # float32 (N, F)
    label: torch.Tensor | None = None  # int64 (N,)


def sbm(nodes: int, classes: int, features: int, *, p_in: float, p_out: float, seed: int = 0,
        signal: float = 1.0) -> Generated:
    """Undirected SBM: each pair in the same class is linked with ``p_in``, else ``p_out``.

    Edges are returned in both directions, without self-loops or duplicates. Features are
    ``signal * centroid[label] + N(0, 1)`` noise, so ``signal`` sets how separable classes are.

    :param nodes: N. :param classes: C (balanced, label ``i % C`` before shuffling).
    :param features: F (0 for none). :param p_in: / :param p_out: link probabilities.
    """
    if nodes <= 0 or classes <= 0:
        raise ValueError("sbm needs nodes > 0 and classes > 0")
    if not (0 <= p_out <= 1 and 0 <= p_in <= 1):
        raise ValueError("sbm probabilities must lie in [0, 1]")
    gen = torch.Generator().manual_seed(seed)
    label = torch.arange(nodes) % classes
    label = label[torch.randperm(nodes, generator=gen)]
    order = torch.argsort(label, stable=True)  # nodes grouped by class
    sizes = torch.bincount(label, minlength=classes)
    starts = torch.cumsum(sizes, 0) - sizes
    # Number of undirected edges per class pair (a <= b): Binomial ~ Poisson for sparse graphs.
    a, b = torch.triu_indices(classes, classes)
    pairs = torch.where(a == b, sizes[a] * (sizes[a] - 1) / 2, (sizes[a] * sizes[b]).double())
    prob = torch.where(a == b, torch.tensor(p_in), torch.tensor(p_out)).double()
    counts = torch.poisson(pairs.double() * prob, generator=gen).long()
    pair_of_edge = torch.repeat_interleave(torch.arange(len(counts)), counts)
    ea, eb = a[pair_of_edge], b[pair_of_edge]
    u = starts[ea] + (torch.rand(len(ea), generator=gen) * sizes[ea]).long()
    v = starts[eb] + (torch.rand(len(eb), generator=gen) * sizes[eb]).long()
    u, v = order[u], order[v]
    keep = u != v
    u, v = u[keep], v[keep]
    lo, hi = torch.minimum(u, v), torch.maximum(u, v)
    key = torch.unique(lo * nodes + hi)
    lo, hi = key // nodes, key % nodes
    src, dst = torch.cat([lo, hi]), torch.cat([hi, lo])
    feat = None
    if features > 0:
        centroids = torch.randn(classes, features, generator=gen)
        feat = signal * centroids[label] + torch.randn(nodes, features, generator=gen)
    return Generated(src=src, dst=dst, num_nodes=nodes, feat=feat, label=label)


def overlapping_communities(nodes: int, labels: int, degree: float, *, seed: int = 0,
                            extra_labels: float = 0.4, within: float = 0.6,
                            popularity: float = 1.0) -> Generated:
    """Undirected multi-label graph of overlapping communities (a BlogCatalog-like benchmark).

    Each node joins ``1 + Poisson(extra_labels)`` distinct communities (at most ``labels``),
    picked with probability ∝ ``(rank + 1) ** -popularity``, so that a few labels are common
    and most are rare. A share ``within`` of the ``nodes * degree / 2`` undirected edges joins
    two members of one community (a random membership, then a random member of its
    community); the rest join uniform random pairs. Duplicates and self-loops are dropped, so
    the mean degree comes out slightly below ``degree``.

    :returns: edges in both directions; ``label`` float32 (N, labels) 0/1 memberships.
    """
    if nodes <= 1 or labels <= 0 or degree <= 0 or not 0 <= within <= 1:
        raise ValueError("overlapping_communities needs nodes > 1, labels > 0, degree > 0 "
                         "and within in [0, 1]")
    gen = torch.Generator().manual_seed(seed)
    weight = (torch.arange(labels, dtype=torch.float64) + 1) ** -popularity  # (C,)
    count = (1 + torch.poisson(torch.full((nodes,), extra_labels, dtype=torch.float64),
                               generator=gen)).clamp(max=labels).long()  # (N,)
    # Distinct labels per node: Gumbel top-k over the popularity weights, k = count.
    keys = weight.log() - torch.log(-torch.log(torch.rand(nodes, labels, generator=gen,
                                                          dtype=torch.float64)))
    rank = keys.argsort(1, descending=True).argsort(1)  # (N, C) rank of each label's key
    member = rank < count[:, None]  # (N, C)
    label_of, node_of = member.T.nonzero(as_tuple=True)  # (M,) memberships, by label
    size = member.sum(0)  # (C,)
    start = torch.cumsum(size, 0) - size
    total = int(nodes * degree / 2)
    inside = int(total * within)
    pick = torch.randint(node_of.numel(), (inside,), generator=gen)
    lab = label_of[pick]
    other = start[lab] + (torch.rand(inside, generator=gen) * size[lab]).long()
    u = torch.cat([node_of[pick], torch.randint(nodes, (total - inside,), generator=gen)])
    v = torch.cat([node_of[other], torch.randint(nodes, (total - inside,), generator=gen)])
    keep = u != v
    lo, hi = torch.minimum(u[keep], v[keep]), torch.maximum(u[keep], v[keep])
    key = torch.unique(lo * nodes + hi)
    lo, hi = key // nodes, key % nodes
    return Generated(src=torch.cat([lo, hi]), dst=torch.cat([hi, lo]), num_nodes=nodes,
                     label=member.float())


def powerlaw_communities(nodes: int, classes: int, degree: float, *, across: float,
                         exponent: float = 2.5, seed: int = 0) -> Generated:
    """Undirected degree-corrected SBM with power-law degrees (Karrer & Newman 2011).

    Each node gets a class (uniform) and a Chung-Lu weight ``theta ~ Pareto`` with tail
    exponent ``exponent`` (``P(theta > x) = x^-(exponent - 1)``, capped at
    ``sqrt(nodes * degree)``). Each of ``nodes * degree / 2`` edges draws one end in proportion
    to ``theta`` and, with probability ``1 - across``, the other end in proportion to
    ``theta`` within the first end's class, else among all nodes. Self-loops and duplicates are
    dropped, so the mean degree comes out slightly below ``degree``; hubs get degrees of about
    ``degree * theta / mean(theta)``.

    :returns: edges in both directions; ``label`` int64 (N,).
    """
    if nodes <= 1 or classes <= 0 or degree <= 0 or not 0 <= across <= 1 or exponent <= 1:
        raise ValueError("powerlaw_communities needs nodes > 1, classes > 0, degree > 0, "
                         "across in [0, 1] and exponent > 1")
    gen = torch.Generator().manual_seed(seed)
    label = torch.randint(classes, (nodes,), generator=gen)  # (N,)
    u01 = torch.rand(nodes, generator=gen, dtype=torch.float64)
    theta = ((1.0 - u01) ** (-1.0 / (exponent - 1.0))).clamp(max=(nodes * degree) ** 0.5)
    order = torch.argsort(label, stable=True)  # (N,) nodes grouped by class
    cum = torch.cumsum(theta[order], 0)  # (N,)
    end = torch.cumsum(torch.bincount(label, minlength=classes), 0)  # (C,)
    hi_mass = cum[(end - 1).clamp(min=0)] * (end > 0)  # (C,) mass up to each class's end
    lo_mass = torch.cat([torch.zeros(1, dtype=torch.float64), hi_mass[:-1]])  # (C,)
    m = int(nodes * degree / 2)

    def draw(lo: torch.Tensor, hi: torch.Tensor) -> torch.Tensor:  # (m,) by theta in [lo, hi)
        x = lo + torch.rand(lo.shape, generator=gen, dtype=torch.float64) * (hi - lo)
        return order[torch.searchsorted(cum, x, right=True).clamp(max=nodes - 1)]

    zero = torch.zeros(m, dtype=torch.float64)
    total = torch.full((m,), float(cum[-1]), dtype=torch.float64)
    u = draw(zero, total)  # (m,)
    inside = torch.rand(m, generator=gen) >= across  # (m,)
    c = label[u]
    v = torch.where(inside, draw(lo_mass[c], hi_mass[c]), draw(zero, total))
    keep = u != v
    lo, hi = torch.minimum(u[keep], v[keep]), torch.maximum(u[keep], v[keep])
    key = torch.unique(lo * nodes + hi)
    lo, hi = key // nodes, key % nodes
    return Generated(src=torch.cat([lo, hi]), dst=torch.cat([hi, lo]), num_nodes=nodes,
                     label=label)


def rmat(nodes: int, edges: int, *, seed: int = 0, a: float = 0.57, b: float = 0.19,
         c: float = 0.19, chunk: int = 1 << 18) -> Generated:
    """R-MAT edges (Chakrabarti et al. 2004) with the Graph500 quadrant probabilities.

    Node ids are drawn on a ``2^ceil(log2 N)`` grid, folded into ``[0, N)`` and relabelled by a
    random permutation so that hubs are spread over the id range. Duplicates and self-loops
    are kept (as in Graph500); in- and out-degrees follow a power law.

    Each edge descends ``ceil(log2 N)`` quadrant levels. Instead of one draw per level, up to
    :data:`LEVEL_BITS` levels are drawn at once from the ``4^k`` joint outcomes with Walker's
    alias method (one integer draw, two table lookups), ``chunk`` edges at a time so that the
    working arrays stay in cache. The loop runs in NumPy, single-threaded: these element-wise
    passes are memory-bound, and OpenMP threads that wait for each other on a busy machine
    made the torch version up to 8x slower. About 5x faster than one pass per level
    (``python benchmarks/io.py --rmat``).
    """
    if nodes <= 1 or edges < 0:
        raise ValueError("rmat needs nodes > 1 and edges >= 0")
    if not (a > 0 and b >= 0 and c >= 0 and a + b + c < 1):
        raise ValueError("rmat needs a > 0, b, c >= 0 and a + b + c < 1")
    rng = np.random.default_rng(seed % 2**64)  # numpy takes no negative seeds; torch does
    scale = max(1, math.ceil(math.log2(nodes)))
    perm = rng.permutation(nodes)
    n_groups = math.ceil(scale / LEVEL_BITS)
    groups = [scale // n_groups + (1 if i < scale % n_groups else 0) for i in range(n_groups)]
    tables = {k: _rmat_table(k, a, b, c) for k in set(groups)}
    src = np.empty(edges, dtype=np.int64)
    dst = np.empty(edges, dtype=np.int64)
    low = (1 << _COIN_BITS) - 1
    for start in range(0, edges, chunk):
        m = min(chunk, edges - start)
        s = np.zeros(m, dtype=np.int64)
        d = np.zeros(m, dtype=np.int64)
        for k in groups:  # k quadrant levels per draw
            threshold, alias, s_bits, d_bits = tables[k]
            x = rng.integers(0, len(threshold) << _COIN_BITS, size=m, dtype=np.int64)
            cell = x >> _COIN_BITS  # (m,) uniform alias cell
            outcome = np.where((x & low) < threshold[cell], cell, alias[cell])
            s <<= k
            s |= s_bits[outcome]
            d <<= k
            d |= d_bits[outcome]
        np.remainder(s, nodes, out=s)
        np.remainder(d, nodes, out=d)
        np.take(perm, s, out=src[start:start + m])
        np.take(perm, d, out=dst[start:start + m])
    return Generated(src=torch.from_numpy(src), dst=torch.from_numpy(dst), num_nodes=nodes)


LEVEL_BITS = 7
"""R-MAT levels drawn together: alias tables of ``4^7`` entries (128 KiB) stay in cache."""

_COIN_BITS = 20  # resolution of the alias coin: probabilities exact to 2^-20


def _rmat_table(k: int, a: float, b: float, c: float
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Alias table over the ``4^k`` outcomes of ``k`` R-MAT levels.

    Returns ``(threshold, alias, s_bits, d_bits)``: keep cell ``i`` when the coin is below
    ``threshold[i]`` (in units of ``2^-20``), else take ``alias[i]``; an outcome adds
    ``s_bits`` / ``d_bits`` (k bits each) to the source / destination ids.
    """
    quadrant = np.array([a, b, c, 1.0 - a - b - c])
    probs = np.ones(1)
    s_bits = np.zeros(1, dtype=np.int64)
    d_bits = np.zeros(1, dtype=np.int64)
    for _ in range(k):  # outcome index = base-4 digits, most significant level first
        probs = (probs[:, None] * quadrant[None, :]).reshape(-1)
        s_bits = ((s_bits[:, None] << 1) | np.array([0, 0, 1, 1])[None, :]).reshape(-1)
        d_bits = ((d_bits[:, None] << 1) | np.array([0, 1, 0, 1])[None, :]).reshape(-1)
    keep, alias = _alias(probs.tolist())
    threshold = np.round(np.array(keep) * (1 << _COIN_BITS)).astype(np.int64)
    return threshold, np.array(alias, dtype=np.int64), s_bits, d_bits


def _alias(probs: list[float]) -> tuple[list[float], list[int]]:
    """Vose's alias method: per cell, the probability of keeping it and its alias."""
    n = len(probs)
    scaled = [p * n for p in probs]
    keep, alias = [1.0] * n, list(range(n))
    small = [i for i, p in enumerate(scaled) if p < 1.0]
    large = [i for i, p in enumerate(scaled) if p >= 1.0]
    while small and large:  # over the 4^k table cells, not over nodes or edges
        s, big = small.pop(), large.pop()
        keep[s], alias[s] = scaled[s], big
        scaled[big] += scaled[s] - 1.0
        (small if scaled[big] < 1.0 else large).append(big)
    return keep, alias
