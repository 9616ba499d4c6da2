"""``graphflow plugins`` and ``graphflow describe``: what is installed and how to configure it."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from graphflow.errors import ConfigError, did_you_mean
from graphflow.options import describe_options

if TYPE_CHECKING:  # torch and the plugins load when a command runs, not for --help
    from graphflow.manager import PluginHost
    from graphflow.registry import ComponentInfo


def add_commands(sub: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("plugins", parents=[common], help="list plugins and their components")
    p.add_argument("--json", action="store_true", help="machine-readable output")
    p.set_defaults(func=cmd_plugins)
    d = sub.add_parser("describe", parents=[common], help="show a component's options")
    d.add_argument("type", help='component type, e.g. "gcn"; "KIND:TYPE" when names clash')
    d.set_defaults(func=cmd_describe)


def plugins_table(host: PluginHost) -> dict[str, Any]:
    """The data behind ``graphflow plugins --json``."""
    from graphflow.components import KINDS

    plugins = []
    for info in host.plugins.values():
        components: dict[str, list[str]] = {}
        for comp in host.registry.of_plugin(info.name):
            components.setdefault(comp.kind, []).append(comp.name)
        plugins.append({"name": info.name, "dist": info.dist, "version": info.version,
                        "source": info.source, "first_party": info.first_party,
                        "components": components})
    components = {kind: [{"name": c.name, "plugin": c.plugin, "summary": c.summary}
                         for c in host.registry.by_kind(kind)] for kind in KINDS}
    return {"plugins": plugins, "components": components}


def cmd_plugins(args: argparse.Namespace) -> int:
    from graphflow.manager import create_host

    table = plugins_table(create_host())
    if args.json:
        print(json.dumps(table, indent=2))
        return 0
    for p in table["plugins"]:
        origin = f"{p['dist']} {p['version']}" if p["dist"] else "in-process"
        print(f"{p['name']}  ({origin})  {p['source']}")
        for kind, names in p["components"].items():
            print(f"    {kind}: {', '.join(names)}")
    print()
    for kind, comps in table["components"].items():
        print(f"{kind}s:")
        width = max((len(c["name"]) for c in comps), default=0)
        for c in comps:
            print(f"  {c['name']:<{width}}  {c['summary']}")
    return 0


def describe(info: ComponentInfo) -> str:
    """The text ``graphflow describe`` prints for one component."""
    lines = [f'{info.kind} "{info.name}" (plugin "{info.plugin}")', "", info.doc, "", "options:"]
    options = describe_options(info.cls.Options)
    by_mode = _by_mode(info)
    if not options:
        lines.append("  (none)")
    for opt in options:
        default = "required" if opt.required else f"default {json.dumps(opt.default, default=str)}"
        if opt.name in by_mode and opt.default is None:
            full, sampled = (json.dumps(v, default=str) for v in by_mode[opt.name])
            default = f"default by mode: {full} full batch, {sampled} sampled"
        lines.append(f"  {opt.name}: {opt.type}  ({default})")
        if opt.doc:
            lines.append(f"      {opt.doc}")
    return "\n".join(lines)


def _by_mode(info: ComponentInfo) -> dict[str, tuple[object, object]]:
    """A task's defaults by mode (``Task.mode_defaults``): name -> (full batch, sampled)."""
    if info.kind != "task":
        return {}
    try:
        task = info.cls(info.cls.Options())
        full, sampled = task.mode_defaults(sampled=False), task.mode_defaults(sampled=True)
    except Exception:  # a task whose options have required fields: its docs say it
        return {}
    return {k: (full.get(k), sampled.get(k)) for k in {**full, **sampled}}


def cmd_describe(args: argparse.Namespace) -> int:
    from graphflow.components import KINDS
    from graphflow.manager import create_host

    registry = create_host().registry
    kind, _, name = args.type.rpartition(":")
    if kind and kind not in KINDS:
        raise ConfigError(f"unknown kind {kind!r}{did_you_mean(kind, KINDS)}; kinds: {', '.join(KINDS)}")
    found = [registry.get(kind, name)] if kind else registry.find(name)
    if not found:
        every = sorted({c.name for c in registry.all()})
        raise ConfigError(f'no component "{name}"{did_you_mean(name, every)}; '
                          f"see graphflow plugins")
    print("\n\n".join(describe(info) for info in found))
    return 0
