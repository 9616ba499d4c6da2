"""Run a validated pipeline: load -> transforms -> (sample, model, train)* -> exports ->
explain.

Each stage is timed, announced to lifecycle hooks, and wrapped so that a failure names its
section and, for an unexpected exception, the plugin that raised it. The run record is
written whether the run succeeds, fails or is interrupted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.capabilities import check_pipeline
from graphflow.runtime import allocator, calibrate, cores
from graphflow.config import ComponentSpec, PipelineConfig
from graphflow.context import RunContext, Stage
from graphflow.runtime.device import resolve_device
from graphflow.distributed.world import World
from graphflow.errors import ConfigError, DataError, GraphflowError, PluginError
from graphflow.experiments.tracking import tracked
from graphflow.graph import GraphData
from graphflow.graphs.collection import refuse_collection
from graphflow.manager import PluginHost
from graphflow.runtime.memory import PeakMemory
from graphflow.record import RunRecord
from graphflow.registry import ComponentInfo
from graphflow.runtime.seed import seed_everything
from graphflow.runtime.signals import Terminated, finishing, safe_point
from graphflow.sparse import gemm


@dataclass
class RunResult:
    """What ``run_pipeline`` returns: the record as written and the final context."""

    record: dict[str, Any]
    ctx: RunContext

    @property
    def out_dir(self) -> Path:
        return self.ctx.out_dir


def default_out_dir(config: PipelineConfig) -> Path:
    return config.settings.out_dir or Path("runs") / config.settings.name


def run_pipeline(config: PipelineConfig, host: PluginHost, *, resume: bool = False,
                 quiet: bool = False, world: World | None = None) -> RunResult:
    """Run every stage of ``config`` and write ``run.json``.

    :param world: this process's place in a data-parallel run (its process group joined);
        only its rank 0 writes files and prints. Default: a single process.
    """
    settings = config.settings
    if settings.seeds:
        raise ConfigError(f"{config.source}: pipeline.seeds: run_pipeline runs one seed; "
                          f"graphflow.experiments.seeds.run_seeds runs each of them")
    world = world or World()
    # what a stage cannot offer stops here too when the pipeline comes from the API, not the CLI
    check_pipeline(config, nproc=world.size, resume=resume)
    device = world.place(resolve_device(settings.device))
    out_dir = default_out_dir(config)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create out_dir {out_dir}: {exc.strerror or exc}") from None
    ctx = RunContext(config=config, host=host, device=device, seed=settings.seed,
                     rng=seed_everything(settings.seed), out_dir=out_dir, resume=resume,
                     quiet=quiet or not world.is_main, world=world)
    if not resume and world.is_main:
        ctx.metrics_path.unlink(missing_ok=True)
    record = RunRecord(out_dir / "run.json", name=settings.name, config=config.resolved(),
                       config_hash=config.digest(), seed=settings.seed, device=device,
                       write=world.is_main)
    record.data["allocator"] = allocator.apply(settings.allocator)  # type: ignore[arg-type]
    measured, gemm_record = calibrate.for_gemm(settings.gemm) if device.type == "cpu" \
        else (None, {"source": "not used on " + device.type})
    record.data["calibration"] = {"mode": calibrate.mode(), "gemm": gemm_record}
    # CPU dense products, restored after; [[track]] trackers follow the run (rank 0)
    with gemm.applied(settings.gemm, measured) as products, tracked(ctx, record):
        record.data["gemm"] = {**products, "source": gemm_record["source"]}
        splits: dict[str, dict[str, int]] = {}
        if config.train and device.type == "cpu":  # the core splits, per budget
            splits, record.data["calibration"]["cores"] = calibrate.for_cores(
                settings.cores or cores.default_cores())
        try:
            host.broadcast("graphflow_pipeline_start", ctx=ctx)
            for spec, action in _plan(config, splits):
                _run_stage(ctx, record, spec, action)
            ctx.stage = None
        except BaseException as exc:
            status = "interrupted" if isinstance(exc, KeyboardInterrupt) else "failed"
            status = getattr(type(exc), "run_status", status)  # e.g. a sweep's pruned trial
            finishing()  # a further signal must not cut the record of this one short
            if isinstance(exc, Terminated):  # SIGTERM / SIGHUP / SIGINT under the CLI
                status, record.data["signal"] = exc.status, exc.name
            try:
                host.broadcast("graphflow_pipeline_error", ctx=ctx, stage=ctx.stage, error=exc)
            except GraphflowError as hook_exc:
                ctx.info(f"warning: {hook_exc}")
            record.data.update(world.describe())
            record.finish(status=status, metrics=ctx.metrics, outputs=ctx.outputs,
                          error=f"{type(exc).__name__}: {exc}", reports=ctx.reports)
            raise
        if ctx.metrics_path.exists():
            ctx.add_output(ctx.metrics_path, "epoch log")
        finishing()
        record.data.update(world.describe())
        data = record.finish(status="ok", metrics=ctx.metrics, outputs=ctx.outputs,
                             reports=ctx.reports)
        host.broadcast("graphflow_pipeline_end", ctx=ctx, record=data)
    return RunResult(record=data, ctx=ctx)


Action = Callable[[RunContext, Any], None]


def _plan(config: PipelineConfig, splits: dict[str, dict[str, int]] | None = None
          ) -> Iterator[tuple[ComponentSpec, Action]]:
    yield config.load, _load
    for spec in config.transforms:
        yield spec, _transform
    prepared: ComponentSpec | None = None
    for train in config.train:
        if train.sample is not None and train.sample is not prepared:
            prepared = train.sample
            yield train.sample, _sample
        if train.model is not None:
            yield train.model, _model
        yield train.task, _with_cores(
            _train if train.sample is not None else _train_without_sampler, train.cores,
            config.settings.cores, has_sampler=train.sample is not None, measured=splits)
    if not config.train:  # still build (and so check) a lone [sample] / [model]
        if config.sample is not None:
            yield config.sample, _sample
        if config.model is not None:
            yield config.model, _model
    for spec in config.exports:
        yield spec, _export
    if config.explain is not None:
        yield config.explain.method, _explain(config.explain)


def _run_stage(ctx: RunContext, record: RunRecord, spec: ComponentSpec, action: Action) -> None:
    safe_point()  # a signal noted during the last stage stops the run before the next
    stage = Stage(section=spec.section, kind=spec.kind, type=spec.type, plugin=spec.plugin)
    ctx.stage = stage
    ctx.host.broadcast("graphflow_stage_start", ctx=ctx, stage=stage)
    memory = PeakMemory(ctx.device)
    memory.start()
    start = time.perf_counter()
    try:
        action(ctx, spec.build())
    except GraphflowError as exc:
        message = str(exc)
        if f"[{stage.section}]" not in message and not message.startswith(stage.section):
            culprit = None if isinstance(exc, PluginError) else \
                ctx.host.culprit(exc, _in_use(ctx, spec))
            if culprit is not None and culprit.component not in (None, spec.info):
                # e.g. spmm's DataError inside a third-party model that the task called
                c = culprit.component
                message = f'{c.kind} "{c.name}" ({ctx.host.plugin_label(c.plugin)}): {message}'
            exc.args = (f"[{stage.section}] {stage.type}: {message}",)
        raise
    except (KeyboardInterrupt, MemoryError):
        raise
    except Exception as exc:
        culprit = ctx.host.culprit(exc, _in_use(ctx, spec))
        plugin = culprit.plugin if culprit is not None else stage.plugin
        component = culprit.component if culprit is not None else None
        raise ctx.host.plugin_error(plugin, f"stage {stage.section} ({stage.type})", exc,
                                    component=None if component is spec.info else component
                                    ) from exc
    seconds = time.perf_counter() - start
    plan, ctx.cores = ctx.cores, None
    record.add_stage(stage.section, stage.type, stage.plugin, seconds, memory.stop(),
                     cores=plan.as_record() if plan is not None else None)
    ctx.host.broadcast("graphflow_stage_end", ctx=ctx, stage=stage, seconds=seconds)


def _in_use(ctx: RunContext, spec: ComponentSpec) -> list[ComponentInfo]:
    """The components a failing stage ran: its own, then the model and sampler it calls."""
    found = [spec.info]
    for kind, component in (("model", ctx.model), ("sampler", ctx.sampler)):
        name = getattr(component, "name", None)
        if isinstance(name, str):
            try:
                info = ctx.host.registry.get(kind, name)
            except GraphflowError:
                continue
            if isinstance(component, info.cls) and info not in found:
                found.append(info)
    return found


def _load(ctx: RunContext, loader: Any) -> None:
    data = loader.load(ctx)
    if not isinstance(data, GraphData):
        raise TypeError(f"load() returned {type(data).__name__}, expected GraphData")
    _check_graph(data)
    ctx.data = data
    ctx.info(f"loaded {data.name}: {data.summary()}")


def _transform(ctx: RunContext, transform: Any) -> None:
    before = ctx.graph()
    if before.is_typed and not getattr(transform, "typed", False):
        g = before.graph
        raise DataError(f'transform "{transform.name}" works on graphs with one node type and '
                        f'one relation, but "{before.name}" has {len(g.ntypes)} node types and '
                        f"{len(g.canonical_etypes)} relations; remove it from the pipeline "
                        f"(transforms for typed graphs: see docs/heterogeneous.md)")
    data = transform.apply(before, ctx)
    if not isinstance(data, GraphData):
        raise TypeError(f"apply() returned {type(data).__name__}, expected GraphData")
    _check_graph(data)
    ctx.data = data


def _check_graph(data: GraphData) -> None:
    if data.graph.device.type != "cpu":
        raise TypeError(f"the graph must stay on the CPU between stages, got {data.graph.device}")


def _sample(ctx: RunContext, sampler: Any) -> None:
    ctx.sampler = sampler
    ctx.sampler_graph = sampler.prepare(ctx.graph(), ctx.device)


def _model(ctx: RunContext, model: Any) -> None:
    ctx.model = model


def _with_cores(action: Action, overrides: cores.CoreOptions, budget: int, *,
                has_sampler: bool, measured: dict[str, dict[str, int]] | None = None) -> Action:
    """``action`` run under the stage's core plan (``ctx.cores``, see graphflow.runtime.cores: the
    ``measured`` split of its workload, else the policy's, under the overrides); the caller's
    torch thread setting comes back afterwards."""
    def run(ctx: RunContext, task: Any) -> None:
        workload = cores.task_workload(task, has_sampler)
        ctx.cores = cores.plan(workload, budget, overrides,
                               *cores.component_settings(task, ctx.sampler, workload),
                               measured=measured)
        with cores.applied(ctx.cores):
            action(ctx, task)

    return run


def _train(ctx: RunContext, task: Any) -> None:
    _check_level(ctx, task)
    task.run(ctx)


def _check_level(ctx: RunContext, task: Any) -> None:
    """A node-level task given a collection of graphs stops here, in one line."""
    if getattr(task, "level", "node") == "node":
        refuse_collection(ctx.graph(), task.name)


def _train_without_sampler(ctx: RunContext, task: Any) -> None:
    """A stage without [sample] must not see the sampler an earlier stage prepared (which
    stays prepared for a later stage that shares it)."""
    _check_level(ctx, task)
    sampler, graph = ctx.sampler, ctx.sampler_graph
    ctx.sampler, ctx.sampler_graph = None, None
    try:
        task.run(ctx)
    finally:
        ctx.sampler, ctx.sampler_graph = sampler, graph


def _explain(spec: Any) -> Action:
    """The ``[explain]`` stage (:mod:`graphflow.explain.stage`): ``spec``'s method, built by
    the stage runner, explains the run's bundle; rank 0 only."""
    def run(ctx: RunContext, explainer: Any) -> None:
        if not ctx.world.is_main:  # data-parallel: rank 0 wrote the bundle
            return
        from graphflow.explain.stage import run_explain_stage

        run_explain_stage(ctx, spec, explainer)

    return run


def _export(ctx: RunContext, exporter: Any) -> None:
    if not ctx.world.is_main:  # data-parallel: every rank holds the same artifacts
        return
    for path in exporter.export(ctx):
        ctx.add_output(Path(path), exporter.options.what)
