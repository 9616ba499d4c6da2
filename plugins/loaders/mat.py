"""The ``mat`` loader: MATLAB files as the DeepWalk / node2vec datasets ship them."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.io.matfile import load_mat
from graphflow.io.nodes import OnNan, check_finite
from graphflow.options import option


@dataclass
class MatOptions:
    path: Path = option(doc="A .mat file (MATLAB v5/v7; v7.3 HDF5 files must be re-saved).")
    adjacency: str = option("network", "Variable holding the (N, N) adjacency matrix.")
    labels: str = option("group", 'Variable holding the (N, C) 0/1 label matrix ("" for none).')
    features: str = option("", 'Variable holding (N, F) node features ("" for none).')
    on_nan: OnNan = option("error", 'NaN/inf features: "error" or "zero" (replace by 0).')


class MatLoader(Loader):
    """BlogCatalog, Flickr, PPI, YouTube... as ``.mat`` files (DeepWalk / node2vec format).

    Entry ``A[i, j] != 0`` of the adjacency is an edge ``i -> j`` (these files store both
    directions of an undirected graph); values other than 1 become ``edata["weight"]``.
    An (N, C) label matrix stays multi-label: ``ndata["label"]`` is float32 (N, C) 0/1. A
    single label column (N, 1) holds class ids. Node ids are the matrix rows ``0..N-1``.
    """

    name = "mat"
    summary = "MATLAB .mat (DeepWalk/node2vec datasets): sparse adjacency + multi-label groups"
    Options = MatOptions

    def check(self) -> None:
        if not self.options.path.is_file():
            raise DataError(f".mat file not found: {self.options.path}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        wanted = [k for k in (o.adjacency, o.labels, o.features) if k]
        variables = load_mat(o.path, wanted, fix="set adjacency / labels / features in [load]")
        adj = sp.coo_matrix(_matrix(variables[o.adjacency], o.adjacency, o.path))
        n = adj.shape[0]
        if adj.shape != (n, n):
            raise DataError(f"{o.path}: {o.adjacency!r} is {adj.shape[0]} x {adj.shape[1]}; an "
                            f"adjacency matrix must be square")
        adj.sum_duplicates()
        keep = adj.data != 0
        src, dst, values = adj.row[keep], adj.col[keep], adj.data[keep]
        if len(src) == 0:
            raise DataError(f"{o.path}: {o.adjacency!r} has no nonzero entries; the graph "
                            f"would be empty")
        g = dgl.graph((torch.from_numpy(src.astype(np.int64)),
                       torch.from_numpy(dst.astype(np.int64))), num_nodes=n)
        if not np.all(values == 1):
            with np.errstate(over="ignore", invalid="ignore"):
                weights = values.astype(np.float32)  # beyond float32's range: inf, refused
            bad = np.flatnonzero(~np.isfinite(weights))
            if len(bad):
                i = int(bad[0])
                raise DataError(f"{o.path}: {o.adjacency!r}[{src[i]}, {dst[i]}] = {values[i]} "
                                f"is not a finite float32 edge weight")
            g.edata["weight"] = torch.from_numpy(weights)
        if o.labels:
            g.ndata["label"] = _labels(variables[o.labels], o.labels, n, o.path)
        if o.features:
            feat = _matrix(variables[o.features], o.features, o.path)
            feat = feat.toarray() if sp.issparse(feat) else np.asarray(feat)
            if feat.shape[0] != n:
                raise DataError(f"{o.path}: {o.features!r} has {feat.shape[0]} rows for {n} "
                                f"nodes")
            ids = NodeIds.identity(n)
            g.ndata["feat"], zeroed = check_finite(
                torch.from_numpy(feat.astype(np.float32).reshape(n, -1)), on_nan=o.on_nan,
                where=lambda row: f"{o.path}, {o.features} row {row}", ids=ids.to_arrow())
            if zeroed:
                ctx.info(f'on_nan = "zero": set {zeroed} NaN/inf feature values to 0')
        return GraphData(graph=g, ids=NodeIds.identity(n), name=o.path.stem,
                         meta={"source": str(o.path)})


def _matrix(value: Any, name: str, path: Path) -> sp.sparray | sp.spmatrix | np.ndarray:
    """A sparse or dense 2-D numeric matrix, as stored."""
    if sp.issparse(value):
        return value
    if isinstance(value, np.ndarray) and value.ndim == 2 and value.dtype.kind in "biuf":
        return value
    raise DataError(f"{path}: {name!r} is not a numeric matrix ({type(value).__name__})")


def _labels(value: Any, name: str, n: int, path: Path) -> torch.Tensor:
    labels = _matrix(value, name, path)
    if labels.shape[0] != n and labels.shape[1] == n:
        labels = labels.T
    if labels.shape[0] != n:
        raise DataError(f"{path}: {name!r} is {labels.shape[0]} x {labels.shape[1]}, but the "
                        f"graph has {n} nodes")
    dense = labels.toarray() if sp.issparse(labels) else np.asarray(labels)
    if dense.shape[1] == 1:  # one column of class ids
        return torch.from_numpy(dense[:, 0].astype(np.int64))
    return torch.from_numpy((dense != 0).astype(np.float32))
