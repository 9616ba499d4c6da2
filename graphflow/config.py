"""Pipeline TOML -> typed, validated :class:`PipelineConfig`.

The file format is the user contract::

    [pipeline]            name, seed (or seeds = [...]: one run per seed, see
                          graphflow.experiments.seeds), device (auto|cpu|cuda|cuda:N), out_dir
    [load]                type = "<loader>", then that loader's options
    [[transform]]         0..n, applied in order
    [sample]              optional
    [model]               optional
    [train] / [[train]]   optional; several [[train]] stages run in order, and each may carry
                          its own [train.sample] / [train.model] sub-table, and a
                          [train.cores] table overriding the core policy (graphflow.runtime.cores)
    [[export]]            0..n
    [[track]]             0..n experiment trackers (mlflow, tensorboard...), see
                          graphflow.experiments.tracking
    [sweep]               graphflow sweep's search space and study (ignored by a run), see
                          graphflow.experiments.sweep
    [explain]             optional: explain the trained model after training (nodes, graphs
                          or pairs = FILE, method, top_k, the method's options), see
                          graphflow.explain.stage

Every component section has ``type``; all its other keys are options validated against the
component's schema. Relative paths resolve against the pipeline file's folder.
"""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import json
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from graphflow.capabilities import check_options
from graphflow.components import Kind
from graphflow.runtime.cores import CoreOptions
from graphflow.errors import ConfigError, did_you_mean
from graphflow.options import coerce, parse_options
from graphflow.registry import ComponentInfo, Registry
from graphflow.sparse import gemm

SECTIONS: dict[str, Kind | None] = {
    "pipeline": None,
    "load": "loader",
    "transform": "transform",
    "sample": "sampler",
    "model": "model",
    "train": "task",
    "export": "exporter",
    "track": "tracker",
    "sweep": None,  # graphflow sweep's search (graphflow.experiments.sweep); runs ignore it
    "explain": None,  # the stage after training (graphflow.explain.stage)
}
LIST_SECTIONS = ("transform", "export", "track")
LISTABLE_SECTIONS = (*LIST_SECTIONS, "train")  # one table, or a [[list]] of them
TRAIN_SUBSECTIONS = {"sample": "sampler", "model": "model"}


@dataclass(frozen=True)
class PipelineSettings:
    """The ``[pipeline]`` table."""

    name: str = "pipeline"
    seed: int = 0
    seeds: tuple[int, ...] | None = None  # one run per seed (graphflow.experiments.seeds)
    device: str = "auto"
    out_dir: Path | None = None  # None: runs/<name> under the working directory
    cores: int = 0  # the core budget of graphflow.runtime.cores; 0: torch's thread count at the start
    allocator: str = "retain"  # graphflow.runtime.allocator: "retain" freed memory, or "system" malloc
    gemm: str = "auto"  # graphflow.sparse.gemm: CPU dense products by "onednn" or "torch"


@dataclass(frozen=True)
class ComponentSpec:
    """One validated component section."""

    section: str  # "load", "transform.0", "train.1.model", ...
    kind: Kind
    type: str
    options: Any
    info: ComponentInfo
    given: frozenset[str] = frozenset()  # the option names the pipeline sets

    @property
    def plugin(self) -> str:
        return self.info.plugin

    def build(self) -> Any:
        """A fresh instance of the component with these options."""
        return self.info.cls(self.options)

    def resolved(self) -> dict[str, Any]:
        return {"type": self.type, **_jsonable(dataclasses.asdict(self.options))}


@dataclass(frozen=True)
class TrainSpec:
    """One training stage with the sampler and model it uses (its own or the global ones)."""

    task: ComponentSpec
    sample: ComponentSpec | None
    model: ComponentSpec | None
    cores: CoreOptions = dataclasses.field(default_factory=CoreOptions)  # [train.cores]


@dataclass(frozen=True)
class PipelineConfig:
    """A whole validated pipeline."""

    source: Path
    settings: PipelineSettings
    load: ComponentSpec
    transforms: tuple[ComponentSpec, ...]
    sample: ComponentSpec | None
    model: ComponentSpec | None
    train: tuple[TrainSpec, ...]
    exports: tuple[ComponentSpec, ...]
    raw: dict[str, Any]
    tracks: tuple[ComponentSpec, ...] = ()  # [[track]]
    explain: Any = None  # [explain]: a graphflow.explain.stage.ExplainSpec

    def resolved(self) -> dict[str, Any]:
        """The config with every default filled in, as written to ``run.json``."""
        s = self.settings
        out: dict[str, Any] = {
            "pipeline": {"name": s.name, "seed": s.seed, "device": s.device,
                         "out_dir": str(s.out_dir) if s.out_dir else None, "cores": s.cores,
                         "allocator": s.allocator, "gemm": s.gemm},
            "load": self.load.resolved(),
            "transform": [t.resolved() for t in self.transforms],
        }
        if self.sample:
            out["sample"] = self.sample.resolved()
        if self.model:
            out["model"] = self.model.resolved()
        out["train"] = []
        for t in self.train:
            entry = t.task.resolved()
            for name, spec in (("sample", t.sample), ("model", t.model)):
                if spec is not None and spec is not getattr(self, name):
                    entry[name] = spec.resolved()
            if not t.cores.is_default():
                entry["cores"] = dataclasses.asdict(t.cores)
            out["train"].append(entry)
        out["export"] = [e.resolved() for e in self.exports]
        if s.seeds is not None:  # absent for one seed: the hash of such a pipeline stays
            out["pipeline"]["seeds"] = list(s.seeds)
        if self.tracks:  # absent when empty: the hash of a pipeline without trackers stays
            out["track"] = [t.resolved() for t in self.tracks]
        if self.explain is not None:  # likewise
            out["explain"] = self.explain.resolved()
        return out

    def digest(self) -> str:
        """A short hash of the resolved config, for run metadata."""
        text = json.dumps(self.resolved(), sort_keys=True, default=str)
        return hashlib.sha256(text.encode()).hexdigest()[:16]


def read_toml(path: Path) -> dict[str, Any]:
    """Parse a TOML file; errors give the file, line and column."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        line = exc.object[:exc.start].count(b"\n") + 1
        raise ConfigError(f"{path}:{line}: not UTF-8 text (byte 0x{exc.object[exc.start]:02x}); "
                          f"save the pipeline file as UTF-8") from None
    except IsADirectoryError:
        raise ConfigError(f"pipeline file {path} is a folder; give the .toml file") from None
    except FileNotFoundError:
        raise ConfigError(f"pipeline file not found: {path}") from None
    except OSError as exc:
        raise ConfigError(f"cannot read pipeline file {path}: {exc.strerror}") from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None


def apply_override(raw: dict[str, Any], assignment: str, *, source: str = "--set") -> None:
    """Apply ``section.key=value`` (value parsed as TOML, else taken as a string) in place.

    ``transform.0.key`` addresses an entry of a list section; a section written as one
    table (``[train]``) is its entry 0, so ``train.0.key`` and ``train.key`` both reach it.
    """
    if "=" not in assignment:
        raise ConfigError(f"{source} {assignment!r}: expected section.key=value")
    dotted, text = assignment.split("=", 1)
    parts = [p.strip() for p in dotted.strip().split(".")]
    if len(parts) < 2 or not all(parts):
        raise ConfigError(f"{source} {assignment!r}: expected section.key=value")
    try:
        value = tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        value = text.strip()
    if parts[0] not in SECTIONS:
        raise ConfigError(f"{source} {dotted}: unknown section {parts[0]!r}"
                          f"{did_you_mean(parts[0], SECTIONS)}")
    node: Any = raw
    for i, part in enumerate(parts[:-1]):
        where = ".".join(parts[: i + 1])
        if isinstance(node, list):
            if not part.isdigit() or int(part) >= len(node):
                raise ConfigError(f"{source} {dotted}: {where} needs an index below {len(node)}")
            node = node[int(part)]
        elif isinstance(node, dict):
            if i == 1 and part.isdigit() and parts[0] in LISTABLE_SECTIONS:
                if int(part) == 0:  # one [section] table: the same as [[section]] of one
                    continue
                raise ConfigError(f"{source} {dotted}: the pipeline has one [{parts[0]}] "
                                  f"table, entry 0")
            nxt = node.get(part)
            if nxt is None:
                if i + 1 < len(parts) - 1 and parts[i + 1].isdigit():
                    raise ConfigError(f"{source} {dotted}: the pipeline has no [[{where}]]")
                nxt = node[part] = {}
            node = nxt
        else:
            raise ConfigError(f"{source} {dotted}: {where} is a value, not a table")
    if not isinstance(node, dict):
        where = ".".join(parts[:-1])
        span = f"{where}.0.{parts[-1]}" + (f" to {where}.{len(node) - 1}.{parts[-1]}"
                                           if len(node) > 1 else "")
        raise ConfigError(f"{source} {dotted}: {where} is a list of {len(node)} [[{where}]] "
                          f"tables; add an index: {span}")
    node[parts[-1]] = value


def load_config(
    path: str | Path,
    registry: Registry,
    *,
    overrides: list[str] = (),
    device: str | None = None,
    out_dir: str | Path | None = None,
    seeds: list[int] | None = None,
) -> PipelineConfig:
    """Read, override and validate a pipeline file.

    :param seeds: ``pipeline.seeds`` (``graphflow run --seeds``): replaces the file's
        ``seed`` / ``seeds``.
    """
    path = Path(path)
    raw = read_toml(path)
    if not isinstance(raw.get("pipeline", {}), dict):
        raise ConfigError(f"{path}: [pipeline] must be a table (write [pipeline], not "
                          f"[[pipeline]])")
    for assignment in overrides:
        apply_override(raw, assignment)
    if device is not None:
        raw.setdefault("pipeline", {})["device"] = device
    if out_dir is not None:
        raw.setdefault("pipeline", {})["out_dir"] = str(Path(out_dir).resolve())
    if seeds is not None:
        raw.setdefault("pipeline", {}).pop("seed", None)
        raw["pipeline"]["seeds"] = list(seeds)
    return validate_config(raw, registry, source=path)


def validate_config(raw: dict[str, Any], registry: Registry, *, source: Path) -> PipelineConfig:
    """Validate a parsed pipeline table (see module docstring)."""
    src = str(source)
    base = source.parent.resolve()
    for key in raw:
        if key not in SECTIONS:
            raise ConfigError(f"{src}: unknown section [{key}]{did_you_mean(key, SECTIONS)}; "
                              f"sections: {', '.join(SECTIONS)}")
    settings = _settings(raw.get("pipeline", {}), src, base)
    if "load" not in raw:
        raise ConfigError(f'{src}: missing [load] section (e.g. [load] type = "synthetic")')

    def one(table: Any, section: str, kind: Kind) -> ComponentSpec:
        return _component(table, section, kind, registry, src, base)

    def many(name: str, kind: Kind) -> tuple[ComponentSpec, ...]:
        value = raw.get(name, [])
        tables = value if isinstance(value, list) else [value]
        return tuple(one(t, f"{name}.{i}", kind) for i, t in enumerate(tables))

    sample = one(raw["sample"], "sample", "sampler") if "sample" in raw else None
    model = one(raw["model"], "model", "model") if "model" in raw else None
    train_raw = raw.get("train", [])
    train_tables = train_raw if isinstance(train_raw, list) else [train_raw]
    train = []
    for i, table in enumerate(train_tables):
        section = f"train.{i}" if isinstance(train_raw, list) else "train"
        train.append(_train(table, section, registry, src, base, sample, model))
    model, train = _shared_model(model, train)
    for i, spec in enumerate(train):  # a stage that depends on the ones before it checks them
        check = getattr(spec.task.info.cls, "check_stages", None)
        if callable(check):
            check(spec, train[:i], src)
    load = one(raw["load"], "load", "loader")
    transforms, exports = many("transform", "transform"), many("export", "exporter")
    tracks = many("track", "tracker")
    explain = None
    if "explain" in raw:
        from graphflow.explain.stage import explain_spec

        explain = explain_spec(raw["explain"], registry, src, base, train)
    return PipelineConfig(
        source=source, settings=settings, load=load, transforms=transforms, sample=sample,
        model=model, train=tuple(train), exports=exports, raw=copy.deepcopy(raw),
        tracks=tracks, explain=explain,
    )


def _settings(table: Any, src: str, base: Path) -> PipelineSettings:
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: [pipeline] must be a table")
    fields = {f.name: f.type for f in dataclasses.fields(PipelineSettings)}
    hints = {"name": str, "seed": int, "device": str, "out_dir": Path, "cores": int,
             "allocator": str, "gemm": str}
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in fields:
            raise ConfigError(f"{src}: pipeline.{key}: unknown key{did_you_mean(key, fields)}; "
                              f"valid keys: {', '.join(fields)}")
        if key == "seeds":
            values[key] = check_seeds(value, f"{src}: pipeline.seeds")
            continue
        values[key] = coerce(value, hints[key], where=f"{src}: pipeline.{key}", base_dir=base)
    if "seeds" in values and "seed" in values:
        raise ConfigError(f"{src}: pipeline.seed and pipeline.seeds both given: keep one "
                          f"(graphflow run --seeds replaces both; graphflow sweep takes "
                          f"sweep.seeds)")
    if values.get("cores", 0) < 0:
        raise ConfigError(f"{src}: pipeline.cores: must be >= 0 (0 = torch's thread count), "
                          f"got {values['cores']}")
    if values.get("allocator", "retain") not in ("retain", "system"):
        raise ConfigError(f'{src}: pipeline.allocator: expected "retain" (keep freed memory '
                          f'for the next batch) or "system" (malloc as it is), got '
                          f'"{values["allocator"]}"')
    try:
        gemm.validate(values.get("gemm", "auto"))
    except ConfigError as exc:
        raise ConfigError(f"{src}: pipeline.gemm: {exc}") from None
    device = values.get("device", "auto")
    if not _valid_device(device):
        raise ConfigError(f'{src}: pipeline.device: expected "auto", "cpu", "cuda" or "cuda:N", '
                          f'got "{device}"')
    return PipelineSettings(**values)


def check_seeds(value: Any, where: str) -> tuple[int, ...]:
    """``pipeline.seeds``: a non-empty list of distinct integers >= 0."""
    if not isinstance(value, list) or not value:
        raise ConfigError(f"{where}: expected a non-empty list of integers, e.g. [0, 1, 2], "
                          f"got {value!r}")
    bad = [v for v in value if not isinstance(v, int) or isinstance(v, bool) or v < 0]
    if bad:
        raise ConfigError(f"{where}: {bad[0]!r} is not an integer >= 0; seeds are whole "
                          f"numbers, e.g. [0, 1, 2]")
    twice = sorted({v for v in value if value.count(v) > 1})
    if twice:
        raise ConfigError(f"{where}: seed {twice[0]} is given twice; each seed runs once")
    return tuple(value)


def _valid_device(device: str) -> bool:
    if device in ("auto", "cpu", "cuda"):
        return True
    return device.startswith("cuda:") and device[5:].isdigit()


def _component(table: Any, section: str, kind: Kind, registry: Registry, src: str,
               base: Path, skip: tuple[str, ...] = ()) -> ComponentSpec:
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: [{section}] must be a table")
    if "type" not in table:
        choices = ", ".join(registry.names(kind))
        raise ConfigError(f'{src}: [{section}] needs type = "<{kind}>"; choices: {choices}')
    name = table["type"]
    if not isinstance(name, str):
        raise ConfigError(f"{src}: {section}.type: expected a string, got {name!r}")
    info = registry.get(kind, name, where=f"{src}: {section}.type")
    values = {k: v for k, v in table.items() if k != "type" and k not in skip}
    options = parse_options(info.cls.Options, values, section=section, component=name,
                            source=src, base_dir=base)
    if kind == "exporter":
        _check_writes(info, options.what, registry, f"{src}: [{section}] {name}")
    return ComponentSpec(section=section, kind=kind, type=name, options=options, info=info,
                         given=frozenset(values))


def _check_writes(info: ComponentInfo, what: str, registry: Registry, where: str) -> None:
    """An exporter is asked only for an artifact it declares in ``writes``."""
    writes = info.cls.writes
    if what in writes:
        return
    others = [c.name for c in registry.by_kind("exporter") if what in c.cls.writes]
    hint = f"; exporters that write {what}: {', '.join(others)}" if others else ""
    raise ConfigError(f'{where}: what = "{what}" is not written by this exporter; it writes: '
                      f"{', '.join(writes)}{hint}")


def _train(table: Any, section: str, registry: Registry, src: str, base: Path,
           sample: ComponentSpec | None, model: ComponentSpec | None) -> TrainSpec:
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: [{section}] must be a table")
    subs = {}
    for sub, kind in TRAIN_SUBSECTIONS.items():
        value = table.get(sub)
        if isinstance(value, dict):
            subs[sub] = _component(value, f"{section}.{sub}", kind, registry, src, base)
    name = table.get("type")
    if isinstance(name, str) and name in registry.names("task"):  # amp asked of a task without
        model_spec = subs.get("model", model)
        check_options(registry.get("task", name).cls, table, section, name,
                      typed=model_spec is not None and getattr(model_spec.info.cls, "typed",
                                                                False),
                      sampled=subs.get("sample", sample) is not None)
    task = _component(table, section, "task", registry, src, base,
                      skip=tuple(subs) + ("cores",))
    cores = _cores(table.get("cores", {}), f"{section}.cores", src, base)
    spec = _task_defaults(TrainSpec(task=task, sample=subs.get("sample", sample),
                                    model=subs.get("model", model), cores=cores))
    cls = task.info.cls
    if cls.requires_model and spec.model is None:
        raise ConfigError(f'{src}: [{section}] {task.type} needs a [model] section '
                          f'(e.g. type = "gcn"); models: {", ".join(registry.names("model"))}')
    if cls.requires_sampler and spec.sample is None:
        raise ConfigError(f"{src}: [{section}] {task.type} needs a [sample] section; "
                          f"samplers: {', '.join(registry.names('sampler'))}")
    if cls.fanout_per_layer and spec.sample is not None and spec.model is not None:
        _check_fanouts(spec.sample, spec.model, src)
    model_cls = spec.model.info.cls if spec.model is not None else None
    if getattr(model_cls, "reads_edge_features", False) and not cls.carries_edge_features:
        carriers = [n for n in registry.names("task")
                    if getattr(registry.get("task", n).cls, "carries_edge_features", False)]
        raise ConfigError(f"{src}: [{spec.model.section}] {spec.model.type} reads edge "
                          f"features, which {task.type} does not carry; use it with "
                          f"{', '.join(carriers) or 'a task that carries them'}, or use a "
                          f"model without edge features (gin)")
    return spec


def _task_defaults(spec: TrainSpec) -> TrainSpec:
    """The stage with its task's defaults by mode (full batch or sampled) filled in, and the
    task's preferred values for the ``[model]`` options the pipeline leaves unset
    (:meth:`graphflow.components.Task.mode_defaults`, ``model_defaults``)."""
    task = spec.task.build()
    sampled = spec.sample is not None
    task.resolve_mode_defaults(sampled=sampled)
    out = dataclasses.replace(spec, task=dataclasses.replace(spec.task, options=task.options))
    model = spec.model
    if model is not None:
        names = {f.name for f in dataclasses.fields(model.options)}
        unset = {k: v for k, v in task.model_defaults(model.type, sampled=sampled).items()
                 if k in names and k not in model.given}
        if unset:
            try:
                options = dataclasses.replace(model.options, **unset)
            except ValueError as exc:
                shown = ", ".join(f"{k} = {v!r}" for k, v in unset.items())
                raise ConfigError(f"[{model.section}] {model.type}: the defaults task "
                                  f"{spec.task.type!r} gives it ({shown}) are rejected: {exc}; "
                                  f"set these options in [{model.section}]") from None
            out = dataclasses.replace(out, model=dataclasses.replace(model, options=options))
    return out


def _shared_model(model: ComponentSpec | None, train: list[TrainSpec]
                  ) -> tuple[ComponentSpec | None, list[TrainSpec]]:
    """The ``[model]`` as the stages that use it resolved it, when they all agree (one
    record in ``run.json``); else as written, each stage recording its own."""
    derived = [t.model for t in train if t.model is not None and t.model.section == "model"]
    if model is None or not derived or any(m.options != derived[0].options for m in derived):
        return model, train
    shared = derived[0]
    return shared, [dataclasses.replace(t, model=shared)
                    if t.model is not None and t.model.section == "model" else t for t in train]


def _check_fanouts(sample: ComponentSpec, model: ComponentSpec, src: str) -> None:
    """One fanout per message-passing layer, checked before any data loads.

    The layer count is the ``num_layers`` of the module the model builds, built here with
    1-wide input and output (cheap; the torch random state is left as it was). A model whose
    module has no ``num_layers``, or cannot be built without the data, is checked by the task
    once it runs.
    """
    sampler = sample.build()
    if not hasattr(sampler, "check_layers"):
        return
    import torch

    try:
        with torch.random.fork_rng(devices=[]):
            layers = getattr(model.build().build(1, 1), "num_layers", None)
    except Exception:  # e.g. a model that needs the real widths: the task checks at run time
        return
    if isinstance(layers, int):
        try:
            sampler.check_layers(layers, what=f"[{model.section}] {model.type}")
        except ConfigError as exc:
            raise ConfigError(f"{src}: [{sample.section}] {exc}") from None


def _cores(table: Any, section: str, src: str, base: Path) -> CoreOptions:
    """A stage's ``[train.cores]`` table (see :mod:`graphflow.runtime.cores`)."""
    if not isinstance(table, dict):
        raise ConfigError(f"{src}: [{section}] must be a table, e.g. [{section}] threads = 2")
    return parse_options(CoreOptions, table, section=section, component="cores", source=src,
                         base_dir=base)


def _jsonable(value: Any) -> Any:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return value
