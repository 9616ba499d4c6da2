"""The ``npy`` exporter: a per-node artifact as a NumPy array, ids beside it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.io.atomic import atomic_path
from graphflow.options import option
from graphflow_plugins.exporters.tables import artifact_ids, node_artifact


@dataclass
class NpyExportOptions:
    what: What = option(doc="embeddings | predictions | logits.")
    path: Path | None = option(None, "Output .npy file (default OUT_DIR/<what>.npy); the ids "
                                     "go to <stem>.ids.npy beside it.")
    ids: bool = option(True, "Also write the original node ids (int64 or unicode array).")


def ids_path(path: Path) -> Path:
    """Where the ids of ``path`` go: ``emb.npy`` -> ``emb.ids.npy``."""
    return path.with_name(path.name.removesuffix(".npy") + ".ids.npy")


def save_npy(path: Path, array: np.ndarray) -> Path:
    """``np.save`` to a temporary file, then rename (np.save would append .npy to a name)."""
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as fh:
            np.save(fh, array, allow_pickle=False)
    return path


class NpyExporter(Exporter):
    """``np.load``-able arrays: the artifact in ``path``, row ``i`` being node ``i``.

    The node ids go to ``<stem>.ids.npy`` (int64, or a unicode string array; no pickle), in
    the same order, so ``dict(zip(np.load(ids), np.load(path)))`` maps ids to rows.
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
            ids = artifact_ids(ctx, True).to_numpy(zero_copy_only=False)
            if ids.dtype == object:
                ids = ids.astype(np.str_)
            written.append(save_npy(ids_path(path), ids))
        return written
