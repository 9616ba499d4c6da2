"""Resolve ``pipeline.device`` to a ``torch.device``, with a clear error when it is not there."""

from __future__ import annotations

import torch

from graphflow.errors import DeviceError


def resolve_device(spec: str | torch.device) -> torch.device:
    """``auto`` picks CUDA when available; ``cuda``/``cuda:N`` must exist on this machine."""
    if isinstance(spec, torch.device):
        spec = str(spec)
    if spec == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if spec == "cpu":
        return torch.device("cpu")
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
            raise DeviceError(
                f'device "{spec}" requested but CUDA is not available (torch {torch.__version__}, '
                f'{build}); use device = "cpu" or "auto"'
            )
        dev = torch.device(spec)
        count = torch.cuda.device_count()
        if dev.index is not None and dev.index >= count:
            raise DeviceError(f'device "{spec}" requested but this machine has {count} CUDA '
                              f"device(s): cuda:0..cuda:{count - 1}")
        return dev
    raise DeviceError(f'unknown device "{spec}"; use "auto", "cpu", "cuda" or "cuda:N"')


def same_device(tensor: torch.Tensor, device: torch.device, *, what: str) -> None:
    """Raise ``DeviceError`` unless ``tensor`` lives on ``device`` (index-insensitive for cuda)."""
    if tensor.device.type != device.type or (
        device.index is not None and tensor.device.index != device.index
    ):
        raise DeviceError(f"{what} is on {tensor.device} but {device} was expected; "
                          f"move it with .to({str(device)!r})")
