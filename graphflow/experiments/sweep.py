"""``graphflow sweep PIPELINE.toml``: an Optuna study over the pipeline's options.

The pipeline file carries its search in a ``[sweep]`` table (a run ignores it)::

    [sweep]
    metric = "val_acc"        # a final metric of the runs (run.json "metrics"), chosen on
    direction = "maximize"    #   validation; the best trial's test_<...> is reported beside
    trials = 20               # trials to finish (complete or pruned), resumed ones included
    sampler = "tpe"           # tpe | random | grid
    pruner = "none"           # none | median | hyperband: fed each epoch's figure `metric`
    pruner_warmup = 10        # epochs a trial runs before the pruner may stop it
    seeds = [0]               # each trial runs once per seed; its value is their mean
    sampler_seed = 0          # the sampler's seed
    storage = "sweep.db"      # SQLite file (relative to the sweep folder): resumable
    jobs = 1                  # trials at once: > 1 runs that many worker processes

    [sweep.params]            # dotted keys, as --set takes them
    "model.hidden" = [16, 32, 64]                       # choices
    "train.lr" = { low = 1e-3, high = 0.1, log = true } # float range (log or linear)
    "model.layers" = { low = 1, high = 3 }              # integer range (int bounds)
    "train.dropout" = { low = 0.0, high = 0.6, step = 0.2 }

Each trial is an ordinary run with ``--set`` overrides, in ``OUT/trial-NNNN/seed-S/``.
The study lives in SQLite: a sweep stopped by a signal (or killed) and started again does
not repeat the trials it finished; the trial it was running runs again. It writes
``trials.parquet`` (and prints the table), ``best.toml`` (the pipeline with the best
trial's values, runnable as it is) and ``summary.json``.

With ``jobs`` > 1, :mod:`graphflow.experiments.parallel` starts that many worker processes
(``graphflow sweep ... --worker I``), each with its share of the cores, on the same study;
each claims trials (:func:`claim`) until the study has enough, and the parent writes the
outputs once all have ended.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import math
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from graphflow.runtime import signals
from graphflow.capabilities import check_pipeline
from graphflow.config import apply_override, read_toml, validate_config
from graphflow.errors import ConfigError, did_you_mean
from graphflow.plugin import hookimpl

if TYPE_CHECKING:
    from graphflow.manager import PluginHost

SAMPLERS = ("tpe", "random", "grid")
PRUNERS = ("none", "median", "hyperband")
KEYS = ("metric", "direction", "trials", "sampler", "pruner", "pruner_warmup", "seeds",
        "sampler_seed", "storage", "jobs", "params")


@dataclass(frozen=True)
class Space:
    """One searched option: ``choices``, or a range ``low``..``high`` (``log``, ``step``)."""

    key: str
    choices: tuple[Any, ...] | None = None
    low: float | int | None = None
    high: float | int | None = None
    log: bool = False
    step: float | int | None = None

    @property
    def is_int(self) -> bool:
        return self.choices is None and all(
            isinstance(v, int) and not isinstance(v, bool) for v in (self.low, self.high))

    def grid(self) -> list[Any]:
        """The values a grid sampler walks (choices, or an integer / stepped range)."""
        if self.choices is not None:
            return list(self.choices)
        if self.is_int and not self.log:
            return list(range(int(self.low), int(self.high) + 1, int(self.step or 1)))
        if self.step and not self.log:
            n = int(round((self.high - self.low) / self.step))
            return [self.low + i * self.step for i in range(n + 1)]
        raise ConfigError(f'[sweep.params] "{self.key}": sampler = "grid" needs choices, an '
                          f"integer range or a step")


@dataclass(frozen=True)
class SweepConfig:
    """The ``[sweep]`` table."""

    params: tuple[Space, ...]
    metric: str = "val_acc"
    direction: str = "maximize"
    trials: int = 20
    sampler: str = "tpe"
    pruner: str = "none"
    pruner_warmup: int = 10
    seeds: tuple[int, ...] = (0,)
    sampler_seed: int = 0
    storage: Path | None = None
    jobs: int = 1

    @property
    def test_metric(self) -> str:
        """``test_acc`` for ``val_acc``: the figure reported for the best trial."""
        return "test_" + self.metric[4:] if self.metric.startswith("val_") else self.metric

    def space_digest(self) -> str:
        return json.dumps([s.__dict__ for s in self.params], sort_keys=True, default=str)


def parse_sweep(raw: dict[str, Any], src: str, base: Path) -> SweepConfig:
    """The ``[sweep]`` table of a parsed pipeline, checked."""
    table = raw.get("sweep")
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: no [sweep] table; add one with [sweep.params] (see "
                          f"docs/experiments.md)")
    for key in table:
        if key not in KEYS:
            raise ConfigError(f"{src}: sweep.{key}: unknown key{did_you_mean(key, KEYS)}; valid "
                              f"keys: {', '.join(KEYS)}")

    def pick(key: str, default: Any, kind: type | tuple[type, ...]) -> Any:
        value = table.get(key, default)
        if not isinstance(value, kind) or isinstance(value, bool) and kind is int:
            raise ConfigError(f"{src}: sweep.{key}: expected {getattr(kind, '__name__', kind)}, "
                              f"got {value!r}")
        return value

    metric = pick("metric", "val_acc", str)
    direction = pick("direction", "maximize", str)
    if direction not in ("maximize", "minimize"):
        raise ConfigError(f'{src}: sweep.direction: expected "maximize" or "minimize", got '
                          f'"{direction}"')
    trials = pick("trials", 20, int)
    jobs = pick("jobs", 1, int)
    if trials < 1 or jobs < 1:
        raise ConfigError(f"{src}: sweep.trials and sweep.jobs must be >= 1")
    sampler_seed = pick("sampler_seed", 0, int)
    pruner_warmup = pick("pruner_warmup", 10, int)
    if pruner_warmup < 0:
        raise ConfigError(f"{src}: sweep.pruner_warmup = {pruner_warmup}: must be >= 0 (epochs "
                          f"before the pruner may stop a trial)")
    sampler = pick("sampler", "tpe", str)
    pruner = pick("pruner", "none", str)
    for key, value, valid in (("sampler", sampler, SAMPLERS), ("pruner", pruner, PRUNERS)):
        if value not in valid:
            raise ConfigError(f'{src}: sweep.{key}: unknown "{value}"{did_you_mean(value, valid)}'
                              f"; choices: {', '.join(valid)}")
    seeds = table.get("seeds", [0])
    seeds = [seeds] if isinstance(seeds, int) and not isinstance(seeds, bool) else seeds
    if not (isinstance(seeds, list) and seeds and all(isinstance(s, int) for s in seeds)):
        raise ConfigError(f"{src}: sweep.seeds: expected a list of integers, got {seeds!r}")
    storage = table.get("storage")
    if storage is not None and not isinstance(storage, str):
        raise ConfigError(f"{src}: sweep.storage: expected a file name, got {storage!r}")
    params = table.get("params")
    if not isinstance(params, dict) or not params:
        raise ConfigError(f'{src}: [sweep.params] is missing or empty; e.g. "model.hidden" = '
                          f"[16, 32]")
    spaces = tuple(_space(key, value, src) for key, value in params.items())
    config = SweepConfig(params=spaces, metric=metric, direction=direction, trials=trials,
                         sampler=sampler, pruner=pruner, pruner_warmup=pruner_warmup,
                         seeds=tuple(seeds), sampler_seed=sampler_seed,
                         storage=Path(storage) if storage else None, jobs=jobs)
    if sampler == "grid":
        for s in spaces:
            s.grid()
    return config


def _space(key: str, value: Any, src: str) -> Space:
    where = f'{src}: [sweep.params] "{key}"'
    if isinstance(value, list):
        if not value:
            raise ConfigError(f"{where}: empty list of choices")
        return Space(key, choices=tuple(value))
    if not isinstance(value, dict):
        raise ConfigError(f"{where}: expected a list of choices or {{ low = ..., high = ... }}, "
                          f"got {value!r}")
    unknown = set(value) - {"low", "high", "log", "step"}
    if unknown:
        k = sorted(unknown)[0]
        range_keys = ("low", "high", "log", "step")
        raise ConfigError(f"{where}: unknown key {k!r}{did_you_mean(k, range_keys)}; a range "
                          f"takes low, high, log, step")
    low, high = value.get("low"), value.get("high")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (low, high)):
        raise ConfigError(f"{where}: a range needs numbers low and high, got {low!r}, {high!r}")
    log, step = bool(value.get("log", False)), value.get("step")
    if not low < high:
        raise ConfigError(f"{where}: empty range: low {low} must be below high {high}")
    if log and low <= 0:
        raise ConfigError(f"{where}: a log range needs low > 0, got {low}")
    if log and step is not None:
        raise ConfigError(f"{where}: a range is log or stepped, not both")
    if step is not None and (not isinstance(step, (int, float)) or step <= 0):
        raise ConfigError(f"{where}: step must be a positive number, got {step!r}")
    return Space(key, low=low, high=high, log=log, step=step)


def check_keys(raw: dict[str, Any], sweep: SweepConfig, host: PluginHost, source: Path) -> None:
    """Every searched key is an option of the pipeline: each is set, with --set's rules, to a
    value of its space, and the pipeline validated (an unknown key names the near match)."""
    trial = copy.deepcopy(raw)
    for s in sweep.params:
        value = s.choices[0] if s.choices is not None else s.low
        try:
            apply_override(trial, f"{s.key}={toml_value(value)}", source="[sweep.params]")
        except ConfigError as exc:
            raise ConfigError(f"{source}: {exc}") from None  # names [sweep.params] and the key
    trial.pop("sweep", None)
    try:
        check_pipeline(validate_config(trial, host.registry, source=source), sweep=True)
    except ConfigError as exc:
        message = str(exc).removeprefix(f"{source}: ")
        raise ConfigError(f"{source}: [sweep.params] {message}") from None


def toml_value(value: Any) -> str:
    """A value as TOML text (what ``--set`` parses)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_key(k)} = {toml_value(v)}" for k, v in value.items()) \
            + " }"
    raise ConfigError(f"cannot write {value!r} as TOML")


def _toml_key(key: str) -> str:
    return key if key.replace("_", "").replace("-", "").isalnum() else json.dumps(key)


def dump_toml(raw: dict[str, Any]) -> str:
    """A pipeline table as TOML: plain values first, then tables and arrays of tables."""
    lines: list[str] = []

    def table(prefix: str, data: dict[str, Any], array: bool = False) -> None:
        plain = {k: v for k, v in data.items() if not _is_table(v)}
        if prefix:
            lines.append(f"[[{prefix}]]" if array else f"[{prefix}]")
        lines.extend(f"{_toml_key(k)} = {toml_value(v)}" for k, v in plain.items())
        for k, v in data.items():
            name = f"{prefix}.{_toml_key(k)}" if prefix else _toml_key(k)
            if isinstance(v, dict):
                lines.append("")
                table(name, v)
            elif _is_table(v):
                for item in v:
                    lines.append("")
                    table(name, item, array=True)

    table("", raw)
    return "\n".join(lines).lstrip("\n") + "\n"


def _is_table(value: Any) -> bool:
    return isinstance(value, dict) or (isinstance(value, list) and bool(value)
                                       and all(isinstance(v, dict) for v in value))


class Pruned(BaseException):
    """A trial the pruner stopped; the run records ``status = "pruned"``.

    A ``BaseException``, like ``KeyboardInterrupt``, so that it passes the host's hook and
    stage error handling unchanged, to the sweep."""

    run_status = "pruned"


@dataclass
class _Pruning:
    """Reports each epoch's ``metric`` to the trial and stops the run when it should prune."""

    trial: Any
    metric: str
    reported: list[float] = field(default_factory=list)

    @hookimpl
    def graphflow_epoch_end(self, ctx: Any, stage: Any, epoch: int,
                            metrics: dict[str, float]) -> None:
        value = metrics.get(self.metric)
        if value is None or not math.isfinite(value):
            return
        self.trial.report(value, epoch)
        self.reported.append(value)
        if self.trial.should_prune():
            raise Pruned(f"{self.metric} {value:.4g} at epoch {epoch}")


def _distributions(sweep: SweepConfig) -> dict[str, Any]:
    import optuna.distributions as d

    out: dict[str, Any] = {}
    for s in sweep.params:
        if s.choices is not None:
            out[s.key] = d.CategoricalDistribution(list(s.choices))
        elif s.is_int:
            out[s.key] = d.IntDistribution(int(s.low), int(s.high), log=s.log,
                                           step=int(s.step or 1))
        else:
            out[s.key] = d.FloatDistribution(float(s.low), float(s.high), log=s.log,
                                             step=float(s.step) if s.step else None)
    return out


def _sampler(sweep: SweepConfig, seed: int) -> Any:
    import optuna

    if sweep.sampler == "grid":
        return _grid_sampler_class()({s.key: s.grid() for s in sweep.params}, seed=seed)
    if sweep.sampler == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    # parallel workers: a running trial counts as a poor one, so that they spread out
    return optuna.samplers.TPESampler(seed=seed, constant_liar=sweep.jobs > 1)


def _grid_sampler_class() -> type:
    import optuna

    class GridSampler(optuna.samplers.GridSampler):
        """Optuna's grid sampler, less its ``after_trial``: that calls ``study.stop()`` once
        the grid is done, which only ``study.optimize`` allows (the sweep asks and tells, and
        counts its trials itself: it never asks for more than the grid, :func:`grid_size`)."""

        def after_trial(self, study: Any, trial: Any, state: Any, values: Any) -> None:
            return None

    return GridSampler


def grid_size(sweep: SweepConfig) -> int:
    """How many points a grid sweep has (the product of its spaces' values)."""
    return math.prod(len(s.grid()) for s in sweep.params)


def _pruner(sweep: SweepConfig) -> Any:
    import optuna

    if sweep.pruner == "median":  # Optuna's default of 5 trials before any pruning
        return optuna.pruners.MedianPruner(n_startup_trials=5,
                                           n_warmup_steps=sweep.pruner_warmup)
    if sweep.pruner == "hyperband":
        return optuna.pruners.HyperbandPruner(min_resource=max(1, sweep.pruner_warmup))
    return optuna.pruners.NopPruner()


def _run_trial(run_pipeline: Any, config: Any, host: PluginHost) -> tuple[dict[str, Any],
                                                                          int | None]:
    """One run, and a signal that came while it wrote its record (or None).

    Under the CLI's signal guard each run gets a guard of its own: a run shields its end
    from signals (graphflow.runtime.signals.finishing) until its guard exits, and the sweep must
    still stop on a signal that came then, once it has recorded the finished run."""
    if signals.active() is None:  # library use: signals are the caller's business
        return run_pipeline(config, host, quiet=True).record, None
    with signals.handle_signals() as guard:
        record = run_pipeline(config, host, quiet=True).record
    return record, guard.requested


@dataclass
class OpenSweep:
    """A sweep ready to run: its pipeline, ``[sweep]`` table, folder and Optuna study."""

    pipeline: Path
    raw: dict[str, Any]
    sweep: SweepConfig
    name: str
    root: Path
    storage_path: Path
    study: Any

    def count(self, *states: str) -> int:
        """The study's trials in ``states`` (Optuna ``TrialState`` names), read from storage."""
        import optuna

        wanted = tuple(optuna.trial.TrialState[s] for s in states)
        return len(self.study.get_trials(deepcopy=False, states=wanted))

    def finished(self) -> int:
        """Trials that count towards ``trials``: complete or pruned."""
        return self.count("COMPLETE", "PRUNED")


def open_sweep(pipeline: Path, host: PluginHost, *, out_dir: Path | None = None,
               overrides: list[str] = ()) -> OpenSweep:
    """Read and check the ``[sweep]`` of ``pipeline`` and open (or create) its study."""
    try:
        import optuna
    except ImportError:
        raise ConfigError("graphflow sweep needs Optuna: pip install 'graphflow[sweep]'") \
            from None
    raw = read_toml(pipeline)
    for assignment in overrides:
        apply_override(raw, assignment)
    sweep = parse_sweep(raw, str(pipeline), pipeline.parent)
    check_keys(raw, sweep, host, pipeline)
    if sweep.sampler == "grid" and sweep.trials > grid_size(sweep):  # more would repeat points
        sweep = dataclasses.replace(sweep, trials=grid_size(sweep))
    name = str(raw.get("pipeline", {}).get("name", "pipeline"))
    root = out_dir or Path("runs") / f"{name}-sweep"
    root.mkdir(parents=True, exist_ok=True)
    storage_path = root / (sweep.storage or Path("sweep.db"))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    storage = sqlite_storage(storage_path)
    existing = optuna.get_all_study_names(storage) if storage_path.exists() else []
    if existing and name not in existing:
        raise ConfigError(f"{storage_path}: holds the study {existing[0]!r}, not {name!r}; "
                          f"give another sweep.storage or --out-dir")
    study = optuna.create_study(study_name=name, storage=storage, load_if_exists=True,
                                direction=sweep.direction, pruner=_pruner(sweep))
    space = sweep.space_digest()
    if study.user_attrs.setdefault("space", None) is None and not study.trials:
        study.set_user_attr("space", space)
        study.set_user_attr("metric", sweep.metric)
    elif study.user_attrs.get("space") != space:
        raise ConfigError(f"{storage_path}: holds a study of another search space; give "
                          f"another sweep.storage or --out-dir, or restore [sweep.params]")
    return OpenSweep(pipeline, raw, sweep, name, root, storage_path, study)


def sqlite_storage(path: Path) -> Any:
    """Optuna's storage on the SQLite file ``path``, set for several processes and a report
    every epoch: write-ahead logging (readers do not wait for a writer), ``synchronous =
    NORMAL`` (a commit does not wait for the disk; a power cut may lose the last trials'
    states, which then run again) and a minute's wait for the lock instead of 5 s.

    Every transaction begins ``IMMEDIATE`` (it takes the write lock first). Optuna claims a
    queued trial by reading its state and then writing ``RUNNING``, relying on ``SELECT ...
    FOR UPDATE``, which SQLite ignores: with plain deferred transactions two workers could
    both read ``WAITING`` and run the same trial."""
    import sqlite3

    import optuna
    import sqlalchemy

    def connect() -> sqlite3.Connection:
        # isolation_level=None: the driver leaves BEGIN to SQLAlchemy's "begin" event below
        connection = sqlite3.connect(str(path), timeout=60, check_same_thread=False,
                                     isolation_level=None)
        connection.execute("PRAGMA journal_mode=WAL")
        connection.execute("PRAGMA synchronous=NORMAL")
        return connection

    storage = optuna.storages.RDBStorage(f"sqlite:///{path.resolve()}",
                                         engine_kwargs={"creator": connect})
    sqlalchemy.event.listen(storage.engine, "begin",
                            lambda conn: conn.exec_driver_sql("BEGIN IMMEDIATE"))
    return storage


def requeue(study: Any, trial: Any, reason: str, *, killed_worker: bool = False) -> None:
    """Mark ``trial`` (a ``FrozenTrial`` or a ``Trial``) failed and queue its values again, so
    that the next trial asked runs them (a trial cut short runs again with the same values).
    ``killed_worker``: its process died while running it (the queued trial says so)."""
    import optuna

    trial_id = trial._trial_id
    study._storage.set_trial_user_attr(trial_id, "failed", reason)
    frozen = study._storage.get_trial(trial_id)
    if frozen.state == optuna.trial.TrialState.RUNNING:
        study._storage.set_trial_state_values(trial_id, optuna.trial.TrialState.FAIL)
    study.enqueue_trial(frozen.params, skip_if_exists=False,
                        user_attrs={"requeued": frozen.user_attrs.get("requeued", 0) + 1,
                                    **({"killed_worker": True} if killed_worker else {})})


def recover_stale(study: Any) -> int:
    """Requeue the trials left ``RUNNING`` by a sweep that was killed (no process runs them
    now: call it before starting any). Returns how many."""
    import optuna

    stale = study.get_trials(deepcopy=False, states=(optuna.trial.TrialState.RUNNING,))
    for trial in stale:
        requeue(study, trial, "its sweep was killed")
    return len(stale)


def run_sweep(pipeline: Path, host: PluginHost, *, out_dir: Path | None = None,
              overrides: list[str] = (), echo: Any = print,
              worker: int | None = None) -> dict[str, Any]:
    """Run (or resume) the sweep of ``pipeline``; returns the summary it writes.

    ``sweep.jobs`` > 1 starts that many worker processes on the study
    (:mod:`graphflow.experiments.parallel`); ``worker`` is set in such a process (it runs
    trials until the study has enough, then returns an empty summary: the parent writes it).
    """
    opened = open_sweep(pipeline, host, out_dir=out_dir, overrides=list(overrides))
    if worker is not None:
        run_trials(opened, host, overrides=list(overrides), echo=echo, worker=worker)
        return {}
    stale = recover_stale(opened.study)  # no worker runs now: a RUNNING trial was cut short
    sweep = opened.sweep
    if opened.finished() or stale:
        echo(f"graphflow: resuming {opened.name}: {opened.finished()} of {sweep.trials} trials "
             f"done ({opened.storage_path})")
    if sweep.jobs > 1 and opened.finished() < sweep.trials:
        from graphflow.experiments.parallel import run_workers

        run_workers(opened, overrides=list(overrides), echo=echo)
    else:
        run_trials(opened, host, overrides=list(overrides), echo=echo)
    return _write_outputs(opened.study, sweep, opened.raw, opened.root, opened.name, echo)


def sampler_seed(base: int, done: int, worker: int | None) -> int:
    """The sampler's seed in one process: ``base`` for a fresh single-process sweep, else
    derived from ``base``, the trials already in the study and the worker, so that a resumed
    sweep and parallel workers do not propose the same values again."""
    if done == 0 and worker is None:
        return base
    import numpy as np

    return int(np.random.SeedSequence([base, done, 0 if worker is None else worker + 1])
               .generate_state(1)[0])


def claim(study: Any, distributions: dict[str, Any], target: int) -> Any:
    """The next trial to run, or None when the study has ``target`` trials finished or
    running. Several processes may claim at once: a trial asked past the target (another
    process took the last one between the count and the ask) is given back."""
    import optuna

    counted = (optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED,
               optuna.trial.TrialState.RUNNING)
    if len(study.get_trials(deepcopy=False, states=counted)) >= target:
        return None
    trial = study.ask(distributions)
    ahead = sum(t.number < trial.number
                for t in study.get_trials(deepcopy=False, states=counted))
    if ahead < target:
        return trial
    if "fixed_params" in study._storage.get_trial(trial._trial_id).system_attrs:
        requeue(study, trial, "asked past the target")  # keep the queued values for later
    else:
        study.tell(trial, state=optuna.trial.TrialState.FAIL)
    return None


def run_trials(opened: OpenSweep, host: PluginHost, *, overrides: list[str] = (),
               echo: Any = print, worker: int | None = None) -> None:
    """Run trials in this process until the study has ``trials`` finished or running."""
    import os

    import optuna

    from graphflow.config import load_config
    from graphflow.runner import run_pipeline

    sweep, study, root = opened.sweep, opened.study, opened.root
    study.sampler = _sampler(sweep, sampler_seed(sweep.sampler_seed, len(study.trials), worker))
    TrialState = optuna.trial.TrialState
    distributions = _distributions(sweep)
    tag = "" if worker is None else f"[worker {worker}] "
    while True:
        # a signal between runs waits until the trial is recorded (graphflow.runtime.signals)
        with signals.deferred():
            trial = claim(study, distributions, sweep.trials)
            if trial is None:
                break
            trial.set_user_attr("pid", os.getpid())
            values, tests, t0, stop = [], [], time.perf_counter(), None
            state = TrialState.COMPLETE
            try:
                for i, seed in enumerate(sweep.seeds):
                    signals.safe_point()  # a signal that came between runs
                    sets = [f"{k}={toml_value(v)}" for k, v in trial.params.items()]
                    folder = root / f"trial-{trial.number:04d}" / f"seed-{seed}"
                    config = load_config(opened.pipeline, host.registry, out_dir=folder,
                                         overrides=[*overrides, *sets, f"pipeline.seed={seed}"])
                    pruning = _Pruning(trial, sweep.metric) if sweep.pruner != "none" and i == 0 \
                        else None
                    if pruning is not None:
                        host.pm.register(pruning, name=f"graphflow-sweep-{trial.number}")
                    try:
                        record, stop = _run_trial(run_pipeline, config, host)
                    finally:
                        if pruning is not None:
                            host.pm.unregister(pruning)
                    if stop is not None and i < len(sweep.seeds) - 1:  # seeds left: run again
                        raise signals.Terminated(stop)
                    metrics = record["metrics"]
                    if sweep.metric not in metrics:
                        study.tell(trial, state=TrialState.FAIL)
                        raise ConfigError(f"sweep.metric: the runs have no metric "
                                          f"{sweep.metric!r}{did_you_mean(sweep.metric, metrics)}; "
                                          f"their metrics: {', '.join(metrics) or 'none'}")
                    values.append(float(metrics[sweep.metric]))
                    if sweep.test_metric in metrics:
                        tests.append(float(metrics[sweep.test_metric]))
            except Pruned:
                state = TrialState.PRUNED
            except KeyboardInterrupt:  # a signal (graphflow.runtime.signals.Terminated) or Ctrl-C
                requeue(study, trial, "stopped by a signal")  # runs again on resume
                raise
            seconds = time.perf_counter() - t0
            trial_attrs = {"seconds": round(seconds, 3), "values": values}
            if len(values) > 1:
                trial_attrs["std"] = statistics.stdev(values)
            if tests:
                trial_attrs["test"] = statistics.fmean(tests)
            for k, v in trial_attrs.items():
                study._storage.set_trial_user_attr(trial._trial_id, k, v)
            if state == TrialState.PRUNED:
                study.tell(trial, state=TrialState.PRUNED)
            else:
                study.tell(trial, statistics.fmean(values))
            shown = f"{sweep.metric}={statistics.fmean(values):.4g}" if values else "pruned"
            echo(f"{tag}trial {trial.number}: {shown}  {json.dumps(trial.params)}  "
                 f"({seconds:.1f}s)")
            if stop is not None:  # a signal came at the end of the trial's last run
                raise signals.Terminated(stop)


def _write_outputs(study: Any, sweep: SweepConfig, raw: dict[str, Any], root: Path,
                   name: str, echo: Any) -> dict[str, Any]:
    import optuna
    import pyarrow as pa
    import pyarrow.parquet as pq

    from graphflow.io.atomic import atomic_path, write_json, write_text

    TrialState = optuna.trial.TrialState
    trials = [t for t in study.trials if t.state in (TrialState.COMPLETE, TrialState.PRUNED)]
    rows = []
    for t in trials:
        row = {"trial": t.number, "state": t.state.name.lower(), sweep.metric: t.value,
               f"{sweep.metric}_std": t.user_attrs.get("std"),
               sweep.test_metric: t.user_attrs.get("test"),
               "seconds": t.user_attrs.get("seconds")}
        row.update({f"params.{k}": t.params.get(k) for k in (s.key for s in sweep.params)})
        rows.append(row)
    columns = {k: [r[k] for r in rows] for k in rows[0]} if rows else {}
    for k, values in columns.items():  # mixed choices (16 and "auto") become text
        if len({type(v) for v in values if v is not None}) > 1:
            columns[k] = [None if v is None else str(v) for v in values]
    with atomic_path(root / "trials.parquet") as tmp:
        pq.write_table(pa.table(columns), tmp)
    from graphflow.experiments.runs import cell, render

    if rows:
        echo(render([list(rows[0])] + [[cell(v) for v in r.values()] for r in rows]))
    complete = [t for t in trials if t.state == TrialState.COMPLETE]
    summary: dict[str, Any] = {"study": name, "metric": sweep.metric,
                               "direction": sweep.direction, "trials": len(trials),
                               "complete": len(complete),
                               "pruned": len(trials) - len(complete),
                               "storage": str(sweep.storage or "sweep.db"),  # in the sweep folder
                               "table": str(root / "trials.parquet")}
    if complete:
        best = study.best_trial
        summary.update(best_trial=best.number, best_value=best.value,
                       best_std=best.user_attrs.get("std"), best_params=best.params,
                       best_test={sweep.test_metric: best.user_attrs.get("test")},
                       best_runs=str(root / f"trial-{best.number:04d}"))
        best_raw = copy.deepcopy(raw)
        best_raw.pop("sweep", None)
        for k, v in best.params.items():
            apply_override(best_raw, f"{k}={toml_value(v)}")
        write_text(root / "best.toml",
                   f"# best trial {best.number} of sweep {name!r}: {sweep.metric} = "
                   f"{best.value:.6g}\n" + dump_toml(best_raw))
        summary["best_config"] = str(root / "best.toml")
        echo(f"best trial {best.number}: {sweep.metric} {best.value:.4g}, "
             f"{sweep.test_metric} {_fmt(best.user_attrs.get('test'))}  {json.dumps(best.params)}")
    write_json(root / "summary.json", summary)
    echo(f"wrote: {root / 'trials.parquet'}, {root / 'best.toml'}, {root / 'summary.json'}")
    return summary


def _fmt(value: Any) -> str:
    return "-" if value is None else f"{value:.4g}"

