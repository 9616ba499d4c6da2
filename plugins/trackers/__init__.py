"""Plugin "trackers": experiment trackers of runs (``[[track]]``).

One module per tracker; each imports its client library only when a run uses it.
"""

from __future__ import annotations

from graphflow.plugin import hookimpl
from graphflow.registry import Register
from graphflow_plugins.trackers.mlflow import MlflowTracker
from graphflow_plugins.trackers.tensorboard import TensorBoardTracker


@hookimpl
def graphflow_register_trackers(register: Register) -> None:
    """Register the built-in trackers."""
    for cls in (MlflowTracker, TensorBoardTracker):
        register(cls)
