"""The catalogue of components, and who registered each one.

Plugins never touch the registry directly: catalogue hooks receive a :class:`Register`
bound to one kind and one plugin, so the host always knows which plugin registered which
component and can say so in errors and in ``graphflow plugins``.

The registry also keeps the installed plugins that failed to load (:class:`BrokenPlugin`):
nobody can know which components a broken plugin would have registered, so an unknown
component name names them as its likely provider, with their error.
"""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import dataclass

from graphflow.components import BASES, KINDS, WHATS, Component, Kind
from graphflow.errors import PluginError, UnknownComponentError, did_you_mean


@dataclass(frozen=True)
class ComponentInfo:
    """A registered component class and the plugin that registered it."""

    kind: Kind
    name: str
    cls: type[Component]
    plugin: str

    @property
    def summary(self) -> str:
        return self.cls.summary

    @property
    def doc(self) -> str:
        return inspect.getdoc(self.cls) or ""


@dataclass(frozen=True)
class BrokenPlugin:
    """An installed plugin that failed to load and was skipped, with its error and the fix.

    :param name: the entry-point name (what ``GRAPHFLOW_BLOCK_PLUGINS`` takes).
    :param dist: the distribution that installed it (what ``pip uninstall`` takes).
    :param failed: what failed, after "failed": ``to import (pkg.module)``,
        ``in hook graphflow_register_models``, ``in registration``, ``in hook validation``.
    :param error: the error, one line (``ModuleNotFoundError: No module named 'x'``).
    """

    name: str
    dist: str | None
    version: str | None
    failed: str
    error: str
    first_party: bool = False

    def label(self) -> str:
        """``plugin "x" (from dist 1.0)``."""
        origin = " ".join(p for p in (self.dist, self.version) if p)
        return f'plugin "{self.name}"' + (f" (from {origin})" if origin else "")

    def problem(self) -> str:
        """``plugin "x" (from dist 1.0) failed to import (x.plugin): Error: message``."""
        return f"{self.label()} failed {self.failed}: {self.error}"

    def fix(self) -> str:
        """How to go on without the plugin (or repair it, for graphflow's own)."""
        block = f"GRAPHFLOW_BLOCK_PLUGINS={self.name}"
        if self.first_party:
            return f"reinstall graphflow (pip install -e .), or set {block} to go on without it"
        if self.dist:
            return f"set {block} to skip it, or pip uninstall {self.dist}"
        return f"set {block} to skip it"

    def warning(self) -> str:
        """The one line printed when graphflow goes on without the plugin."""
        return f"{self.problem()}; going on without it (fix: {self.fix()})"

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "dist": self.dist, "version": self.version,
                "first_party": self.first_party, "failed": self.failed, "error": self.error,
                "fix": self.fix()}


class Registry:
    """Component classes by kind and name, and the plugins that failed to provide theirs."""

    def __init__(self) -> None:
        self._by_kind: dict[Kind, dict[str, ComponentInfo]] = {k: {} for k in KINDS}
        self.broken: dict[str, BrokenPlugin] = {}

    def add(self, kind: Kind, cls: type[Component], plugin: str) -> ComponentInfo:
        """Check ``cls`` against the component contract and add it."""
        _check_component(kind, cls, plugin)
        existing = self._by_kind[kind].get(cls.name)
        if existing is not None:
            raise PluginError(
                f'plugin "{plugin}" registers {kind} "{cls.name}", which plugin '
                f'"{existing.plugin}" already registered; rename one of them or block a '
                f"plugin with GRAPHFLOW_BLOCK_PLUGINS",
                plugin=plugin,
            )
        info = ComponentInfo(kind=kind, name=cls.name, cls=cls, plugin=plugin)
        self._by_kind[kind][cls.name] = info
        return info

    def get(self, kind: Kind, name: str, *, where: str = "") -> ComponentInfo:
        """The component ``name`` of ``kind``; an unknown name lists the choices."""
        table = self._by_kind[kind]
        if name in table:
            return table[name]
        choices = ", ".join(sorted(table)) or "(none registered)"
        prefix = f"{where}: " if where else ""
        raise UnknownComponentError(
            f'{prefix}unknown {kind} type "{name}"{did_you_mean(name, table)}'
            f"{self.broken_hint()}; choices: {choices}"
        )

    def broken_hint(self) -> str:
        """``'; plugin "x" (from d) may provide it but failed to import (m): Error: ...'``
        for each broken plugin, else ''. Appended to every unknown-component message."""
        return "".join(f"; {b.label()} may provide it but failed {b.failed}: {b.error}"
                       for b in self.broken.values())

    def mark_broken(self, broken: BrokenPlugin) -> None:
        """Record a plugin that failed to load (and was skipped)."""
        self.broken[broken.name] = broken

    def drop(self, plugin: str) -> None:
        """Remove every component ``plugin`` registered (it failed after registering some)."""
        for table in self._by_kind.values():
            for name in [n for n, info in table.items() if info.plugin == plugin]:
                del table[name]

    def names(self, kind: Kind) -> list[str]:
        return sorted(self._by_kind[kind])

    def by_kind(self, kind: Kind) -> list[ComponentInfo]:
        return [self._by_kind[kind][n] for n in self.names(kind)]

    def find(self, name: str) -> list[ComponentInfo]:
        """Every component called ``name``, of any kind (``loader`` first)."""
        return [self._by_kind[k][name] for k in KINDS if name in self._by_kind[k]]

    def all(self) -> list[ComponentInfo]:
        return [info for k in KINDS for info in self.by_kind(k)]

    def of_plugin(self, plugin: str) -> list[ComponentInfo]:
        return [info for info in self.all() if info.plugin == plugin]


class Register:
    """What a catalogue hook receives: ``register(MyLoader)`` adds one component class."""

    def __init__(self, registry: Registry, kind: Kind, plugin: str):
        self._registry = registry
        self.kind = kind
        self.plugin = plugin

    def __call__(self, cls: type[Component]) -> type[Component]:
        self._registry.add(self.kind, cls, self.plugin)
        return cls


def _check_component(kind: Kind, cls: type, plugin: str) -> None:
    base = BASES[kind]

    def fail(problem: str) -> PluginError:
        return PluginError(
            f'plugin "{plugin}" registered an invalid {kind} {getattr(cls, "__name__", cls)!r}: '
            f"{problem}",
            plugin=plugin,
        )

    if not (inspect.isclass(cls) and issubclass(cls, base)):
        raise fail(f"it must be a subclass of graphflow.components.{base.__name__}")
    for attr in ("name", "summary"):
        value = getattr(cls, attr, None)
        if not isinstance(value, str) or not value.strip():
            raise fail(f"it needs a non-empty class attribute {attr!r}")
    if not dataclasses.is_dataclass(cls.Options):
        raise fail("its Options must be a dataclass (see graphflow.options.option)")
    if not (cls.__dict__.get("__doc__") or "").strip():
        raise fail("it needs its own docstring (graphflow describe shows it)")
    if kind == "exporter":
        names = {f.name for f in dataclasses.fields(cls.Options)}
        missing = {"what", "path"} - names
        if missing:
            raise fail(f"exporter options need {sorted(missing)}")
        writes = getattr(cls, "writes", None)
        if not isinstance(writes, tuple) or not writes or not set(writes) <= set(WHATS):
            raise fail(f"its writes must be a non-empty tuple of {', '.join(WHATS)}; got "
                       f"{writes!r}")
