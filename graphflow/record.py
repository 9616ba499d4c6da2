"""The run record, ``OUT_DIR/run.json``: what ran, on what, how long, and what came out."""

from __future__ import annotations

import platform
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import torch

from graphflow.io.atomic import write_json
from graphflow.runtime.memory import run_peak

PACKAGES = ("graphflow", "torch", "dgl", "pyarrow", "numpy", "scipy", "networkx", "pluggy")


def package_versions() -> dict[str, str | None]:
    """Installed versions of graphflow and what it runs on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def device_info(device: torch.device) -> dict[str, Any]:
    """The device a run used, with the GPU's name and memory when it is one."""
    info: dict[str, Any] = {"device": str(device), "platform": platform.platform(),
                            "cpu_threads": torch.get_num_threads()}
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        info.update(gpu=props.name, gpu_memory_gib=round(props.total_memory / 2**30, 1),
                    cuda=torch.version.cuda)
    return info


class RunRecord:
    """Accumulates stage timings and writes ``run.json`` atomically."""

    def __init__(self, path: Path, *, name: str, config: dict[str, Any], config_hash: str,
                 seed: int, device: torch.device, write: bool = True):
        self.path = path
        self.write = write  # False on the ranks of a data-parallel run other than 0
        self.started = time.time()
        self.data: dict[str, Any] = {
            "name": name,
            "status": "running",
            "started": time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(self.started)),
            "seconds": None,
            "argv": sys.argv,
            "config": config,
            "config_hash": config_hash,
            "seed": seed,
            **device_info(device),
            "versions": package_versions(),
            "stages": [],
            "metrics": {},
            "reports": {},
            "outputs": [],
            "error": None,
        }

    def add_stage(self, section: str, type_: str, plugin: str, seconds: float,
                  memory: dict[str, Any] | None = None,
                  cores: dict[str, Any] | None = None) -> None:
        """One finished stage; ``memory``: its peaks (see :class:`graphflow.runtime.memory.PeakMemory`);
        ``cores``: a training stage's core plan (graphflow.runtime.cores)."""
        entry = {"section": section, "type": type_, "plugin": plugin,
                 "seconds": round(seconds, 4), **(memory or {})}
        if cores is not None:
            entry["cores"] = cores
        self.data["stages"].append(entry)

    def finish(self, *, status: str, metrics: dict[str, float], outputs: list[dict[str, str]],
               error: str | None = None,
               reports: dict[str, Any] | None = None) -> dict[str, Any]:
        self.data.update(status=status, metrics=dict(metrics), error=error,
                         reports=dict(reports or {}),
                         seconds=round(time.time() - self.started, 3),
                         memory=run_peak(self.data["stages"]))
        self.data["outputs"] = list(outputs) + [{"path": str(self.path), "what": "record",
                                                 "section": "pipeline"}]
        if self.write:
            write_json(self.path, self.data)
        return self.data
