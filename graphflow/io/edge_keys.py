"""Node pairs as int64 keys, and the first occurrence of each key, vectorised.

An edge's key is ``src * N + dst`` (directed) or ``min * N + max`` (its undirected pair, see
:func:`undirected_keys`); deduplicating edges is keeping the first occurrence of each key
(:func:`first_occurrences`). Shared by undirected loading (:mod:`graphflow.io.assemble`), the
``dedup`` and ``bidirected`` transforms and the ``link_split`` edge hold-out
(:mod:`graphflow.linkpred.edge_split`).
"""

from __future__ import annotations

import torch


def undirected_keys(src: torch.Tensor, dst: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """int64 (E,) key ``min * N + max`` of each edge's undirected pair."""
    return torch.minimum(src, dst) * num_nodes + torch.maximum(src, dst)


def first_occurrences(key: torch.Tensor) -> torch.Tensor:
    """int64 (K,) positions of the first occurrence of each distinct value of ``key``, in
    input order."""
    return torch.nonzero(_firsts(key)[0]).squeeze(1)


def first_occurrences_with_slots(key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(keep, slot)``: ``keep`` as :func:`first_occurrences`, and for every element the
    int64 index into ``keep`` of its value's first occurrence (``key[keep[slot]] == key``),
    e.g. to merge the data of duplicates into the kept element with one scatter.
    """
    is_first, first, inverse = _firsts(key)
    keep = torch.nonzero(is_first).squeeze(1)
    rank = torch.cumsum(is_first, 0) - 1  # (E,) a kept element's index into keep
    return keep, rank[first][inverse]


def _firsts(key: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One sort: bool (E,) "first of its value", int64 (U,) the first position of each
    distinct value (sorted by value), int64 (E,) each element's distinct value."""
    uniq, inverse = torch.unique(key, return_inverse=True)
    first = torch.full((len(uniq),), len(key), dtype=torch.int64, device=key.device)
    first.scatter_reduce_(0, inverse, torch.arange(len(key), device=key.device), reduce="amin")
    is_first = torch.zeros(len(key), dtype=torch.bool, device=key.device)
    is_first[first] = True
    return is_first, first, inverse
