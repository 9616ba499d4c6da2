"""Create the plugin manager: entry points in, catalogue out.

Nothing happens at import time. :func:`create_host` builds a fresh pluggy manager, loads every
entry point of the group ``graphflow`` (graphflow's own plugins are entry points of the
``graphflow`` distribution, registered exactly like third-party ones), calls the catalogue
hooks, and returns a :class:`PluginHost`.

Environment:

* ``GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD=1`` loads only graphflow's own entry points.
* ``GRAPHFLOW_BLOCK_PLUGINS=a,b`` blocks plugins by name (entry-point name).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from importlib import metadata
from typing import Any

import pluggy

from graphflow import hookspecs
from graphflow.components import Kind
from graphflow.errors import EnvironmentProblem, PluginError
from graphflow.plugin import NAME
from graphflow.registry import Register, Registry

FIRST_PARTY = "graphflow"
AUTOLOAD_ENV = "GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD"
BLOCK_ENV = "GRAPHFLOW_BLOCK_PLUGINS"

CATALOGUE_HOOKS: dict[Kind, str] = {
    "loader": "graphflow_register_loaders",
    "transform": "graphflow_register_transforms",
    "sampler": "graphflow_register_samplers",
    "model": "graphflow_register_models",
    "task": "graphflow_register_tasks",
    "exporter": "graphflow_register_exporters",
}


@dataclass(frozen=True)
class PluginInfo:
    """One registered plugin, as ``graphflow plugins`` lists it."""

    name: str
    dist: str | None
    version: str | None
    source: str | None
    first_party: bool

    def label(self) -> str:
        return f'plugin "{self.name}"' + (f" (from {self.dist})" if self.dist else "")


@dataclass
class PluginHost:
    """A plugin manager with its catalogue; one per run, never a global."""

    pm: pluggy.PluginManager
    registry: Registry
    plugins: dict[str, PluginInfo] = field(default_factory=dict)

    def broadcast(self, hook: str, **kwargs: Any) -> None:
        """Call a lifecycle hook; an exception is re-raised as ``PluginError`` naming the plugin."""
        caller = getattr(self.pm.hook, hook)
        try:
            caller(**kwargs)
        except Exception as exc:
            name = _blame(exc, caller)
            raise self.plugin_error(name, f"hook {hook}", exc) from exc

    def plugin_error(self, name: str | None, where: str, exc: BaseException) -> PluginError:
        info = self.plugins.get(name or "")
        who = info.label() if info else f'plugin "{name}"' if name else "a plugin"
        return PluginError(f"{who} failed in {where}: {type(exc).__name__}: {exc}",
                           plugin=name, stage=where)


def create_host(
    *,
    autoload: bool | None = None,
    block: Iterable[str] = (),
    plugins: Mapping[str, object] | None = None,
) -> PluginHost:
    """Build a plugin host.

    :param autoload: load third-party entry points; default: unless ``GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD``.
    :param block: plugin names not to register, added to ``GRAPHFLOW_BLOCK_PLUGINS``.
    :param plugins: extra in-process plugins ``{name: module_or_object}`` (tests, notebooks).
    """
    pm = pluggy.PluginManager(NAME)
    pm.add_hookspecs(hookspecs)
    blocked = set(block) | {b.strip() for b in os.environ.get(BLOCK_ENV, "").split(",") if b.strip()}
    for name in blocked:
        pm.set_blocked(name)
    if autoload is None:
        autoload = os.environ.get(AUTOLOAD_ENV, "").strip().lower() in ("", "0", "false", "no")
    host = PluginHost(pm=pm, registry=Registry())

    for ep in metadata.entry_points(group=NAME):
        dist = ep.dist.name if ep.dist else None
        first_party = dist == FIRST_PARTY
        if (not first_party and not autoload) or pm.is_blocked(ep.name):
            continue
        info = PluginInfo(ep.name, dist, ep.dist.version if ep.dist else None, None, first_party)
        try:
            module = ep.load()
        except Exception as exc:
            raise PluginError(f"{info.label()} failed to import ({ep.value}): "
                              f"{type(exc).__name__}: {exc}", plugin=ep.name) from exc
        _register(host, module, info)
    for name, obj in (plugins or {}).items():
        if not pm.is_blocked(name):
            _register(host, obj, PluginInfo(name, None, None, None, False))
    try:
        pm.check_pending()
    except pluggy.PluginValidationError as exc:
        raise host.plugin_error(pm.get_name(exc.plugin), "hook validation", exc) from exc
    if not any(p.first_party for p in host.plugins.values()) and not blocked:
        raise EnvironmentProblem(
            "graphflow's own plugins are not registered: install the package with "
            "'pip install -e .' (entry points come from the installed metadata)"
        )
    _fill_catalogue(host)
    return host


def _register(host: PluginHost, obj: object, info: PluginInfo) -> None:
    source = getattr(obj, "__file__", None) or getattr(type(obj), "__module__", None)
    info = PluginInfo(info.name, info.dist, info.version, source, info.first_party)
    try:
        host.pm.register(obj, name=info.name)
    except (ValueError, pluggy.PluginValidationError) as exc:
        raise host.plugin_error(info.name, "registration", exc) from exc
    host.plugins[info.name] = info


def _fill_catalogue(host: PluginHost) -> None:
    for kind, hook in CATALOGUE_HOOKS.items():
        for impl in getattr(host.pm.hook, hook).get_hookimpls():
            register = Register(host.registry, kind, impl.plugin_name)
            try:
                impl.function(register=register)
            except PluginError:
                raise
            except Exception as exc:
                raise host.plugin_error(impl.plugin_name, f"hook {hook}", exc) from exc


def _blame(exc: BaseException, caller: pluggy.HookCaller) -> str | None:
    """The plugin whose hook implementation raised ``exc``, found from the traceback."""
    codes = {impl.function.__code__: impl.plugin_name for impl in caller.get_hookimpls()}
    tb = exc.__traceback__
    culprit = None
    while tb is not None:
        culprit = codes.get(tb.tb_frame.f_code, culprit)
        tb = tb.tb_next
    return culprit
