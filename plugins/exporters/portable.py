"""What the ``onnx`` and ``torchscript`` exporters share: the trained model in, the portable
file and its JSON sidecar out (``graphflow.portable``), and the line that says so."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from graphflow.components import Exporter
from graphflow.context import RunContext
from graphflow.portable.signature import edge_weights_used, weight_note


class PortableExporter(Exporter):
    """Base of the exporters that write the trained model's portable twin; a subclass says
    how to write it (:meth:`write`) and what to tell the user about the file (:meth:`note`).
    Not registered itself."""

    writes = ("model",)

    def write(self, model: Any, target: Path, *, model_info: Any, weight: str
              ) -> list[Path]:
        """Write ``model`` to ``target``; returns ``[file, sidecar]``."""
        raise NotImplementedError

    def note(self) -> str:
        """The parenthesis of the "wrote" line (the options that shaped the file)."""
        raise NotImplementedError

    def export(self, ctx: RunContext) -> list[Path]:
        section = f"[{ctx.stage.section}] {self.name}" if ctx.stage else f"[export] {self.name}"
        model = ctx.artifacts.require("model", section=section)
        written = self.write(model, self.target(ctx), model_info=ctx.artifacts.model_info,
                             weight=weight_note(edge_weights_used(ctx)))
        ctx.info(f"{section}: wrote {written[0]} ({self.note()}) and its inputs' description "
                 f"{written[1]}")
        return written
