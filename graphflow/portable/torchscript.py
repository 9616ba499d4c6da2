"""``export_torchscript``: a trained model as a TorchScript file that plain torch loads
(``torch.jit.load``), without graphflow or DGL."""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from graphflow.io.atomic import atomic_path, write_json
from graphflow.portable.convert import Inputs, model_dims, twin_for_export
from graphflow.portable.pairs import LinkLevelModel
from graphflow.portable.readout import EdgeGraphLevelModel, GraphLevelModel
from graphflow.portable.signature import sidecar, weight_note
from graphflow.portable.typed import is_typed_model


def export_torchscript(model: nn.Module, path: str | os.PathLike[str], *,
                       inputs: Inputs = "full",
                       model_info: dict[str, Any] | None = None,
                       weight: str | None = None) -> list[Path]:
    """Write the portable twin of ``model`` (a trained :class:`~graphflow.nn.stack.GNNStack`)
    as a scripted module at ``path``, and its sidecar ``<path>.json``.

    The loaded module is called ``m(x, src, dst, weight)`` (``inputs = "full"``) or
    ``m(x, [(src, dst, weight, num_dst), ...])`` (``"block"``, ``num_dst`` a 0-d int64
    tensor); see :mod:`graphflow.portable.stack`.

    :param model_info: how the model was built (``ctx.artifacts.model_info``), copied into
        the sidecar.
    :param weight: what the caller must pass as ``weight`` (the sidecar's ``weight`` note;
        default: ones unless the model was trained on edge values).
    :returns: the files written (the module, then the sidecar). Both are written atomically,
        after the model converted: a model without a portable form writes nothing.
    :raises graphflow.portable.convert.Unsupported: a part of the model has no portable form.
    """
    if is_typed_model(model):
        return _export_typed(model, Path(path), inputs, model_info, weight)
    twin = twin_for_export(model, inputs, "TorchScript")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # torch.jit's notice of torch.export
        scripted = torch.jit.script(twin)
    target = Path(path)
    with atomic_path(target) as tmp:
        scripted.save(str(tmp))
    call = _CALL["edge_graphs"] if isinstance(twin, EdgeGraphLevelModel) \
        else _CALL["graphs"] if isinstance(twin, GraphLevelModel) \
        else _CALL["pairs"] if isinstance(twin, LinkLevelModel) else _CALL[inputs]
    side = sidecar(twin, "torchscript", target.name, *model_dims(model), model_info,
                   {"weight": weight or weight_note(None), "call": call,
                    "torch": torch.__version__})
    meta = write_json(target.with_name(target.name + ".json"), side)
    return [target, meta]


def _export_typed(model: nn.Module, target: Path, inputs: str,
                  model_info: dict[str, Any] | None, weight: str | None) -> list[Path]:
    """A typed model (:mod:`graphflow.portable.typed`), called ``m(xs, rels)``."""
    from graphflow.portable import typed
    from graphflow.portable.convert import Unsupported

    if inputs != "full":
        raise Unsupported('cannot export the model to TorchScript: a typed model takes the '
                          'whole typed graph; export it with inputs = "full"')
    twin = typed.typed_model(model, (model_info or {}).get("node_type"))  # type: ignore[arg-type]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(twin)
    with atomic_path(target) as tmp:
        scripted.save(str(tmp))
    dims = typed.in_dims_of(model, twin)  # type: ignore[arg-type]
    side = typed.sidecar(twin, "torchscript", target.name, dims, int(model.out_dim),
                         model_info, {"weight": weight or weight_note(None),
                                      "call": _CALL["typed"], "torch": torch.__version__})
    meta = write_json(target.with_name(target.name + ".json"), side)
    return [target, meta]


_CALL = {
    "typed": "torch.jit.load(file)([x_<type> for each node type], [(src_k, dst_k, weight_k) "
             "for each relation k])",
    "full": "torch.jit.load(file)(x, src, dst, weight)",
    "block": "torch.jit.load(file)(x, [(src_0, dst_0, weight_0, num_dst_0), ...])",
    "graphs": "torch.jit.load(file)(x, src, dst, weight, graph, num_graphs)",
    "edge_graphs": "torch.jit.load(file)(x, src, dst, weight, edge_feat, graph, num_graphs)",
    "pairs": "embeddings, scores = torch.jit.load(file)(x, src, dst, weight, pair_src, "
             "pair_dst)",
}
