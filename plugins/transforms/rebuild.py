"""Rebuild a graph with other edges or other nodes, keeping data and ids aligned.

Every structural transform comes down to one of two moves:

* :func:`with_edges`: new edge list, each new edge copying the data of an old edge (or of
  none, for edges that did not exist: they get ``fill``);
* :func:`with_nodes`: keep / reorder nodes (``order[i]`` = old id of new node ``i``), which
  relabels the edges, gathers node data and takes the ids in the same order.
"""

from __future__ import annotations

import torch

from graphflow.compat.dgl import dgl
from graphflow.graph import GraphData


def with_edges(data: GraphData, src: torch.Tensor, dst: torch.Tensor, source: torch.Tensor,
               fill: dict[str, float] | None = None) -> GraphData:
    """The graph with edges ``src -> dst``; new edge ``i`` takes the data of old edge
    ``source[i]``, or ``fill[name]`` (default 0) where ``source[i] == -1``.
    """
    old = data.graph
    g = dgl.graph((src, dst), num_nodes=old.num_nodes())
    g.ndata.update(dict(old.ndata))
    new = source < 0
    for name, values in old.edata.items():  # over edge data keys
        if len(values) == 0:
            taken = values.new_zeros((len(source), *values.shape[1:]))
        else:
            taken = values[source.clamp(min=0)]
        if new.any():
            value = (fill or {}).get(name, 0.0)
            taken[new] = torch.as_tensor(value, dtype=values.dtype)
        g.edata[name] = taken
    return data.with_graph(g)


def with_nodes(data: GraphData, order: torch.Tensor) -> GraphData:
    """Keep the nodes ``order`` (old ids), in that order, and the edges between them."""
    old = data.graph
    n = old.num_nodes()
    new_id = torch.full((n,), -1, dtype=torch.int64)
    new_id[order] = torch.arange(len(order))
    src, dst = old.edges()
    s, d = new_id[src], new_id[dst]
    keep = (s >= 0) & (d >= 0)
    g = dgl.graph((s[keep], d[keep]), num_nodes=len(order))
    for name, values in old.ndata.items():  # over node data keys
        g.ndata[name] = values[order]
    for name, values in old.edata.items():
        g.edata[name] = values[keep]
    return data.with_graph(g, ids=data.ids.take(order))


def first_occurrences(key: torch.Tensor) -> torch.Tensor:
    """Positions of the first occurrence of each distinct value of ``key``, in input order."""
    uniq, inverse = torch.unique(key, return_inverse=True)
    first = torch.full((len(uniq),), len(key), dtype=torch.int64)
    first.scatter_reduce_(0, inverse, torch.arange(len(key)), reduce="amin")
    return torch.sort(first).values
