"""The ``tensorboard`` tracker: TensorBoard event files in the run's folder."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.components import Tracker
from graphflow.context import RunContext
from graphflow.errors import EnvironmentProblem
from graphflow.experiments.tracking import final_key, params
from graphflow.options import option


@dataclass
class TensorBoardOptions:
    log_dir: Path | None = option(None, "Folder of the event files (default OUT_DIR/tensorboard).")
    flush_secs: int = option(10, "How often the writer flushes pending events to disk.")


class TensorBoardTracker(Tracker):
    """Writes TensorBoard event files (``pip install "graphflow[track]"``: tensorboard).

    One scalar series per epoch figure, the epoch as its step (``loss``, ``val_acc``; with
    ``[[train]]``, ``train.1/loss``), and an hparams summary: the resolved configuration
    (dotted keys, ``train.0.lr``) against the run's final metrics (``final/test_acc``), so
    TensorBoard's HPARAMS tab compares runs written under one parent folder::

        tensorboard --logdir runs/
    """

    name = "tensorboard"
    summary = "write TensorBoard event files: a scalar per epoch figure, and hparams"
    Options = TensorBoardOptions

    def __init__(self, options: Any = None):
        super().__init__(options)
        self.writer: Any = None
        self.log_dir: Path | None = None

    def start(self, ctx: RunContext) -> dict[str, Any]:
        try:
            from torch.utils.tensorboard import SummaryWriter
        except ImportError as exc:
            raise EnvironmentProblem(f"needs TensorBoard ({exc}); pip install "
                                     f"'graphflow[track]'") from None
        self.log_dir = self.options.log_dir or ctx.out_dir / "tensorboard"
        self.writer = SummaryWriter(log_dir=str(self.log_dir),
                                    flush_secs=self.options.flush_secs)
        return {"path": str(self.log_dir)}

    def log_epoch(self, key_values: dict[str, float], step: int) -> None:
        for key, value in key_values.items():
            self.writer.add_scalar(key, value, step)

    def flush(self) -> None:
        self.writer.flush()

    def finish(self, ctx: RunContext, record: dict[str, Any]) -> None:
        hparams = {k: v if isinstance(v, (int, float, str, bool)) else str(v)
                   for k, v in params(record["config"]).items()}
        finals = {final_key(k): float(v) for k, v in record["metrics"].items()
                  if isinstance(v, (int, float))}
        # run_name ".": the summary joins this run's own event folder
        self.writer.add_hparams(hparams, finals, run_name=".")
        self.writer.close()
