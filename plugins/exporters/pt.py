"""The ``pt`` exporter: a per-node artifact or the graph as a ``torch.save`` file."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyarrow as pa
import torch

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.io.atomic import atomic_path
from graphflow.io.plain import plain
from graphflow.options import option
from graphflow.train.restore import model_payload
from graphflow_plugins.exporters.tables import (artifact_ids, embedding_types, graph_level,
                                                 node_artifact, run_info)


@dataclass
class PtExportOptions:
    what: What = option(doc="embeddings | predictions | logits | graph | model.")
    path: Path | None = option(None, "Output file (default OUT_DIR/<what>.pt).")
    ids: bool = option(True, "Include the original node ids.")



def ids_value(data: GraphData, values: pa.Array | None = None) -> torch.Tensor | list[str]:
    """Ids (the node ids, or ``values``) as torch.load(weights_only=True) reads them: an
    int64 tensor or a list of str."""
    values = data.ids.to_arrow() if values is None else values
    if pa.types.is_integer(values.type):
        return torch.from_numpy(values.to_numpy(zero_copy_only=False).astype("int64"))
    return values.to_pylist()


class PtExporter(Exporter):
    """A dict saved with ``torch.save``, loadable with ``torch.load(path, weights_only=True)``.

    Artifacts: ``{"what": ..., "<what>": tensor, "ids": ids, "info": run metadata}``. The
    graph: ``{"what": "graph", "src": ..., "dst": ..., "num_nodes": N, "ndata": {...},
    "edata": {...}, "ids": ids, "meta": {...}, "info": ...}``. Ids are an int64 tensor or a
    list of strings, in node order. The embeddings of a typed graph cover every node type,
    one after the other, with ``"types": [[node type, rows], ...]``.

    The trained model (``what = "model"``): ``{"what": "model", "model": state_dict,
    "model_info": {...}, "masks": [...], "info": ...}``; 2:4-pruned layers keep their
    ``weight_mask`` buffers in the state dict and are listed in ``masks``. A later run starts
    from it with ``[train] restore_model = "<file>"`` (``epochs = 0`` to only predict).
    """

    name = "pt"
    summary = "torch.save dict: tensor(s) + ids + run metadata"
    writes = ("embeddings", "predictions", "logits", "graph", "model")
    suffix = ".pt"
    Options = PtExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        path = self.target(ctx)
        data = ctx.graph()
        payload: dict[str, Any] = {"what": o.what, "info": run_info(ctx, o.what, o.ids)}
        if o.what == "model":
            section = f"[{ctx.stage.section}] pt" if ctx.stage else "[export] pt"
            model = ctx.artifacts.require("model", section=section)
            payload.update(model_payload(model, ctx.artifacts.model_info))
        elif o.what == "graph":
            g = data.graph
            src, dst = g.edges()
            payload.update(src=src, dst=dst, num_nodes=g.num_nodes(), ndata=dict(g.ndata),
                           edata=dict(g.edata), meta=plain(data.meta))
        else:
            payload[o.what] = node_artifact(ctx, o.what)
        types = embedding_types(ctx, o.what)
        if o.ids and types is not None:  # a typed graph's embeddings: every type's rows
            payload["ids"] = ids_value(data, artifact_ids(ctx, True, o.what))
            payload["types"] = [[t, n] for t, n in types]
        elif o.ids and o.what != "model":
            graph_ids = artifact_ids(ctx, True) if o.what != "graph" and graph_level(ctx) \
                else None  # a graph-level artifact: one row per graph of the collection
            payload["ids"] = ids_value(data, graph_ids)
        with atomic_path(path) as tmp:
            torch.save(payload, tmp)
        return [path]
