"""Every hook graphflow calls, grouped by pipeline phase.

Hooks are prefixed ``graphflow_``. Implement one with ``graphflow.plugin.hookimpl`` in a module
that your package exposes under the entry-point group ``graphflow``::

    [project.entry-points.graphflow]
    my_plugin = "my_package.graphflow_plugin"

graphflow's own components (``plugins/`` in the source tree, imported as
``graphflow_plugins``) are registered through exactly the same group.

Catalogue hooks run once, when the plugin manager is created; the host calls each plugin's
implementation on its own so that every component is recorded with the plugin that
registered it. Lifecycle hooks are broadcasts: every implementation is called, results are
ignored, and an exception aborts the run with a message that names the plugin.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from graphflow.plugin import hookspec

if TYPE_CHECKING:
    from graphflow.context import RunContext, Stage
    from graphflow.registry import Register


# --- load -----------------------------------------------------------------------------------


@hookspec
def graphflow_register_loaders(register: Register) -> None:
    """Register loader classes (``[load] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Loader`
        subclass this plugin provides.
    """


# --- transform ------------------------------------------------------------------------------


@hookspec
def graphflow_register_transforms(register: Register) -> None:
    """Register transform classes (``[[transform]] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Transform`
        subclass this plugin provides.
    """


# --- sample ---------------------------------------------------------------------------------


@hookspec
def graphflow_register_samplers(register: Register) -> None:
    """Register sampler classes (``[sample] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Sampler`
        subclass this plugin provides.
    """


# --- model ----------------------------------------------------------------------------------


@hookspec
def graphflow_register_models(register: Register) -> None:
    """Register model classes, stacks of sparse message-passing layers (``[model] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Model`
        subclass this plugin provides.
    """


# --- train ----------------------------------------------------------------------------------


@hookspec
def graphflow_register_tasks(register: Register) -> None:
    """Register training or embedding tasks (``[train] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Task`
        subclass this plugin provides.
    """


@hookspec
def graphflow_epoch_end(ctx: RunContext, stage: Stage, epoch: int, metrics: dict[str, float]) -> None:
    """Called by a training task after each epoch, once the epoch's record is in ``metrics.jsonl``.

    Use it to stream metrics to an experiment tracker.

    :param ctx: the run's context.
    :param stage: the training stage that ran the epoch.
    :param epoch: the epoch number, from 1.
    :param metrics: the epoch's figures (``loss``, ``train_acc``, ``val_acc``...).
    """


# --- export ---------------------------------------------------------------------------------


@hookspec
def graphflow_register_exporters(register: Register) -> None:
    """Register exporter classes (``[[export]] type = ...``).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Exporter`
        subclass this plugin provides.
    """


# --- track ----------------------------------------------------------------------------------


@hookspec
def graphflow_register_trackers(register: Register) -> None:
    """Register experiment trackers (``[[track]] type = ...``): MLflow, TensorBoard, W&B...

    The host drives each configured tracker through the run's lifecycle on rank 0 only
    (:class:`graphflow.components.Tracker`: ``start``, ``log_epoch``, ``flush``, ``finish``);
    a tracker that fails warns once and the run goes on.

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Tracker`
        subclass this plugin provides.
    """


# --- explain --------------------------------------------------------------------------------


@hookspec
def graphflow_register_explainers(register: Register) -> None:
    """Register explanation methods (``graphflow explain --method NAME``): GNNExplainer,
    gradient attributions...

    Each :class:`graphflow.components.Explainer` returns importances of the edges of each
    target's computation subgraph and of the input features; ``explains`` names the model
    kinds it handles (docs/explain.md).

    :param register: call ``register(cls)`` with each :class:`graphflow.components.Explainer`
        subclass this plugin provides.
    """


# --- lifecycle ------------------------------------------------------------------------------


@hookspec
def graphflow_pipeline_start(ctx: RunContext) -> None:
    """Called once the configuration is resolved and before the first stage.

    :param ctx: the run's context; ``ctx.config`` is the validated pipeline.
    """


@hookspec
def graphflow_stage_start(ctx: RunContext, stage: Stage) -> None:
    """Called before each stage (``load``, ``transform.0``, ``sample``, ``train``, ...).

    :param ctx: the run's context.
    :param stage: which section runs, its component type and the plugin that provides it.
    """


@hookspec
def graphflow_stage_end(ctx: RunContext, stage: Stage, seconds: float) -> None:
    """Called after each stage that succeeded.

    :param ctx: the run's context, holding what the stage produced.
    :param stage: the stage that finished.
    :param seconds: its wall-clock duration.
    """


@hookspec
def graphflow_pipeline_end(ctx: RunContext, record: dict[str, Any]) -> None:
    """Called after the last stage, once ``run.json`` is written.

    :param ctx: the run's context.
    :param record: the run record as written to ``run.json``.
    """


@hookspec
def graphflow_pipeline_error(ctx: RunContext, stage: Stage | None, error: BaseException) -> None:
    """Called when a stage fails, before the failed run's ``run.json`` is written.

    An exception raised here is reported but does not replace the original error.

    :param ctx: the run's context.
    :param stage: the stage that failed, or None if the run failed between stages.
    :param error: the exception.
    """
