"""Typed option schemas for components, and their validation from TOML values.

A component declares its options as a dataclass whose fields use :func:`option`::

    @dataclass
    class Options:
        epochs: int = option(200, "Number of training epochs.")
        lr: float = option(0.01, "Learning rate.")
        hidden: int | list[int] = option(16, "Hidden width, or one width per hidden layer.")

:func:`parse_options` turns the TOML table of one section into an instance, naming
``section.key`` and the expected type on any mismatch and suggesting the nearest valid key for
an unknown one. ``Path`` fields resolve relative to the pipeline file's folder.
"""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from collections.abc import Mapping
from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from graphflow.errors import ConfigError, did_you_mean


def option(default: Any = MISSING, doc: str = "", *, default_factory: Any = MISSING) -> Any:
    """A documented dataclass field. Leave ``default`` out for a required option."""
    meta = {"doc": doc}
    if default_factory is not MISSING:
        return field(default_factory=default_factory, metadata=meta)
    if isinstance(default, (list, dict, set)):
        value = default
        return field(default_factory=lambda: type(value)(value), metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class OptionInfo:
    """One option as ``graphflow describe`` shows it."""

    name: str
    type: str
    default: Any
    required: bool
    doc: str


@dataclass
class NoOptions:
    """Schema of a component that takes no options."""


def describe_options(schema: type) -> list[OptionInfo]:
    """The options of a schema, in declaration order."""
    hints = typing.get_type_hints(schema)
    infos = []
    for f in dataclasses.fields(schema):
        required = f.default is MISSING and f.default_factory is MISSING
        if f.default is not MISSING:
            default = f.default
        elif f.default_factory is not MISSING:
            default = f.default_factory()
        else:
            default = None
        infos.append(
            OptionInfo(
                name=f.name,
                type=type_name(hints[f.name]),
                default=default,
                required=required,
                doc=f.metadata.get("doc", ""),
            )
        )
    return infos


def parse_options(
    schema: type,
    values: Mapping[str, Any],
    *,
    section: str,
    component: str,
    source: str,
    base_dir: Path,
) -> Any:
    """Validate ``values`` (one TOML table, without ``type``) into an instance of ``schema``.

    :param section: dotted section name used in messages, e.g. ``train`` or ``transform.0``.
    :param component: the component's ``type`` name, used in messages.
    :param source: the pipeline file name, used in messages.
    :param base_dir: folder that relative ``Path`` options resolve against.
    """
    hints = typing.get_type_hints(schema)
    fields = {f.name: f for f in dataclasses.fields(schema)}
    kwargs: dict[str, Any] = {}
    for key, value in values.items():
        if key not in fields:
            replacement = getattr(schema, "removed_options", {}).get(key)
            if replacement:
                raise ConfigError(f"{source}: {section}.{key}: no longer an option of "
                                  f"{component!r}; {replacement}")
            valid = ", ".join(fields) or "(none)"
            raise ConfigError(
                f"{source}: {section}.{key}: unknown option for {component!r}"
                f"{did_you_mean(key, fields)}; valid options: {valid}"
            )
        nested = _nested_schema(hints[key])
        if nested is not None:
            kwargs[key] = _parse_nested(nested, value, section=f"{section}.{key}",
                                        component=component, source=source, base_dir=base_dir)
            continue
        kwargs[key] = coerce(value, hints[key], where=f"{source}: {section}.{key}", base_dir=base_dir)
    for name, f in fields.items():
        if name not in kwargs and f.default is MISSING and f.default_factory is MISSING:
            raise ConfigError(
                f"{source}: {section}.{name}: required option of {component!r} is missing "
                f"({type_name(hints[name])}: {f.metadata.get('doc', '')})"
            )
    try:
        return schema(**kwargs)
    except ValueError as exc:  # a schema's __post_init__ rejecting a value: the user's to fix,
        # and the message says it all (no cause, so the CLI adds no "--debug" hint)
        raise ConfigError(f"{source}: [{section}] {component}: {exc}") from None
    except TypeError as exc:  # may be a bug in the schema: keep the cause for --debug
        raise ConfigError(f"{source}: [{section}] {component}: {exc}") from exc


def _nested_schema(annotation: Any) -> tuple[type, bool] | None:
    """``(schema, is_list)`` for an option that is a dataclass or a list of them (a TOML
    table or an array of tables, such as ``[[load.nodes]]``), possibly optional, else None."""
    if typing.get_origin(annotation) in (Union, types.UnionType):
        arms = [a for a in typing.get_args(annotation) if a is not type(None)]
        return _nested_schema(arms[0]) if len(arms) == 1 else None
    is_list = typing.get_origin(annotation) is list
    inner = typing.get_args(annotation)[0] if is_list and typing.get_args(annotation) else \
        annotation
    if isinstance(inner, type) and dataclasses.is_dataclass(inner):
        return inner, is_list
    return None


def _parse_nested(nested: tuple[type, bool], value: Any, *, section: str, component: str,
                  source: str, base_dir: Path) -> Any:
    """A nested table (or array of tables) parsed into its dataclass(es); messages name
    ``section.i.key``."""
    schema, is_list = nested
    if not is_list:
        if not isinstance(value, dict):
            raise ConfigError(f"{source}: {section}: expected a table, got {_toml_repr(value)} "
                              f"({_toml_type(value)})")
        return parse_options(schema, value, section=section, component=component,
                             source=source, base_dir=base_dir)
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise ConfigError(f"{source}: {section}: expected an array of tables "
                          f"([[{section}]]), got {_toml_repr(value)} ({_toml_type(value)})")
    return [parse_options(schema, v, section=f"{section}.{i}", component=component,
                          source=source, base_dir=base_dir) for i, v in enumerate(value)]


def coerce(value: Any, annotation: Any, *, where: str, base_dir: Path | None = None) -> Any:
    """Check and convert one TOML value to ``annotation``, or raise ``ConfigError``."""
    ok, result = _try(value, annotation, base_dir)
    if ok:
        return result
    if isinstance(value, int) and not isinstance(value, bool) and not _fits_int64(value):
        raise ConfigError(f"{where}: {value} is out of range; integers must lie between "
                          f"-2**63 and 2**63 - 1")
    hint = did_you_mean(value, _literal_strings(annotation)) if isinstance(value, str) else ""
    raise ConfigError(
        f"{where}: expected {type_name(annotation)}, got {_toml_repr(value)} "
        f"({_toml_type(value)}){hint}"
    )


def _literal_strings(ann: Any) -> list[str]:
    """The string values a ``Literal`` annotation (or a union holding one) allows."""
    origin = typing.get_origin(ann)
    if origin is Literal:
        return [a for a in typing.get_args(ann) if isinstance(a, str)]
    if origin in (Union, types.UnionType):
        return [s for arm in typing.get_args(ann) for s in _literal_strings(arm)]
    return []


def _fits_int64(value: int) -> bool:
    """TOML integers are 64-bit; Python's are not (torch and numpy fail on larger ones)."""
    return -2**63 <= value < 2**63


def _try(value: Any, ann: Any, base_dir: Path | None) -> tuple[bool, Any]:
    origin = typing.get_origin(ann)
    if ann is Any:
        return True, value
    if origin in (Union, types.UnionType):
        for arm in typing.get_args(ann):
            ok, result = _try(value, arm, base_dir)
            if ok:
                return True, result
        return False, None
    if ann is type(None):
        return value is None, None
    if origin is Literal:
        return value in typing.get_args(ann), value
    if origin in (list, tuple):
        if not isinstance(value, list):
            return False, None
        args = typing.get_args(ann)
        item = args[0] if args else Any
        out = []
        for v in value:
            ok, r = _try(v, item, base_dir)
            if not ok:
                return False, None
            out.append(r)
        return True, (tuple(out) if origin is tuple else out)
    if origin is dict:
        if not isinstance(value, dict):
            return False, None
        key_t, val_t = typing.get_args(ann) or (str, Any)
        out_d = {}
        for k, v in value.items():
            ok, r = _try(v, val_t, base_dir)
            if not ok:
                return False, None
            out_d[k] = r
        return True, out_d
    if ann is bool:
        return isinstance(value, bool), value
    if ann is int:
        return isinstance(value, int) and not isinstance(value, bool) and _fits_int64(value), value
    if ann is float:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False, None
        return True, float(value)
    if ann is str:
        return isinstance(value, str), value
    if ann is Path:
        if not isinstance(value, str):
            return False, None
        path = Path(value).expanduser()
        if base_dir is not None and not path.is_absolute():
            path = base_dir / path
        return True, path
    return False, None


def type_name(ann: Any) -> str:
    """A short human name for a type annotation: ``int | list[int]``, ``"row" | "standard"``."""
    origin = typing.get_origin(ann)
    if origin in (Union, types.UnionType):
        return " | ".join(type_name(a) for a in typing.get_args(ann))
    if origin is Literal:
        return " | ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in typing.get_args(ann))
    if origin in (list, tuple, dict):
        return f"{origin.__name__}[{', '.join(type_name(a) for a in typing.get_args(ann))}]"
    if ann is type(None):
        return "none"
    if ann is Path:
        return "path"
    return getattr(ann, "__name__", str(ann))


def _toml_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "table"
    return type(value).__name__


def _toml_repr(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)  # control characters escaped: one line
    return repr(value)
