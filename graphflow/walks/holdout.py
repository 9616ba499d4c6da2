"""Edge hold-out for link prediction, done *before* walking so that nothing leaks.

The node2vec protocol (Grover & Leskovec 2016, section 4.4): remove a fraction of the edges,
learn embeddings on the rest, then tell the removed edges from node pairs that are not edges.
Pairs are undirected: holding out ``{u, v}`` removes both ``u -> v`` and ``v -> u`` (and every
parallel copy), so the walks can never traverse a held-out edge in either direction. No node
loses all its edges: a chosen edge whose endpoint would be left without any is kept in the
graph (so slightly fewer than ``fraction`` may be held out). Self-loops are never held out.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.io.edge_keys import first_occurrences, undirected_keys


@dataclass
class HeldOut:
    """The walk graph's edges and the held-out pairs.

    :ivar src: / :ivar dst: int64 (E',) the edges that stay. :ivar weight: their weights or None.
    :ivar pairs: int64 (2, H) held-out undirected pairs ``(u, v)`` with ``u < v``.
    """

    src: torch.Tensor
    dst: torch.Tensor
    weight: torch.Tensor | None
    pairs: torch.Tensor


def hold_out_edges(src: torch.Tensor, dst: torch.Tensor, num_nodes: int,
                   weight: torch.Tensor | None, fraction: float,
                   generator: torch.Generator | None = None) -> HeldOut:
    """Remove about ``fraction`` of the distinct undirected pairs (see the module docstring)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"holdout fraction must lie in (0, 1), got {fraction}")
    keys = undirected_keys(src, dst, num_nodes)  # (E,)
    pairs = torch.unique(keys[src != dst])  # (U,) distinct undirected non-loop pairs
    u, v = pairs // num_nodes, pairs % num_nodes
    degree = torch.bincount(torch.cat([u, v]), minlength=num_nodes)  # distinct neighbors
    want = int(round(fraction * pairs.numel()))
    chosen = torch.randperm(pairs.numel(), generator=generator)[:want]  # (H,)
    cu, cv = u[chosen], v[chosen]
    removed = torch.bincount(torch.cat([cu, cv]), minlength=num_nodes)
    # A node about to lose every neighbor keeps all its chosen edges.
    starved = removed >= degree  # (N,)
    ok = ~(starved[cu] | starved[cv])
    chosen = chosen[ok]
    out_keys = torch.sort(pairs[chosen]).values  # (H,)
    stay = ~torch.isin(keys, out_keys)  # (E,)
    held = torch.stack([out_keys // num_nodes, out_keys % num_nodes])  # (2, H)
    return HeldOut(src=src[stay], dst=dst[stay],
                   weight=None if weight is None else weight[stay], pairs=held)


def sample_non_edges(src: torch.Tensor, dst: torch.Tensor, num_nodes: int, count: int,
                     generator: torch.Generator | None = None) -> torch.Tensor:
    """int64 (2, count) distinct pairs ``u < v`` joined by no edge in either direction.

    Draws in vectorised rounds of uniform pairs and rejects edges, self-pairs and repeats.
    """
    if num_nodes < 2:
        raise ValueError("need at least two nodes to sample non-edges")
    edges = torch.unique(undirected_keys(src, dst, num_nodes))
    possible = num_nodes * (num_nodes - 1) // 2 - int((edges // num_nodes != edges % num_nodes).sum())
    if count > possible:
        raise ValueError(f"asked for {count} non-edges but the graph has only {possible}")
    found = torch.zeros(0, dtype=torch.int64)
    while found.numel() < count:
        draw = max(2 * (count - found.numel()), 1024)
        a = torch.randint(num_nodes, (draw,), generator=generator)
        b = torch.randint(num_nodes, (draw,), generator=generator)
        key = undirected_keys(a, b, num_nodes)
        key = key[(a != b) & ~torch.isin(key, edges)]
        found = torch.cat([found, key])
        found = found[first_occurrences(found)]  # drop repeats, keep the order of drawing
    found = found[:count]
    return torch.stack([found // num_nodes, found % num_nodes])
