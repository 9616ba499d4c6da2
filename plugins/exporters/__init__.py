"""Plugin "exporters": Exporters of artifacts to files.

One module per exporter; each is registered here under its TOML ``type``.
"""

from __future__ import annotations

from graphflow.plugin import hookimpl
from graphflow.registry import Register
from graphflow_plugins.exporters.csv import CsvExporter
from graphflow_plugins.exporters.dgl import DglExporter
from graphflow_plugins.exporters.npy import NpyExporter
from graphflow_plugins.exporters.onnx import OnnxExporter
from graphflow_plugins.exporters.parquet import ParquetExporter
from graphflow_plugins.exporters.pt import PtExporter
from graphflow_plugins.exporters.torchscript import TorchScriptExporter


@hookimpl
def graphflow_register_exporters(register: Register) -> None:
    """Register the built-in exporters."""
    for cls in (CsvExporter, DglExporter, NpyExporter, OnnxExporter, ParquetExporter, PtExporter,
                TorchScriptExporter):
        register(cls)
