"""The typed context every stage reads and writes.

Stages chain through it: a loader fills ``ctx.data``, transforms replace it, a task stores
``ctx.artifacts.embeddings`` that a later task can take as node features, exporters write the
artifacts. There is one context per run and no module-level state.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import torch

from graphflow.distributed.world import World
from graphflow.errors import ConfigError
from graphflow.runtime.progress import progress

if TYPE_CHECKING:
    from graphflow.components import Model, Sampler
    from graphflow.runtime.cores import CorePlan
    from graphflow.config import PipelineConfig
    from graphflow.graph import GraphData
    from graphflow.linkpred.held_out import ScoredLinks
    from graphflow.manager import PluginHost

T = TypeVar("T")

ARTIFACTS = ("embeddings", "predictions", "logits", "model", "links")

ARTIFACT_MAKERS = {"links": 'a [train] type = "link_prediction" stage makes them'}
"""Which stage makes an artifact, for the message when none did."""


@dataclass(frozen=True)
class Stage:
    """One step of a run: which section, which component, from which plugin."""

    section: str  # "load", "transform.0", "sample", "train", "train.1", "export.0"...
    kind: str
    type: str
    plugin: str


@dataclass
class Artifacts:
    """What training produces, indexed by internal node id where per-node.

    :ivar embeddings: float32 (N, D) node embeddings.
    :ivar predictions: int64 (N,) predicted classes, or float32 (N, C) 0/1 for multi-label.
    :ivar logits: float32 (N, C) raw scores.
    :ivar model: the trained ``nn.Module``.
    :ivar model_info: how to rebuild ``model`` (the task and section that trained it, the
        ``[model]`` type and options, input and output widths), for exports and restoring.
    :ivar links: scored node pairs (held-out pairs, candidates) of link prediction.
    """

    embeddings: torch.Tensor | None = None
    predictions: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    model: torch.nn.Module | None = None
    model_info: dict[str, Any] | None = None
    links: ScoredLinks | None = None

    def available(self) -> list[str]:
        return [name for name in ARTIFACTS if getattr(self, name) is not None]

    def require(self, name: str, *, section: str) -> Any:
        """The artifact ``name``, or a ``ConfigError`` saying which stage should have made it."""
        if name not in ARTIFACTS:
            raise ConfigError(f"{section}: unknown artifact {name!r}; artifacts: {', '.join(ARTIFACTS)}")
        value = getattr(self, name)
        if value is None:
            have = ", ".join(self.available()) or "none"
            hint = f" ({ARTIFACT_MAKERS[name]})" if name in ARTIFACT_MAKERS else ""
            raise ConfigError(
                f"{section}: no {name!r} artifact to use; the stages before it produced: "
                f"{have}{hint}"
            )
        return value


@dataclass
class RunContext:
    """State shared by the stages of one run."""

    config: PipelineConfig
    host: PluginHost
    device: torch.device
    seed: int
    rng: torch.Generator
    out_dir: Path
    resume: bool = False
    quiet: bool = False
    data: GraphData | None = None
    artifacts: Artifacts = field(default_factory=Artifacts)
    metrics: dict[str, float] = field(default_factory=dict)
    outputs: list[dict[str, str]] = field(default_factory=list)
    # Structured results (tables, reasons) for run.json's "reports", by stage section.
    reports: dict[str, Any] = field(default_factory=dict)
    stage: Stage | None = None
    # Set by the sample and model stages for the training stage that follows.
    sampler: Sampler | None = None
    sampler_graph: Any = None
    model: Model | None = None
    # The running training stage's core plan (graphflow.runtime.cores): threads and workers to use.
    cores: CorePlan | None = None
    # This process's place in a data-parallel run; only rank 0 writes files.
    world: World = field(default_factory=World)

    @property
    def section(self) -> str:
        """The running stage's section (``"train"``, ``"train.1"``...); ``"train"`` outside a
        stage (a task driven directly, as in tests)."""
        return self.stage.section if self.stage else "train"

    @property
    def metrics_path(self) -> Path:
        return self.out_dir / "metrics.jsonl"

    def graph(self) -> GraphData:
        """The current graph; a stage that needs one before ``[load]`` ran is a bug."""
        if self.data is None:
            raise ConfigError("no graph loaded yet: the pipeline needs a [load] section")
        return self.data

    def log_metrics(self, **values: float) -> None:
        """Record final metrics (flat: ``test_acc=0.81``) for ``run.json``."""
        for key, value in values.items():
            self.metrics[key] = float(value)

    def log_epoch(self, epoch: int, **values: float) -> None:
        """Append one epoch's figures to ``metrics.jsonl`` and call ``graphflow_epoch_end``."""
        figures = {k: float(v) for k, v in values.items()}
        section = self.stage.section if self.stage else None
        line = json.dumps({"stage": section, "epoch": epoch, **figures})
        if self.world.is_main:
            self.out_dir.mkdir(parents=True, exist_ok=True)
            with open(self.metrics_path, "a", encoding="utf-8") as fh:
                fh.write(line + "\n")
        self.host.broadcast("graphflow_epoch_end", ctx=self, stage=self.stage, epoch=epoch,
                            metrics=figures)

    def add_output(self, path: Path, what: str) -> None:
        """Note a file this run wrote, for ``run.json`` and the end-of-run summary."""
        self.outputs.append({"path": str(path), "what": what,
                             "section": self.stage.section if self.stage else ""})

    def progress(self, iterable: Iterable[T], *, desc: str, total: int | None = None,
                 **kwargs: Any) -> Iterable[T]:
        """A progress bar on a terminal, nothing otherwise."""
        if self.quiet:
            return iterable
        return progress(iterable, desc=desc, total=total, **kwargs)

    def info(self, message: str) -> None:
        """A line for the user on stderr (suppressed with ``quiet``)."""
        if not self.quiet:
            print(message, file=sys.stderr, flush=True)
