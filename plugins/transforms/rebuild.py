"""Rebuild a graph with other edges or other nodes, keeping data and ids aligned.

Every structural transform comes down to one of two moves:

* :func:`with_edges`: new edge list, each new edge copying the data of an old edge (or of
  none, for edges that did not exist: they get ``fill``);
* :func:`with_nodes`: keep / reorder nodes (``order[i]`` = old id of new node ``i``), which
  relabels the edges, gathers node data and takes the ids in the same order.

:func:`adjacency` gives the graph's pattern to ``scipy.sparse.csgraph``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
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


def with_typed_edges(data: GraphData,
                     changes: dict[tuple[str, str, str],
                                   tuple[torch.Tensor, torch.Tensor, torch.Tensor]],
                     fill: dict[str, float] | None = None) -> GraphData:
    """A typed graph with new edges for the relations in ``changes``: ``{canonical: (src,
    dst, source)}``, each new edge ``i`` taking the data of old edge ``source[i]`` of that
    relation, or ``fill`` where ``source[i] == -1`` (as :func:`with_edges`). Other relations,
    node data and ids stay as they are."""
    old = data.graph
    edges = {c: changes[c][:2] if c in changes else old.edges(etype=c)
             for c in old.canonical_etypes}
    g = dgl.heterograph(edges, num_nodes_dict={t: old.num_nodes(t) for t in old.ntypes},
                        idtype=old.idtype)
    for ntype in old.ntypes:  # over node types
        g.nodes[ntype].data.update(dict(old.nodes[ntype].data))
    for c in old.canonical_etypes:  # over relations
        frame = dict(old.edges[c].data)
        if c not in changes:
            g.edges[c].data.update(frame)
            continue
        source = changes[c][2]
        new = source < 0
        for name, values in frame.items():
            taken = values[source.clamp(min=0)] if len(values) else \
                values.new_zeros((len(source), *values.shape[1:]))
            if new.any():
                taken[new] = torch.as_tensor((fill or {}).get(name, 0.0), dtype=values.dtype)
            g.edges[c].data[name] = taken
    return data.with_graph(g)


def with_nodes(data: GraphData, order: torch.Tensor, *, sort_edges: bool = False) -> GraphData:
    """Keep the nodes ``order`` (old ids), in that order, and the edges between them.

    :param sort_edges: also sort the kept edges by (new destination, new source), stably;
        otherwise they keep their order.
    """
    old = data.graph
    n = old.num_nodes()
    new_id = torch.full((n,), -1, dtype=torch.int64)
    new_id[order] = torch.arange(len(order))
    src, dst = old.edges()
    s, d = new_id[src], new_id[dst]
    eid = torch.nonzero((s >= 0) & (d >= 0)).squeeze(1)  # kept edges, old ids
    if sort_edges:
        eid = eid[torch.argsort(d[eid] * len(order) + s[eid], stable=True)]
    g = dgl.graph((s[eid], d[eid]), num_nodes=len(order))
    for name, values in old.ndata.items():  # over node data keys
        g.ndata[name] = values[order]
    for name, values in old.edata.items():
        g.edata[name] = values[eid]
    return data.with_graph(g, ids=data.ids.take(order))


def adjacency(data: GraphData) -> sp.csr_matrix:
    """The graph's (N, N) sparse pattern, for scipy.sparse.csgraph."""
    src, dst = data.graph.edges()
    n = data.num_nodes
    present = np.ones(len(src), dtype=bool)  # duplicates sum to True, never overflow to 0
    return sp.csr_matrix((present, (src.numpy(), dst.numpy())), shape=(n, n))
