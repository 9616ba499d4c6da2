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
    """

    graph: dgl.DGLGraph
    ids: NodeIds
    name: str = "graph"
    meta: dict[str, Any] = field(default_factory=dict)
    links: LinkSplit | None = None
    graphs: GraphCollection | None = None

    def __post_init__(self) -> None:
        if len(self.ids) != self.graph.num_nodes():
            raise ValueError(
                f"{len(self.ids)} node ids for a graph of {self.graph.num_nodes()} nodes"
            )
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
    def num_nodes(self) -> int:
        return self.graph.num_nodes()

    @property
    def num_edges(self) -> int:
        return self.graph.num_edges()

    @property
    def multilabel(self) -> bool:
        label = self.graph.ndata.get("label")
        return label is not None and label.dim() == 2

    @property
    def num_classes(self) -> int | None:
        """Classes (or label columns, for multi-label data); None without labels."""
        if "num_classes" in self.meta:
            return int(self.meta["num_classes"])
        label = self.graph.ndata.get("label")
        if label is None:
            return None
        if label.dim() == 2:
            return int(label.shape[1])
        return int(label.max().item()) + 1 if label.numel() else 0

    def with_graph(self, graph: dgl.DGLGraph, ids: NodeIds | None = None) -> GraphData:
        """A copy holding ``graph`` (and ``ids``, when the node set changed).

        A link split stays only while the node set does (``ids`` None): its pairs are
        internal node ids. A collection of graphs keeps its index while the node set stays;
        a new node set is refused for a collection (its node → graph index would break).
        """
        if self.graphs is not None and (ids is not None
                                        or graph.num_nodes() != self.graph.num_nodes()):
            raise DataError(f"this transform changes the node set, which a collection of "
                            f"graphs ({self.graphs.num_graphs} graphs) does not support; "
                            f"remove it from the pipeline")
        return GraphData(graph=graph, ids=self.ids if ids is None else ids, name=self.name,
                         meta=dict(self.meta), links=self.links if ids is None else None,
                         graphs=self.graphs)

    def summary(self) -> str:
        g = self.graph
        parts = [f"{g.num_nodes():,} nodes", f"{g.num_edges():,} edges"]
        if "feat" in g.ndata:
            parts.append(f"{g.ndata['feat'].shape[1]} features")
        if self.num_classes is not None:
            parts.append(f"{self.num_classes} {'labels' if self.multilabel else 'classes'}")
        if self.graphs is not None:
            parts.insert(0, self.graphs.summary())
        return ", ".join(parts)
