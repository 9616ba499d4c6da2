"""The catalogue of components, and who registered each one.

Plugins never touch the registry directly: catalogue hooks receive a :class:`Register`
bound to one kind and one plugin, so the host always knows which plugin registered which
component and can say so in errors and in ``graphflow plugins``.
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


class Registry:
    """Component classes by kind and name."""

    def __init__(self) -> None:
        self._by_kind: dict[Kind, dict[str, ComponentInfo]] = {k: {} for k in KINDS}

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
            f'{prefix}unknown {kind} type "{name}"{did_you_mean(name, table)}; '
            f"choices: {choices}"
        )

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
