"""The ``torchscript`` exporter: the trained model as a TorchScript file that plain torch runs
(``torch.jit.load``), without graphflow or DGL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from graphflow.components import What
from graphflow.options import option
from graphflow.portable import export_torchscript
from graphflow_plugins.exporters.portable import PortableExporter


@dataclass
class TorchScriptExportOptions:
    what: What = option("model", "model (the trained [model]).")
    path: Path | None = option(None, "Output file (default OUT_DIR/model.torchscript.pt); the "
                                     "sidecar goes to <path>.json.")
    inputs: Literal["full", "block"] = option(
        "full", "full: (x, src, dst, weight) of a whole graph; block: (x, [(src, dst, weight, "
                "num_dst), ...]), one sampled block per layer.")


class TorchScriptExporter(PortableExporter):
    """The trained model's portable twin, scripted (``torch.jit.script``), plus a JSON sidecar
    ``<file>.json`` with its inputs, output and the preprocessing it expects.

    The message passing is a sparse COO product (``torch.sparse.mm``); self-loops and degree
    normalisation are computed inside from the raw edges (docs/inference.md). Models of
    ``[model]`` gcn, sage, gin, sgc and gat export (alone, under a graph task's read-out with
    the inputs ``graph`` and ``num_graphs``, or with a link decoder and ``pair_src``,
    ``pair_dst``); typed models (``rgcn``, ``hetero``) are called ``m([x_<type>, ...],
    [(src_k, dst_k, weight_k), ...])``, one input per node type and per relation. Another
    model stops the export with one line naming its part, and nothing is written.
    """

    name = "torchscript"
    summary = "TorchScript model (+ JSON sidecar) that runs in plain torch"
    suffix = ".torchscript.pt"
    Options = TorchScriptExportOptions

    def write(self, model: Any, target: Path, *, model_info: Any, weight: str) -> list[Path]:
        return export_torchscript(model, target, inputs=self.options.inputs,
                                  model_info=model_info, weight=weight)

    def note(self) -> str:
        return f"inputs = {self.options.inputs!r}; load with torch.jit.load"
