"""Portable exports: trained models as TorchScript or ONNX files that run without graphflow
or DGL (docs/inference.md, "Portable exports").

* :func:`export_onnx`, :func:`export_torchscript`: write a trained
  :class:`~graphflow.nn.stack.GNNStack` and its JSON sidecar;
* :func:`portable_model`: the eval-mode twin they export, an ``nn.Module`` whose message
  passing is written in operations TorchScript and ONNX have (:mod:`graphflow.portable.graph`);
* :func:`register_twin`: make a third-party layer exportable;
* :mod:`graphflow.portable.inputs`: the exported model's inputs from an
  :class:`~graphflow.sparse.Adjacency` or from sampled blocks.
"""

from graphflow.portable.convert import Unsupported, portable_model, register_twin
from graphflow.portable.onnx import export_onnx
from graphflow.portable.torchscript import export_torchscript

__all__ = ["Unsupported", "export_onnx", "export_torchscript", "portable_model",
           "register_twin"]
