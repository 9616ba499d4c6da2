"""The graph that flows between stages: a CPU DGLGraph plus the users' original node ids.

Conventions for data on the graph (DGL's own names):

=================  ==========================================================================
``ndata["feat"]``  float32 features, (N, F)
``ndata["label"]`` int64 class ids (N,), or float32 0/1 targets (N, C) for multi-label data
``ndata[...mask]`` bool ``train_mask`` / ``val_mask`` / ``test_mask``, (N,)
``edata["weight"]`` float32 edge weights, (E,), when the input has them
=================  ==========================================================================

Internally nodes are ``0..N-1``; :class:`NodeIds` keeps the original ids (strings or integers)
so that every exporter can write them back.

A *typed* graph (several node types or several relations) holds a DGL heterograph: the same
names per node type (``g.nodes[ntype].data["feat"]``, features may differ in width from type
to type and are absent for featureless types) and per canonical edge type
(``g.edges[(src_type, relation, dst_type)].data["weight"]``); reverse relations are named
``rev-<relation>``. ``GraphData.typed_ids`` then keeps the original ids of each node type,
and ``GraphData.ids`` numbers all nodes together (``0..N-1``). A graph with one node type and
one relation is always a homogeneous ``GraphData``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graphs.collection import GraphCollection

if TYPE_CHECKING:  # graph.py does not import linkpred/ at run time
    from graphflow.linkpred.held_out import LinkSplit


class NodeIds:
    """Original node ids, indexed by internal id ``0..N-1``.

    ``values`` is a pyarrow array (string or int64), or None when the ids are ``0..N-1``
    themselves.
    """

    __slots__ = ("_values", "_n")

    def __init__(self, n: int, values: pa.Array | None = None):
        if values is not None and len(values) != n:
            raise ValueError(f"{len(values)} node ids for {n} nodes")
        if isinstance(values, pa.ChunkedArray):
            values = values.combine_chunks()
        self._values = values
        self._n = int(n)

    @classmethod
    def identity(cls, n: int) -> NodeIds:
        return cls(n, None)

    @property
    def is_identity(self) -> bool:
        return self._values is None

    def __len__(self) -> int:
        return self._n

    def to_arrow(self) -> pa.Array:
        """The ids as a pyarrow array (int64 ``0..N-1`` for identity ids)."""
        if self._values is None:
            return pa.array(np.arange(self._n, dtype=np.int64))
        return self._values

    def take(self, index: torch.Tensor | np.ndarray) -> NodeIds:
        """The ids of the nodes ``index`` (a subset or a permutation), in that order."""
        idx = index.cpu().numpy() if isinstance(index, torch.Tensor) else np.asarray(index)
        if self._values is None:
            if len(idx) == self._n and np.array_equal(idx, np.arange(self._n)):
                return self
            return NodeIds(len(idx), pa.array(idx.astype(np.int64)))
        return NodeIds(len(idx), self._values.take(pa.array(idx.astype(np.int64))))

    def __repr__(self) -> str:
        kind = "identity" if self._values is None else str(self._values.type)
        return f"NodeIds(n={self._n}, {kind})"


@dataclass
class GraphData:
    """A homogeneous graph on the CPU, with its original node ids.

    ``links``: the held-out pairs of a link prediction split (the ``link_split`` transform),
    whose positives are no longer edges of ``graph``; None without a split.

    ``graphs``: for a collection of graphs, the node → graph index and the graph table
    (:class:`~graphflow.graphs.collection.GraphCollection`); ``graph`` is then their
    block-diagonal union. None for a single graph.

    ``typed_ids``: for a typed graph (``graph`` a heterograph with several node types or
    relations), the original ids of each node type, in the type's internal order; ``ids`` is
    then ``NodeIds.identity(total nodes)``. None for a homogeneous graph. Build typed graphs
    with :func:`graphflow.hetero.build.typed_graph`.
    """

    graph: dgl.DGLGraph
    ids: NodeIds
    name: str = "graph"
    meta: dict[str, Any] = field(default_factory=dict)
    links: LinkSplit | None = None
    graphs: GraphCollection | None = None
    typed_ids: dict[str, NodeIds] | None = None

    def __post_init__(self) -> None:
        if len(self.ids) != self.graph.num_nodes():
            raise ValueError(
                f"{len(self.ids)} node ids for a graph of {self.graph.num_nodes()} nodes"
            )
        if self.typed_ids is not None:
            ntypes = list(self.graph.ntypes)
            if sorted(self.typed_ids) != sorted(ntypes):
                raise ValueError(f"typed_ids name the node types {sorted(self.typed_ids)} but "
                                 f"the graph has {sorted(ntypes)}")
            for ntype in ntypes:
                if len(self.typed_ids[ntype]) != self.graph.num_nodes(ntype):
                    raise ValueError(f"{len(self.typed_ids[ntype])} node ids for the "
                                     f"{self.graph.num_nodes(ntype)} nodes of type {ntype!r}")
        if self.graphs is not None and self.graphs.num_nodes != self.graph.num_nodes():
            raise ValueError(f"the graph index covers {self.graphs.num_nodes} nodes but the "
                             f"graph has {self.graph.num_nodes()}")

    @classmethod
    def from_edges(cls, src: Any, dst: Any, **kwargs: Any) -> GraphData:
        """A checked graph from edge endpoint ids (+ weights, node ids, features, labels,
        masks): see :func:`graphflow.io.build.from_edges`."""
        from graphflow.io.build import from_edges

        return from_edges(src, dst, **kwargs)

    @classmethod
    def from_tables(cls, edges: Any, nodes: Any = None, **kwargs: Any) -> GraphData:
        """A checked graph from an edge table and an optional node table: see
        :func:`graphflow.io.build.from_tables` (what the edgelist and parquet loaders use)."""
        from graphflow.io.build import from_tables

        return from_tables(edges, nodes, **kwargs)

    @property
    def is_typed(self) -> bool:
        """Whether the graph has more than one node type or more than one relation."""
        g = self.graph
        return len(g.ntypes) > 1 or len(g.canonical_etypes) > 1

    @property
    def labelled_types(self) -> list[str]:
        """The node types that carry ``label`` (for a homogeneous graph: its one type, or
        none)."""
        g = self.graph
        return [t for t in g.ntypes if "label" in g.nodes[t].data]

    def _label(self) -> torch.Tensor | None:
        """The labels: those of the graph, or of a typed graph's target type
        (``meta["target"]``, else its one labelled type)."""
        g = self.graph
        if not self.is_typed:
            return g.ndata.get("label")
        target = self.meta.get("target")
        types = [target] if target in g.ntypes else self.labelled_types
        if len(types) != 1 or "label" not in g.nodes[types[0]].data:
            return None
        return g.nodes[types[0]].data["label"]

    @property
    def num_nodes(self) -> int:
        return self.graph.num_nodes()

    @property
    def num_edges(self) -> int:
        return self.graph.num_edges()

    @property
    def multilabel(self) -> bool:
        label = self._label()
        return label is not None and label.dim() == 2

    @property
    def num_classes(self) -> int | None:
        """Classes (or label columns, for multi-label data); None without labels."""
        if "num_classes" in self.meta:
            return int(self.meta["num_classes"])
        label = self._label()
        if label is None:
            return None
        if label.dim() == 2:
            return int(label.shape[1])
        return int(label.max().item()) + 1 if label.numel() else 0

    def take_graphs(self, index: torch.Tensor) -> GraphData:
        """A collection of the graphs at positions ``index`` (int64, in that order) only:
        their nodes, edges, node and edge data, node ids and graph table."""
        if self.graphs is None:
            raise DataError(f'"{self.name}" is a single graph, not a collection of graphs')
        sub, nodes = self.graphs.take(index)
        graph = dgl.node_subgraph(self.graph, nodes, store_ids=False)
        return GraphData(graph=graph, ids=self.ids.take(nodes), name=self.name,
                         meta=dict(self.meta), graphs=sub)

    def with_graph(self, graph: dgl.DGLGraph, ids: NodeIds | None = None,
                   typed_ids: dict[str, NodeIds] | None = None) -> GraphData:
        """A copy holding ``graph`` (and ``ids``, when the node set changed).

        A link split stays only while the node set does (``ids`` None): its pairs are
        internal node ids. A collection of graphs keeps its index while the node set stays;
        a new node set is refused for a collection (its node → graph index would break).
        A typed graph keeps its ``typed_ids`` unless new ones are given (with a new node set,
        ``ids`` is then ``NodeIds.identity`` of the new total).
        """
        if self.typed_ids is not None or typed_ids is not None:
            if typed_ids is None and any(graph.num_nodes(t) != self.graph.num_nodes(t)
                                         for t in self.graph.ntypes):
                raise DataError("this transform changes the node set of a typed graph without "
                                "saying which nodes remain; remove it from the pipeline")
            return GraphData(graph=graph, ids=NodeIds.identity(graph.num_nodes()),
                             name=self.name, meta=dict(self.meta),
                             links=self.links if typed_ids is None else None,
                             typed_ids=dict(self.typed_ids if typed_ids is None else typed_ids))
        if self.graphs is not None and (ids is not None
                                        or graph.num_nodes() != self.graph.num_nodes()):
            raise DataError(f"this transform changes the node set, which a collection of "
                            f"graphs ({self.graphs.num_graphs} graphs) does not support; "
                            f"remove it from the pipeline")
        return GraphData(graph=graph, ids=self.ids if ids is None else ids, name=self.name,
                         meta=dict(self.meta), links=self.links if ids is None else None,
                         graphs=self.graphs)

    def summary(self) -> str:
        """One line: node and edge counts, features, classes; for a typed graph also the
        node types with their counts (see :meth:`relations` for the relations)."""
        g = self.graph
        if self.is_typed:
            return self._typed_summary()
        parts = [f"{g.num_nodes():,} nodes", f"{g.num_edges():,} edges"]
        if "feat" in g.ndata:
            parts.append(f"{g.ndata['feat'].shape[1]} features")
        if self.num_classes is not None:
            parts.append(f"{self.num_classes} {'labels' if self.multilabel else 'classes'}")
        if self.graphs is not None:
            parts.insert(0, self.graphs.summary())
        return ", ".join(parts)

    def _typed_summary(self) -> str:
        g = self.graph
        types = ", ".join(f"{t} {g.num_nodes(t):,}" for t in g.ntypes)
        parts = [f"{g.num_nodes():,} nodes of {len(g.ntypes)} types ({types})",
                 f"{g.num_edges():,} edges of {len(g.canonical_etypes)} relations"]
        featured = [t for t in g.ntypes if "feat" in g.nodes[t].data]
        if featured:
            parts.append("features on " + ", ".join(
                f"{t} ({g.nodes[t].data['feat'].shape[1]})" for t in featured))
        if self.num_classes is not None:
            target = self.meta.get("target") or ", ".join(self.labelled_types)
            parts.append(f"{self.num_classes} {'labels' if self.multilabel else 'classes'} "
                         f"on {target}")
        return ", ".join(parts)

    def relations(self) -> list[tuple[tuple[str, str, str], int]]:
        """Each canonical edge type ``(src_type, relation, dst_type)`` with its edge count."""
        g = self.graph
        return [(tuple(c), g.num_edges(c)) for c in g.canonical_etypes]  # type: ignore[misc]
