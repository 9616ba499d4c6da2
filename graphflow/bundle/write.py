"""Write a trained model's bundle into its run folder (see :mod:`graphflow.bundle.layout`).

:meth:`graphflow.train.task.SupervisedTask.save_bundle` calls :func:`write_bundle` once a
stage has trained, for every supervised task (node, link and graph level): the stage's
``ctx.artifacts.model`` and ``model_info``, the resolved configuration, what rebuilds the
model's input (feature width, fitted transform state, label names, the id map, the
``[load]`` and ``[[transform]]`` sections), the versions, and the weights' sha256.

The folder is written whole or not at all (:func:`graphflow.io.atomic.atomic_dir`): every
file goes to a temporary folder beside it, which then replaces the old bundle in one rename,
with the umask's permissions.
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from graphflow.bundle.fitted import fitted_of
from graphflow.bundle.layout import BUNDLE_JSON, FORMAT, HELD_OUT, IDS, WEIGHTS, bundle_dir
from graphflow.bundle.typed import typed_record, write_typed_files
from graphflow.context import RunContext
from graphflow.io.atomic import atomic_dir, write_json
from graphflow.linkpred.decoders import LinkModel
from graphflow.record import package_versions
from graphflow.train.restore import model_payload

HELD_OUT_META = "held_out_nodes"
"""``GraphData.meta`` key under which ``hold_out_nodes`` leaves the removed nodes' ids."""


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def bundle_kind(model: torch.nn.Module, info: dict[str, Any]) -> str:
    """``node``, ``link`` or ``graph``: what the model predicts."""
    if info.get("level") == "graph":
        return "graph"
    if isinstance(model, LinkModel):
        return "link"
    return "node"


def bundle_header(ctx: RunContext, task: Any, kind: str, info: dict[str, Any],
                  built_by: str) -> dict[str, Any]:
    """The fields every bundle's ``bundle.json`` starts with: the format, ``kind``, the
    section, when, the pipeline, and the ``[train]`` and ``[model]`` tables of the stage
    ``built_by`` (the task's name alone when that stage is not in the config)."""
    stage = next((t for t in ctx.config.train if t.task.section == built_by), None)
    model_spec = stage.model.resolved() if stage is not None and stage.model is not None \
        else ({"type": ctx.model.name} if ctx.model is not None else None)
    return {
        "format": FORMAT,
        "kind": kind,
        "section": ctx.section,
        "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "pipeline": {"name": ctx.config.settings.name, "seed": ctx.seed,
                     "config_hash": ctx.config.digest(), "source": str(ctx.config.source)},
        "task": stage.task.resolved() if stage is not None else {"type": task.name},
        "model": model_spec,
        "model_info": info,
    }


def write_bundle(ctx: RunContext, task: Any, in_dim: int | dict[str, int], *,
                 source: str | None = None) -> Path | None:
    """Write the bundle of the stage that just trained (rank 0 only); return its folder.

    :param task: the training task (its name and options are recorded).
    :param in_dim: the width of the model's input features; for a model of a typed graph,
        the width of each featured node type (:mod:`graphflow.bundle.typed`).
    :param source: the section of the stage whose ``[train]`` and ``[model]`` tables built
        the model, when another stage changed it (``sparsify`` writes its own bundle, of the
        model ``source`` trained); default: this stage.
    """
    model = ctx.artifacts.model
    if model is None or not ctx.world.is_main:
        return None
    info = dict(ctx.artifacts.model_info or {})
    data = ctx.graph()
    kind = bundle_kind(model, info)
    config = ctx.config.resolved()
    built_by = source or ctx.section
    options = getattr(task, "options", None)
    features = getattr(options, "features", "feat")
    meta: dict[str, Any] = {
        **bundle_header(ctx, task, kind, info, built_by),
        "inputs": {
            "features": features,
            "in_dim": in_dim if isinstance(in_dim, dict) else int(in_dim),
            "feature_columns": data.meta.get("feature_columns"),
            "edge_weights": bool(getattr(options, "edge_weights", False)),
            "edge_features": int(info.get("edge_features", 0)),
            "sparse_threshold": getattr(options, "sparse_threshold", 0.0),
            "inference_batch_size": _inference_batch(task, ctx),
        },
        "fitted": fitted_of(data),
        "labels": _labels(data, kind, info),
        "ids": {"file": IDS, "count": data.num_nodes,
                "type": "identity" if data.ids.is_identity else str(data.ids.to_arrow().type)},
        "data": {"pipeline": {"name": config["pipeline"]["name"],
                              "seed": config["pipeline"]["seed"]},
                 "load": config["load"], "transform": config["transform"]},
        "versions": package_versions(),
    }
    if kind == "link":
        meta["link"] = {"embedding_dim": int(info.get("embedding_dim", 0)),
                        "decoder": info.get("decoder", "dot")}
    if kind == "graph":
        meta["graph_model"] = {"widths": list(model.widths),
                               "read_widths": list(model.read_widths),
                               "layers": model.read_layers,
                               "pooling": info.get("readout"), "hidden": info.get("hidden"),
                               "dropout": float(model.drop.p),
                               "out_dim": int(model.out_dim)}
    typed = typed_record(data, info) if data.is_typed and kind == "node" else None
    if typed is not None:
        meta["typed"] = typed
        meta["inputs"]["in_dim"] = typed["in_dims"]
        meta["labels"]["multilabel"] = False
        meta["ids"] = {"file": IDS, "count": typed["num_nodes"][typed["target"]],
                       "type": next(e["id_type"] for e in typed["ids"]
                                    if e["type"] == typed["target"]),
                       "node_type": typed["target"]}
    target = bundle_dir(ctx.out_dir, ctx.section)
    held = data.meta.get(HELD_OUT_META)
    with atomic_dir(target, what="model bundle") as tmp:
        weights = tmp / WEIGHTS
        torch.save({"what": "model", **model_payload(model, info)}, weights)
        meta["weights"] = {"file": WEIGHTS, "sha256": sha256(weights),
                           "bytes": weights.stat().st_size}
        ids = data.ids.to_arrow() if typed is None else write_typed_files(tmp, data, typed)
        pq.write_table(pa.table({"id": ids}), tmp / IDS)
        if held is not None:
            pq.write_table(pa.table({"id": held}), tmp / HELD_OUT)
            meta["held_out_nodes"] = {"file": HELD_OUT, "count": len(held)}
        write_json(tmp / BUNDLE_JSON, meta)
    ctx.add_output(target, "model bundle")
    ctx.info(f"[{ctx.section}] model bundle: {target}")
    return target


def _inference_batch(task: Any, ctx: RunContext) -> int:
    batch = getattr(task, "inference_batch_size", None)
    try:
        return int(batch(ctx)) if callable(batch) else 0
    except Exception:  # a task without the shared set-up
        return 0


def _labels(data: Any, kind: str, info: dict[str, Any]) -> dict[str, Any]:
    if kind == "graph":
        return {"classes": info.get("classes"),
                "names": list(data.meta["graph_classes"]) if "graph_classes" in data.meta
                else None, "task": info.get("task")}
    if kind == "link":
        return {}
    return {"classes": info.get("classes"), "multilabel": data.multilabel,
            "names": list(data.meta["classes"]) if "classes" in data.meta else None}
