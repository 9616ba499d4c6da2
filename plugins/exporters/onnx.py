"""The ``onnx`` exporter: the trained model as an ONNX graph that ``onnxruntime`` runs,
without graphflow, DGL or torch."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graphflow.components import What
from graphflow.options import option
from graphflow.portable import export_onnx
from graphflow.portable.onnx import DEFAULT_OPSET, MAX_OPSET, MIN_OPSET
from graphflow_plugins.exporters.portable import PortableExporter


@dataclass
class OnnxExportOptions:
    what: What = option("model", "model (the trained [model]).")
    path: Path | None = option(None, "Output file (default OUT_DIR/model.onnx); the sidecar "
                                     "goes to <path>.json.")
    inputs: Literal["full", "block"] = option(
        "full", "full: x, src, dst, weight of a whole graph; block: x, then src_l, dst_l, "
                "weight_l, num_dst_l for each layer l (sampled blocks).")
    opset: int = option(DEFAULT_OPSET, f"ONNX opset, {MIN_OPSET} to {MAX_OPSET} (GAT needs "
                                       f"18 or later).")

    def __post_init__(self) -> None:
        if not MIN_OPSET <= self.opset <= MAX_OPSET:
            raise ValueError(f"opset must lie in {MIN_OPSET}..{MAX_OPSET} (scatter_add needs "
                              f"ScatterElements with a reduction, opset 16), got {self.opset}")


class OnnxExporter(PortableExporter):
    """The trained model's portable twin as an ONNX graph, plus a JSON sidecar
    ``<file>.json`` with its inputs, output and the preprocessing it expects.

    The message passing is standard ONNX (Gather, TopK, CumSum, ScatterElements); self-loops
    and degree normalisation are computed inside from the raw edges (docs/inference.md). Node
    and edge counts are dynamic. Models of ``[model]`` gcn, sage, gin, sgc and gat export, alone,
    under a graph task's read-out (then with the inputs ``graph`` and ``num_graphs``, one
    row per graph out) or with a link decoder (inputs ``pair_src``, ``pair_dst``). Typed models
    (``rgcn``, ``hetero``) take ``x_<type>`` per node type and ``src_<k>, dst_<k>, weight_<k>``
    per relation, and give the target type's logits. Another model stops the export with
    one line naming its part, and nothing is written.
    """

    name = "onnx"
    summary = "ONNX model (+ JSON sidecar) that runs in onnxruntime"
    suffix = ".onnx"
    Options = OnnxExportOptions

    def write(self, model: Any, target: Path, *, model_info: Any, weight: str) -> list[Path]:
        return export_onnx(model, target, inputs=self.options.inputs, opset=self.options.opset,
                           model_info=model_info, weight=weight)

    def note(self) -> str:
        return f"inputs = {self.options.inputs!r}, opset {self.options.opset}"
