"""The ``torchscript`` exporter: the trained model as a TorchScript file that plain torch runs
(``torch.jit.load``), without graphflow or DGL."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from graphflow.components import Exporter, What
from graphflow.context import RunContext
from graphflow.options import option
from graphflow.portable.signature import edge_weights_used, weight_note
from graphflow.portable import export_torchscript


@dataclass
class TorchScriptExportOptions:
    what: What = option("model", "model (the trained [model]).")
    path: Path | None = option(None, "Output file (default OUT_DIR/model.torchscript.pt); the "
                                     "sidecar goes to <path>.json.")
    inputs: Literal["full", "block"] = option(
        "full", "full: (x, src, dst, weight) of a whole graph; block: (x, [(src, dst, weight, "
                "num_dst), ...]), one sampled block per layer.")


class TorchScriptExporter(Exporter):
    """The trained model's portable twin, scripted (``torch.jit.script``), plus a JSON sidecar
    ``<file>.json`` with its inputs, output and the preprocessing it expects.

    The message passing is a sparse COO product (``torch.sparse.mm``); self-loops and degree
    normalisation are computed inside from the raw edges (docs/inference.md). Models of
    ``[model]`` gcn, sage, gin, sgc and gat export; another model stops the export with one
    line naming its part, and nothing is written.
    """

    name = "torchscript"
    summary = "TorchScript model (+ JSON sidecar) that runs in plain torch"
    writes = ("model",)
    suffix = ".torchscript.pt"
    Options = TorchScriptExportOptions

    def export(self, ctx: RunContext) -> list[Path]:
        o = self.options
        section = f"[{ctx.stage.section}] {self.name}" if ctx.stage else f"[export] {self.name}"
        model = ctx.artifacts.require("model", section=section)
        written = export_torchscript(model, self.target(ctx), inputs=o.inputs,
                                     model_info=ctx.artifacts.model_info,
                                     weight=weight_note(edge_weights_used(ctx)))
        ctx.info(f"{section}: wrote {written[0]} (inputs = {o.inputs!r}; load with "
                 f"torch.jit.load) and its inputs' description {written[1]}")
        return written
