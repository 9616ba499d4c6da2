"""The ``npy`` exporter: a per-node artifact as a NumPy array, ids beside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.io.atomic import atomic_path
from graphflow.options import option
from graphflow_plugins.exporters.tables import (artifact_ids, embedding_types, node_artifact,
                                                 typed_ids)


@dataclass
class NpyExportOptions:
    what: What = option(doc="embeddings | predictions | logits.")
    path: Path | None = option(None, "Output .npy file (default OUT_DIR/<what>.npy); the ids "
                                     "go to <stem>.ids.npy beside it.")
    ids: bool = option(True, "Also write the original node ids (int64 or unicode array).")


def ids_path(path: Path) -> Path:
    """Where the ids of ``path`` go: ``emb.npy`` -> ``emb.ids.npy``."""
    return path.with_name(path.name.removesuffix(".npy") + ".ids.npy")


def types_path(path: Path) -> Path:
    """Where the node types of a typed graph's embeddings go: ``emb.npy`` ->
    ``emb.types.npy``."""
    return path.with_name(path.name.removesuffix(".npy") + ".types.npy")


def save_npy(path: Path, array: np.ndarray) -> Path:
    """``np.save`` to a temporary file, then rename (np.save would append .npy to a name)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array, allow_pickle=False)
    return path


class NpyExporter(Exporter):
    """``np.load``-able arrays: the artifact in ``path``, row ``i`` being node ``i``.

    The node ids go to ``<stem>.ids.npy`` (int64, or a unicode string array; no pickle), in
    the same order, so ``dict(zip(np.load(ids), np.load(path)))`` maps ids to rows. The
    embeddings of a typed graph cover every node type, one after the other; the type of each
    row goes to ``<stem>.types.npy``.
    """

    name = "npy"
    summary = "NumPy .npy array of embeddings / predictions / logits (+ .ids.npy)"
    writes = ("embeddings", "predictions", "logits")
    suffix = ".npy"
    Options = NpyExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        path = self.target(ctx)
        written = [save_npy(path, node_artifact(ctx, o.what).numpy())]
        if o.ids:
            ids = artifact_ids(ctx, True, o.what).to_numpy(zero_copy_only=False)
            if ids.dtype == object:
                ids = ids.astype(np.str_)
            written.append(save_npy(ids_path(path), ids))
            types = embedding_types(ctx, o.what)
            if types is not None:  # a typed graph's embeddings: the node type of each row
                kind = typed_ids(ctx, types, True)[1].to_numpy(zero_copy_only=False)
                written.append(save_npy(types_path(path), kind.astype(np.str_)))
        return written
