"""``export_onnx``: a trained model as an ONNX file that ``onnxruntime`` runs, without
graphflow, DGL or torch.

Degrees become ScatterElements with ``reduction="add"`` (``scatter_add``, opset 16 and
later); the sums of messages a segment sum (TopK, Gather, CumSum: see
:func:`graphflow.portable.graph.aggregate`); GAT's per-destination softmax maximum is
ScatterElements with ``reduction="max"`` (opset 18). Node and edge counts are dynamic axes;
feature widths are fixed.
"""

from __future__ import annotations

import io
import os
import warnings
from pathlib import Path
from typing import Any

import torch
from torch import nn

from graphflow.errors import ConfigError, EnvironmentProblem
from graphflow.io.atomic import atomic_path, write_json
from graphflow.portable.convert import Inputs, Unsupported, model_dims, twin_for_export
from graphflow.portable.layers import PortableGAT
from graphflow.portable.readout import PortableReadout
from graphflow.portable.signature import (dynamic_axes, example_inputs, input_names,
                                          output_names, sidecar, weight_note)
from graphflow.portable.stack import BlockModel, FlatBlockModel
from graphflow.portable.typed import is_typed_model

DEFAULT_OPSET = 18
MIN_OPSET = 16
MAX_OPSET = 20
GAT_OPSET = 18


def export_onnx(model: nn.Module, path: str | os.PathLike[str], *, inputs: Inputs = "full",
                opset: int = DEFAULT_OPSET,
                model_info: dict[str, Any] | None = None,
                weight: str | None = None) -> list[Path]:
    """Write the portable twin of ``model`` (a trained :class:`~graphflow.nn.stack.GNNStack`)
    as an ONNX graph at ``path``, and its sidecar ``<path>.json``.

    Inputs (see :mod:`graphflow.portable.signature`): ``x, src, dst, weight`` for
    ``inputs = "full"``; ``x, src_0, dst_0, weight_0, num_dst_0, src_1, ...`` for ``"block"``.
    The output is ``logits``.

    :param opset: the ONNX opset, 16 to 20 (GAT needs 18 or later).
    :param model_info: how the model was built (``ctx.artifacts.model_info``), copied into
        the sidecar.
    :param weight: what the caller must pass as ``weight`` (the sidecar's ``weight`` note;
        default: ones unless the model was trained on edge values).
    :returns: the files written (the graph, then the sidecar); written atomically, only after
        the model converted and the graph was checked.
    :raises graphflow.portable.convert.Unsupported: a part of the model has no ONNX form.
    """
    if not MIN_OPSET <= opset <= MAX_OPSET:
        raise ConfigError(f"opset must lie in {MIN_OPSET}..{MAX_OPSET} (scatter_add needs "
                          f"ScatterElements with a reduction, opset 16), got {opset}")
    onnx = _require("onnx")
    if is_typed_model(model):
        return _export_typed(onnx, model, Path(path), inputs, opset, model_info, weight)
    twin = twin_for_export(model, inputs, "ONNX")
    if opset < GAT_OPSET and any(isinstance(m, PortableGAT) for m in twin.modules()):
        raise Unsupported(f"cannot export the model to ONNX with opset {opset}: GAT's "
                          f"attention softmax needs ScatterElements with reduction max "
                          f"(opset {GAT_OPSET}); set opset = {GAT_OPSET} or more, or export to "
                          f"torchscript")
    pooled = {m.pooling for m in twin.modules() if isinstance(m, PortableReadout)}
    if opset < GAT_OPSET and pooled & {"max", "attention", "set2set"}:
        raise Unsupported(f"cannot export the model to ONNX with opset {opset}: the "
                          f"{sorted(pooled & {'max', 'attention', 'set2set'})[0]} read-out needs "
                          f"ScatterElements with reduction max (opset {GAT_OPSET}); set opset = "
                          f"{GAT_OPSET} or more, or export to torchscript")
    traced: nn.Module = FlatBlockModel(twin) if isinstance(twin, BlockModel) else twin
    names = input_names(twin)
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the tracer's notes on shapes it keeps dynamic
        torch.onnx.export(traced, example_inputs(twin, model_dims(model)[0]), buffer,
                          input_names=names, output_names=output_names(twin),
                          dynamic_axes=dynamic_axes(twin), opset_version=opset, dynamo=False)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    target = Path(path)
    with atomic_path(target) as tmp:
        tmp.write_bytes(buffer.getvalue())
    side = sidecar(twin, "onnx", target.name, *model_dims(model), model_info,
                   {"weight": weight or weight_note(None), "opset": opset,
                    "onnx": onnx.__version__, "torch": torch.__version__})
    meta = write_json(target.with_name(target.name + ".json"), side)
    return [target, meta]


def _export_typed(onnx: Any, model: nn.Module, target: Path, inputs: str, opset: int,
                  model_info: dict[str, Any] | None, weight: str | None) -> list[Path]:
    """A typed model (:mod:`graphflow.portable.typed`): inputs ``x_<type>`` per node type,
    ``src_<k>, dst_<k>, weight_<k>`` per relation; a relation with no path to the target
    type's logits is not an input of the graph (the sidecar lists the inputs it takes)."""
    from graphflow.portable import typed

    if inputs != "full":
        raise Unsupported('cannot export the model to ONNX: a typed model takes the whole '
                          'typed graph; export it with inputs = "full"')
    twin = typed.typed_model(model, (model_info or {}).get("node_type"))  # type: ignore[arg-type]
    dims = typed.in_dims_of(model, twin)  # type: ignore[arg-type]
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(typed.FlatTypedModel(twin), typed.example_inputs(twin, dims), buffer,
                          input_names=typed.input_names(twin), output_names=["logits"],
                          dynamic_axes=typed.dynamic_axes(twin), opset_version=opset,
                          dynamo=False)
    proto = onnx.load_from_string(buffer.getvalue())
    onnx.checker.check_model(proto)
    kept = [i.name for i in proto.graph.input]
    with atomic_path(target) as tmp:
        tmp.write_bytes(buffer.getvalue())
    side = typed.sidecar(twin, "onnx", target.name, dims, int(model.out_dim), model_info,
                         {"weight": weight or weight_note(None), "opset": opset,
                          "onnx": onnx.__version__, "torch": torch.__version__})
    side["inputs"] = [i for i in side["inputs"] if i["name"] in set(kept)]
    for rel in side["relations"]:
        rel["inputs"] = [n for n in rel["inputs"] if n in set(kept)]
    meta = write_json(target.with_name(target.name + ".json"), side)
    return [target, meta]


def _require(name: str) -> Any:
    try:
        return __import__(name)
    except ImportError:
        raise EnvironmentProblem(f"the ONNX export needs the {name} package; install it with "
                                 f"pip install 'graphflow[export]'") from None
