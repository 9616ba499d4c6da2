"""The ``mlflow`` tracker: a run in MLflow's tracking store, local by default."""

from __future__ import annotations

import logging
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.components import Tracker
from graphflow.context import RunContext
from graphflow.errors import EnvironmentProblem
from graphflow.experiments.tracking import (final_key, param_text, params, run_files,
                                            versions_tags)
from graphflow.options import option

STATUS = {"ok": "FINISHED", "failed": "FAILED"}  # anything else (stopped, pruned): KILLED
FLUSH_SECONDS = 1.0  # epoch figures are sent at most this often (and at each stage's end)
BATCH = 1000  # MLflow takes at most 1000 metrics and 100 params per request


@dataclass
class MlflowOptions:
    tracking_uri: str | None = option(
        None, "Where runs go: a server (http://host:5000), a database (sqlite:///path.db). "
              "Default: $MLFLOW_TRACKING_URI, else sqlite:///OUT_DIR/mlflow.db. With a SQLite "
              "database a new experiment keeps its artifacts in mlartifacts/ beside the "
              "database (OUT_DIR/mlartifacts by default), never in the working directory.")
    experiment: str | None = option(None, "Experiment name (default: the pipeline's name).")
    run_name: str | None = option(None, "Run name (default: the pipeline's name).")
    artifacts: bool = option(True, "Upload run.json, metrics.jsonl, the exported files and "
                                   "the checkpoints (or the trained model).")


class MlflowTracker(Tracker):
    """Records the run in MLflow (``pip install "graphflow[track]"``: mlflow-skinny).

    * params: the resolved configuration, one dotted key per option (``train.0.lr``);
    * metrics: every epoch figure with the epoch as its step (``loss``, ``val_acc``; with
      ``[[train]]``, ``train.1/loss``), and the run's final metrics as ``final/<name>``;
    * artifacts: ``run.json`` and ``metrics.jsonl``, the checkpoints (or, without one, the
      trained model's state dict) under ``model/``, the exported files under ``outputs/``;
    * tags: ``graphflow.version``, ``torch.version``, ``dgl.version``, the config hash,
      device and seed; the run ends FINISHED, FAILED or KILLED (stopped by a signal).

    Without ``tracking_uri`` (and ``$MLFLOW_TRACKING_URI``) the store is a SQLite file in the
    run's folder: MLflow 3 keeps its file store (``mlruns/``) in maintenance mode and refuses
    it by default, while SQLite needs no server. Browse it with
    ``mlflow ui --backend-store-uri sqlite:///runs/NAME/mlflow.db``.
    A server that cannot be reached costs MLflow's retries (``MLFLOW_HTTP_REQUEST_MAX_RETRIES``,
    ``MLFLOW_HTTP_REQUEST_TIMEOUT``), then one warning; the run goes on.
    """

    name = "mlflow"
    summary = "record params, per-epoch metrics, files and versions in MLflow"
    Options = MlflowOptions

    def __init__(self, options: Any = None):
        super().__init__(options)
        self.client: Any = None
        self.run_id: str | None = None
        self.pending: list[Any] = []
        self.last_flush = 0.0

    def start(self, ctx: RunContext) -> dict[str, Any]:
        try:
            from mlflow import MlflowClient
            from mlflow.entities import Param, RunTag
        except ImportError as exc:
            raise EnvironmentProblem(f"needs MLflow ({exc}); pip install 'graphflow[track]'"
                                     ) from None
        logging.getLogger("mlflow").setLevel(logging.WARNING)  # no store-migration chatter
        o = self.options
        uri = o.tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or \
            f"sqlite:///{(ctx.out_dir / 'mlflow.db').resolve()}"
        self.client = MlflowClient(tracking_uri=uri)
        name = o.experiment or ctx.config.settings.name
        found = self.client.get_experiment_by_name(name)
        if found is not None:
            experiment_id = found.experiment_id
        else:
            location = artifact_location(uri)
            experiment_id = self.client.create_experiment(name, artifact_location=location)
        run = self.client.create_run(experiment_id, run_name=o.run_name or
                                     ctx.config.settings.name)
        self.run_id = run.info.run_id
        values = params(ctx.config.resolved())
        ps = [Param(k, param_text(v)) for k, v in values.items()]
        from graphflow.record import package_versions

        tags = versions_tags({"versions": package_versions(), "seed": ctx.seed,
                              "device": str(ctx.device), "config_hash": ctx.config.digest()})
        tags["graphflow.out_dir"] = str(ctx.out_dir.resolve())
        for i in range(0, max(len(ps), 1), 100):
            self.client.log_batch(self.run_id, params=ps[i:i + 100],
                                  tags=[RunTag(k, v) for k, v in tags.items()] if i == 0 else [])
        where = {"tracking_uri": uri, "experiment_id": experiment_id, "run_id": self.run_id}
        if uri.startswith("sqlite:///"):
            where["path"] = uri[len("sqlite:///"):]
        return where

    def log_epoch(self, key_values: dict[str, float], step: int) -> None:
        from mlflow.entities import Metric

        now = int(time.time() * 1000)
        self.pending += [Metric(k, float(v), now, step) for k, v in key_values.items()]
        if time.monotonic() - self.last_flush >= FLUSH_SECONDS or len(self.pending) >= BATCH:
            self.flush()

    def flush(self) -> None:
        while self.pending:
            batch, self.pending = self.pending[:BATCH], self.pending[BATCH:]
            self.client.log_batch(self.run_id, metrics=batch)
        self.last_flush = time.monotonic()

    def finish(self, ctx: RunContext, record: dict[str, Any]) -> None:
        from mlflow.entities import Metric, RunTag

        now = int(time.time() * 1000)
        finals = [Metric(final_key(k), float(v), now, 0) for k, v in record["metrics"].items()
                  if isinstance(v, (int, float))]
        tags = [RunTag("graphflow.status", str(record["status"]))]
        if record.get("error"):
            tags.append(RunTag("graphflow.error", str(record["error"])[:5000]))
        self.client.log_batch(self.run_id, metrics=finals[:BATCH], tags=tags)
        if self.options.artifacts:
            self._upload(ctx, record)
        self.client.set_terminated(self.run_id, status=STATUS.get(record["status"], "KILLED"))

    def _upload(self, ctx: RunContext, record: dict[str, Any]) -> None:
        files = run_files(record)
        for path, folder in files:
            if path.is_dir():
                self.client.log_artifacts(self.run_id, str(path), f"{folder}/{path.name}"
                                          if folder else path.name)
            else:
                self.client.log_artifact(self.run_id, str(path), folder or None)
        model = ctx.artifacts.model
        if model is not None and not any(folder == "model" for _, folder in files):
            import torch

            with tempfile.TemporaryDirectory() as tmp:
                path = Path(tmp) / "model.pt"
                torch.save({"model": model.state_dict(),
                            "model_info": ctx.artifacts.model_info}, path)
                self.client.log_artifact(self.run_id, str(path), "model")


def artifact_location(uri: str) -> str | None:
    """Where a new experiment of the store at ``uri`` keeps its artifacts: ``mlartifacts/``
    beside a SQLite database (MLflow's own default for such a store is ``./mlruns`` of the
    working directory); None (the store decides) for a server or a file store."""
    if not uri.startswith("sqlite:///"):
        return None
    database = Path(uri[len("sqlite:///"):])
    if not database.is_absolute():  # sqlite:///relative.db: relative to the working directory
        database = Path.cwd() / database
    return (database.parent / "mlartifacts").resolve().as_uri()
