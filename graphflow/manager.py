"""Create the plugin manager: entry points in, catalogue out.

Nothing happens at import time. :func:`create_host` builds a fresh pluggy manager, loads every
entry point of the group ``graphflow`` (graphflow's own plugins are entry points of the
``graphflow`` distribution, registered exactly like third-party ones), calls the catalogue
hooks, and returns a :class:`PluginHost`.

Environment:

* ``GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD=1`` loads only graphflow's own entry points.
* ``GRAPHFLOW_BLOCK_PLUGINS=a,b`` blocks plugins by name (entry-point name).

An installed plugin that fails to load (its import, its registration, hook validation or a
catalogue hook raises) does not stop graphflow: it is dropped with whatever it registered,
recorded as a :class:`~graphflow.registry.BrokenPlugin`, and one line on stderr says so, with
the fix. A pipeline that names a component nobody registered then gets an error naming the
broken plugins as its likely provider. Plugins passed in-process (``plugins=``) still raise:
their caller wants to know.
"""

from __future__ import annotations

import inspect
import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import metadata
from types import TracebackType
from typing import Any

import pluggy

from graphflow import hookspecs
from graphflow.components import Kind
from graphflow.errors import EnvironmentProblem, PluginError, one_line
from graphflow.plugin import NAME
from graphflow.registry import BrokenPlugin, ComponentInfo, Register, Registry

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
    "tracker": "graphflow_register_trackers",
    "explainer": "graphflow_register_explainers",
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

    @property
    def broken(self) -> dict[str, BrokenPlugin]:
        """Installed plugins that failed to load and were skipped, by name."""
        return self.registry.broken

    def broadcast(self, hook: str, **kwargs: Any) -> None:
        """Call a lifecycle hook; an exception is re-raised as ``PluginError`` naming the plugin."""
        caller = getattr(self.pm.hook, hook)
        try:
            caller(**kwargs)
        except Exception as exc:
            name = _blame(exc, caller)
            raise self.plugin_error(name, f"hook {hook}", exc) from exc

    def plugin_error(self, name: str | None, where: str, exc: BaseException, *,
                     component: ComponentInfo | None = None) -> PluginError:
        """``plugin "x" (from dist)[, model "y",] failed in WHERE: Type: message``."""
        who = self.plugin_label(name)
        if component is not None:
            who += f', {component.kind} "{component.name}",'
        return PluginError(f"{who} failed in {where}: {type(exc).__name__}: {exc}",
                           plugin=name, stage=where)

    def plugin_label(self, name: str | None) -> str:
        """``plugin "x" (from dist)``, as messages name a plugin."""
        info = self.plugins.get(name or "")
        return info.label() if info else f'plugin "{name}"' if name else "a plugin"

    def culprit(self, exc: BaseException, in_use: Sequence[ComponentInfo] = ()) -> Culprit | None:
        """The plugin (and component) whose code raised ``exc``, from its traceback.

        The innermost frame whose module belongs to a plugin names the plugin: a module
        defines a registered component class, is a plugin's own module (or below it), or
        lies in the top-level package of a third-party plugin. The component is the one of
        ``in_use`` (the components of the failing stage: its own, then the model and the
        sampler it calls) from that plugin and defined in that module, else the only one
        of ``in_use`` from that plugin, else the only registered component defined in that
        module. None when no frame belongs to a plugin.
        """
        owners = self._module_owners()
        frames = []
        tb: TracebackType | None = exc.__traceback__
        while tb is not None:
            frames.append(tb.tb_frame)
            tb = tb.tb_next
        for frame in reversed(frames):  # innermost first
            module = frame.f_globals.get("__name__", "")
            plugin = _owner(owners, module)
            if plugin is None:
                continue
            ours = [c for c in in_use if c.plugin == plugin]
            here = [c for c in ours if c.cls.__module__ == module]
            if here:
                return Culprit(plugin, here[0])
            if len(ours) == 1:
                return Culprit(plugin, ours[0])
            defined = [c for c in self.registry.of_plugin(plugin) if c.cls.__module__ == module]
            return Culprit(plugin, defined[0] if len(defined) == 1 else None)
        return None

    def _module_owners(self) -> dict[str, str]:
        """Module name -> plugin: component classes' modules, plugin modules, and the
        top-level package of a third-party plugin that shares it with no other plugin."""
        owners: dict[str, str] = {}
        for comp in self.registry.all():
            owners.setdefault(comp.cls.__module__, comp.plugin)
        packages: dict[str, set[str]] = {}
        for name, obj in self.pm.list_name_plugin():
            module = obj.__name__ if inspect.ismodule(obj) else type(obj).__module__
            owners.setdefault(module, name)
            info = self.plugins.get(name)
            if info is not None and not info.first_party:
                packages.setdefault(module.split(".")[0], set()).add(name)
        for package, names in packages.items():
            if len(names) == 1 and package not in ("graphflow", "graphflow_plugins"):
                owners.setdefault(package, next(iter(names)))
        return owners


@dataclass(frozen=True)
class Culprit:
    """Who raised an exception: a plugin and, when known, which of its components."""

    plugin: str
    component: ComponentInfo | None


def _owner(owners: Mapping[str, str], module: str) -> str | None:
    """The plugin owning ``module`` or the closest package above it."""
    while module:
        if module in owners:
            return owners[module]
        module = module.rpartition(".")[0]
    return None


def create_host(
    *,
    autoload: bool | None = None,
    block: Iterable[str] = (),
    plugins: Mapping[str, object] | None = None,
    warn: Callable[[str], None] | None = None,
) -> PluginHost:
    """Build a plugin host.

    :param autoload: load third-party entry points; default: unless ``GRAPHFLOW_DISABLE_PLUGIN_AUTOLOAD``.
    :param block: plugin names not to register, added to ``GRAPHFLOW_BLOCK_PLUGINS``.
    :param plugins: extra in-process plugins ``{name: module_or_object}`` (tests, notebooks).
    :param warn: called with one line per installed plugin that failed to load and was
        skipped; default: print ``graphflow: warning: ...`` on stderr (in a data-parallel
        worker, rank 0 only).
    """
    pm = pluggy.PluginManager(NAME)
    pm.add_hookspecs(hookspecs)
    blocked = set(block) | {b.strip() for b in os.environ.get(BLOCK_ENV, "").split(",") if b.strip()}
    for name in blocked:
        pm.set_blocked(name)
    if autoload is None:
        autoload = os.environ.get(AUTOLOAD_ENV, "").strip().lower() in ("", "0", "false", "no")
    host = PluginHost(pm=pm, registry=Registry())
    installed: set[str] = set()  # entry-point plugins: skipped, not raised, on failure

    def own(ep: metadata.EntryPoint) -> bool:
        return ep.dist is not None and ep.dist.name == FIRST_PARTY

    for ep in sorted(metadata.entry_points(group=NAME), key=own, reverse=True):  # own first
        dist = ep.dist.name if ep.dist else None
        first_party = dist == FIRST_PARTY
        if (not first_party and not autoload) or pm.is_blocked(ep.name):
            continue
        info = PluginInfo(ep.name, dist, ep.dist.version if ep.dist else None, None, first_party)
        try:
            module = ep.load()
        except Exception as exc:
            _skip(host, info, f"to import ({ep.value})", exc, registered=False)
            continue
        try:
            _register(host, module, info)
        except PluginError as exc:
            _skip(host, info, "in registration", exc.__cause__ or exc, registered=False)
            continue
        installed.add(ep.name)
    for name, obj in (plugins or {}).items():
        if not pm.is_blocked(name):
            _register(host, obj, PluginInfo(name, None, None, None, False))
    _check_pending(host, installed)
    if not any(p.first_party for p in host.plugins.values()) and not blocked:
        if any(b.first_party for b in host.broken.values()):
            raise EnvironmentProblem("graphflow's own plugins failed to load: " + "; ".join(
                b.problem() for b in host.broken.values() if b.first_party))
        raise EnvironmentProblem(
            "graphflow's own plugins are not registered: install the package with "
            "'pip install -e .' (entry points come from the installed metadata)"
        )
    _fill_catalogue(host, installed)
    for broken in host.broken.values():
        (warn or _warn_stderr)(broken.warning())
    return host


WARNED_ENV = "GRAPHFLOW_PLUGIN_WARNINGS_SHOWN"
"""Set by ``graphflow run --nproc`` for its workers: the launcher has already printed the
broken-plugin warnings, so the workers do not repeat them."""


def _warn_stderr(line: str) -> None:
    # torch's launcher sets RANK in each worker; one line per problem, from one process
    if os.environ.get("RANK", "0") == "0" and not os.environ.get(WARNED_ENV):
        print(f"graphflow: warning: {line}", file=sys.stderr)


def _register(host: PluginHost, obj: object, info: PluginInfo) -> None:
    source = getattr(obj, "__file__", None) or getattr(type(obj), "__module__", None)
    info = PluginInfo(info.name, info.dist, info.version, source, info.first_party)
    try:
        host.pm.register(obj, name=info.name)
    except (ValueError, pluggy.PluginValidationError) as exc:
        if host.pm.get_plugin(info.name) is obj:  # pluggy keeps what it added before failing
            host.pm.unregister(name=info.name)
        raise host.plugin_error(info.name, "registration", exc) from exc
    host.plugins[info.name] = info


def _skip(host: PluginHost, info: PluginInfo, failed: str, exc: BaseException, *,
          registered: bool = True) -> None:
    """Drop an installed plugin that failed to load, with anything it registered, and record
    it. ``registered=False``: it never got registered (its name may be another plugin's)."""
    if registered:
        host.pm.unregister(name=info.name)
        host.plugins.pop(info.name, None)
        host.registry.drop(info.name)
    error = str(exc) if isinstance(exc, PluginError) else one_line(exc)
    host.registry.mark_broken(BrokenPlugin(info.name, info.dist, info.version, failed, error,
                                           info.first_party))


def _check_pending(host: PluginHost, installed: set[str]) -> None:
    """``pm.check_pending()``; an installed plugin with an unknown hook is skipped, and the
    check runs again."""
    while True:
        try:
            host.pm.check_pending()
            return
        except pluggy.PluginValidationError as exc:
            name = host.pm.get_name(exc.plugin)
            if name not in installed:
                raise host.plugin_error(name, "hook validation", exc) from exc
            _skip(host, host.plugins[name], "in hook validation", exc)


def _fill_catalogue(host: PluginHost, installed: set[str]) -> None:
    """Call each catalogue hook of each plugin, graphflow's own first: when a third-party
    component takes a name already used, the third-party plugin is the one reported."""
    def own_first(impl: pluggy.HookImpl) -> bool:
        info = host.plugins.get(impl.plugin_name)
        return not (info is not None and info.first_party)

    for kind, hook in CATALOGUE_HOOKS.items():
        for impl in sorted(getattr(host.pm.hook, hook).get_hookimpls(), key=own_first):
            if impl.plugin_name not in host.plugins:  # skipped by an earlier catalogue hook
                continue
            register = Register(host.registry, kind, impl.plugin_name)
            try:
                impl.function(register=register)
            except Exception as exc:
                if impl.plugin_name not in installed:
                    if isinstance(exc, PluginError):
                        raise
                    raise host.plugin_error(impl.plugin_name, f"hook {hook}", exc) from exc
                _skip(host, host.plugins[impl.plugin_name], f"in hook {hook}", exc)


def _blame(exc: BaseException, caller: pluggy.HookCaller) -> str | None:
    """The plugin whose hook implementation raised ``exc``, found from the traceback."""
    codes = {impl.function.__code__: impl.plugin_name for impl in caller.get_hookimpls()}
    tb = exc.__traceback__
    culprit = None
    while tb is not None:
        culprit = codes.get(tb.tb_frame.f_code, culprit)
        tb = tb.tb_next
    return culprit
