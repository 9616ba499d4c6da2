"""Where node features and labels live between batches, and their per-batch gather.

A minibatch needs ``feat[input_nodes]`` and ``label[seeds]`` on the output device (where the
model runs). Three placements, chosen by the sampler's ``features`` option:

``device``
    The whole ``feat`` / ``label`` are copied to the output device once; a batch is one
    ``index_select`` there. Fastest, when they fit.
``pinned``
    They stay in host memory; each batch is gathered on the CPU into a page-locked (pinned)
    buffer and copied to the GPU with ``non_blocking=True``, so the copy overlaps the
    compute (in the prefetch thread's side stream). For features that do not fit on the GPU.
``cpu``
    Host memory, plain gather; the output device is the CPU (or a synchronous copy).

``auto`` picks ``cpu`` when the output device is the CPU, else ``device`` when the features
and labels take at most :data:`DEVICE_FRACTION` of the GPU's free memory, else ``pinned``.
"""

from __future__ import annotations

from typing import Literal

import torch

from graphflow.errors import DeviceError

Placement = Literal["auto", "device", "pinned", "cpu"]

# "auto" keeps features on the GPU when they take at most this share of its free memory.
DEVICE_FRACTION = 0.5


def choose_placement(placement: Placement, output_device: torch.device, nbytes: int) -> str:
    """Resolve ``auto`` and check the others against ``output_device``."""
    cuda = output_device.type == "cuda"
    if placement == "pinned" and not cuda:
        raise DeviceError(f'features = "pinned" stages batches in pinned memory for a CUDA '
                          f'output device, but output_device is {output_device}; use '
                          f'"auto" or "cpu"')
    if placement != "auto":
        return "cpu" if (placement == "device" and not cuda) else placement
    if not cuda:
        return "cpu"
    free, _ = torch.cuda.mem_get_info(output_device)
    return "device" if nbytes <= DEVICE_FRACTION * free else "pinned"


class FeatureStore:
    """Node features (N, F) and labels (N,) or (N, C), gathered per batch onto one device.

    :param feat: float (N, F) features on the CPU, or None.
    :param label: (N,) or (N, C) labels on the CPU, or None.
    :param output_device: where gathered batches go.
    :param placement: ``auto``, ``device``, ``pinned`` or ``cpu`` (see the module docstring).
    """

    def __init__(self, feat: torch.Tensor | None, label: torch.Tensor | None,
                 output_device: torch.device, placement: Placement = "auto"):
        nbytes = sum(t.numel() * t.element_size() for t in (feat, label) if t is not None)
        self.output_device = output_device
        self.placement = choose_placement(placement, output_device, nbytes)
        home = output_device if self.placement == "device" else torch.device("cpu")
        self.feat = None if feat is None else feat.to(home)
        self.label = None if label is None else label.to(home)

    def gather(self, input_nodes: torch.Tensor, seeds: torch.Tensor, *,
               features: bool = True) -> tuple[torch.Tensor | None, torch.Tensor | None]:
        """``feat[input_nodes]`` (num_input, F) (None without ``features``), ``label[seeds]``
        (B, ...), on the output device."""
        return (self._take(self.feat, input_nodes) if features else None,
                self._take(self.label, seeds))

    def local_table(self) -> torch.Tensor | None:
        """The whole feature table when a batch may read it in place: it is already on the
        output device (placement ``cpu`` with a CPU output device); else None."""
        if self.feat is None or self.placement != "cpu" or self.output_device.type != "cpu":
            return None
        return self.feat

    def _take(self, table: torch.Tensor | None, ids: torch.Tensor) -> torch.Tensor | None:
        if table is None:
            return None
        if self.placement == "device":
            return table.index_select(0, ids.to(table.device, non_blocking=True))
        idx = ids.cpu()
        pinned = self.placement == "pinned"
        out = torch.empty((idx.shape[0], *table.shape[1:]), dtype=table.dtype,
                          pin_memory=pinned)  # (n, ...) staging buffer
        torch.index_select(table, 0, idx, out=out)
        return out.to(self.output_device, non_blocking=pinned)

    def __repr__(self) -> str:
        shape = None if self.feat is None else tuple(self.feat.shape)
        return f"FeatureStore(feat={shape}, placement={self.placement}, to={self.output_device})"
