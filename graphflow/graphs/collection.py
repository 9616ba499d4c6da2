"""A collection of graphs as one block-diagonal graph plus a node → graph index.

A collection of ``G`` graphs travels as an ordinary :class:`~graphflow.graph.GraphData`
whose DGLGraph holds every graph's nodes and edges (disjoint union, as ``dgl.batch`` makes
it), with ``data.graphs`` set to a :class:`GraphCollection`:

===============  ===============================================================================
``graph_ptr``    int64 (G + 1,): the nodes of graph ``g`` are ``graph_ptr[g]..graph_ptr[g+1]-1``
``ids``          pyarrow array (G,): the users' original graph ids
``labels``       int64 (G,) class ids, or float32 (G, T) targets (NaN = missing), or None
``masks``        bool (G,) ``train`` / ``val`` / ``test`` graph splits, when set
``classes``      the original label values of class ids ``0..C-1`` (strings), when known
===============  ===============================================================================

Nodes keep their own ids (``data.ids``) and features (``ndata["feat"]``); edges never join two
graphs. The sparse core, the models, the transforms that keep the node set and the
exporters thus work unchanged; a transform that changes the node set is refused
(:meth:`GraphData.with_graph`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import torch

from graphflow.errors import DataError

SPLITS = ("train", "val", "test")


@dataclass
class GraphCollection:
    """The graph table and node → graph index of a collection (see the module docstring)."""

    graph_ptr: torch.Tensor
    ids: pa.Array
    labels: torch.Tensor | None = None
    masks: dict[str, torch.Tensor] = field(default_factory=dict)
    classes: list[str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.ids, pa.ChunkedArray):
            self.ids = self.ids.combine_chunks()
        g = self.num_graphs
        if len(self.ids) != g:
            raise ValueError(f"{len(self.ids)} graph ids for {g} graphs")
        if self.labels is not None and self.labels.shape[0] != g:
            raise ValueError(f"{self.labels.shape[0]} graph labels for {g} graphs")
        for name, mask in self.masks.items():
            if mask.dtype != torch.bool or mask.shape != (g,):
                raise ValueError(f"graph mask {name!r} must be bool ({g},), got {mask.dtype} "
                                 f"{tuple(mask.shape)}")

    @property
    def num_graphs(self) -> int:
        return int(self.graph_ptr.shape[0]) - 1

    @property
    def num_nodes(self) -> int:
        return int(self.graph_ptr[-1])

    def sizes(self) -> torch.Tensor:
        """int64 (G,) nodes per graph."""
        return self.graph_ptr[1:] - self.graph_ptr[:-1]

    def node_graph(self) -> torch.Tensor:
        """int64 (N,) the graph position of every node."""
        return torch.repeat_interleave(torch.arange(self.num_graphs), self.sizes(),
                                       output_size=self.num_nodes)

    def take(self, index: torch.Tensor) -> tuple[GraphCollection, torch.Tensor]:
        """The graphs at positions ``index`` (int64, in that order) as a collection of their
        own, and the positions in this collection of the nodes it holds, graph by graph."""
        sizes = self.sizes()[index]  # (B,)
        ptr = torch.zeros(index.shape[0] + 1, dtype=torch.int64)
        torch.cumsum(sizes, 0, out=ptr[1:])
        shift = torch.repeat_interleave(self.graph_ptr[index] - ptr[:-1], sizes,
                                        output_size=int(ptr[-1]))
        nodes = torch.arange(int(ptr[-1])) + shift  # (n,)
        sub = GraphCollection(ptr, self.ids.take(pa.array(index.numpy())),
                              labels=None if self.labels is None else self.labels[index],
                              masks={k: m[index] for k, m in self.masks.items()},
                              classes=self.classes)
        return sub, nodes

    @property
    def regression(self) -> bool:
        """Whether the labels are float targets (graph regression, or multi-task binary)."""
        return self.labels is not None and self.labels.is_floating_point()

    @property
    def num_classes(self) -> int | None:
        if self.labels is None:
            return None
        if self.labels.dim() == 2:
            return int(self.labels.shape[1])
        if self.classes is not None:
            return len(self.classes)
        return int(self.labels.max()) + 1 if self.labels.numel() else 0

    def with_masks(self, masks: dict[str, torch.Tensor]) -> GraphCollection:
        """A copy with these graph splits (replacing any earlier ones)."""
        return replace(self, masks=dict(masks))

    def summary(self) -> str:
        parts = [f"{self.num_graphs:,} graphs"]
        if self.labels is not None:
            if self.labels.is_floating_point():
                parts.append(f"{self.labels.shape[1] if self.labels.dim() == 2 else 1} targets")
            else:
                parts.append(f"{self.num_classes} graph classes")
        return ", ".join(parts)


def pointer_from_index(graph_of_node: np.ndarray, num_graphs: int, *, where: str,
                       first_id: int = 0) -> np.ndarray:
    """int64 (G + 1,) node offsets from each node's graph (0-based, ``(N,)``), checked.

    :param where: the file (or table) the index came from, for messages; its line ``i + 1``
        holds node ``i``.
    :param first_id: what the file calls graph 0 (1 for 1-based TU files), for messages.
    :raises DataError: the index goes backwards (nodes of a graph not contiguous), names a
        graph outside ``0..num_graphs-1``, or some graph has no node.
    """
    gi = np.asarray(graph_of_node, dtype=np.int64)
    if gi.size:
        lo, hi = int(gi.min()), int(gi.max())
        if lo < 0 or hi >= num_graphs:
            line = int(np.flatnonzero((gi < 0) | (gi >= num_graphs))[0]) + 1
            bad = int(gi[line - 1]) + first_id
            raise DataError(f"{where} line {line}: graph {bad} is out of range (graphs "
                            f"{first_id}..{num_graphs - 1 + first_id})")
        back = np.flatnonzero(gi[1:] < gi[:-1])
        if back.size:
            line = int(back[0]) + 2
            raise DataError(f"{where} line {line}: graph {int(gi[line - 1]) + first_id} comes "
                            f"after graph {int(gi[line - 2]) + first_id}; the graph indicator "
                            f"must be sorted, each graph's nodes contiguous")
    counts = np.bincount(gi, minlength=num_graphs)
    empty = np.flatnonzero(counts == 0)
    if empty.size:
        raise DataError(f"{where}: graph {int(empty[0]) + first_id} has no nodes; every graph "
                        f"of a collection needs at least one node ({empty.size} empty)")
    ptr = np.zeros(num_graphs + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr


def check_edges_within(src: np.ndarray, dst: np.ndarray, graph_ptr: np.ndarray, *,
                       where: str, first_id: int = 0, line_of_edge: int = 1) -> None:
    """Refuse an edge whose endpoints lie in two graphs (``src``/``dst`` 0-based node ids).

    :param line_of_edge: the line of edge 0 in ``where`` (edge ``i`` is on line
        ``line_of_edge + i``); 0 for a matrix, whose entry ``[src, dst]`` is named instead.
    """
    if len(src) == 0:
        return
    gs = np.searchsorted(graph_ptr, src, side="right") - 1
    gd = np.searchsorted(graph_ptr, dst, side="right") - 1
    bad = np.flatnonzero(gs != gd)
    if bad.size:
        i = int(bad[0])
        edge = (f"{where} line {i + line_of_edge}: edge {int(src[i]) + first_id} -> "
                f"{int(dst[i]) + first_id}" if line_of_edge > 0
                else f"{where}[{int(src[i])}, {int(dst[i])}]: the edge")
        raise DataError(f"{edge} joins graph {int(gs[i]) + first_id} and graph "
                        f"{int(gd[i]) + first_id}; an edge must stay inside its graph")


def encode_labels(values: np.ndarray, *, where: str) -> tuple[torch.Tensor, list[str]]:
    """Class ids ``0..C-1`` (int64 (G,)) for any label values, and the values they stand for
    (sorted, as strings: ``["-1", "1"]``)."""
    values = np.asarray(values)
    if values.dtype.kind == "f":
        if not np.isfinite(values).all():
            row = int(np.flatnonzero(~np.isfinite(values))[0])
            raise DataError(f"{where} line {row + 1}: graph label {values[row]} is not a "
                            f"class; a missing label must be filled in or the graph removed")
        if np.all(values == np.round(values)):
            values = values.astype(np.int64)
    classes, codes = np.unique(values, return_inverse=True)
    return torch.from_numpy(codes.astype(np.int64).reshape(-1)), [str(c) for c in classes]


def refuse_collection(data: object, task: str) -> None:
    """The one-line refusal of a node-level task given a collection of graphs."""
    graphs = getattr(data, "graphs", None)
    if graphs is not None:
        raise DataError(f'{task} is a node-level task, but "{getattr(data, "name", "graph")}" '
                        f"is a collection of {graphs.num_graphs} graphs; use "
                        f'type = "graph_classification" or "graph_regression"')
