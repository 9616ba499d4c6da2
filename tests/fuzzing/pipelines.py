"""Strategies of malformed pipelines: TOML files and ``--set`` values.

A small valid pipeline (a 40-node SBM, a GCN, one epoch, an exporter) is the starting point;
each case applies a few mutations: wrong value types, unknown or misspelt keys, sections and
component types, missing sections, impossible combinations (a task without the model or
sampler it needs, an exporter of an artifact nothing makes), broken TOML syntax and
non-UTF-8 bytes; or gives ``--set`` values built from valid and invalid pieces.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from hypothesis import strategies as st

from fuzzing.case import Case, mangled, section, toml_value

BASE: dict[str, Any] = {
    "pipeline": {"name": "fuzz", "seed": 0, "device": "cpu"},
    "load": {"type": "synthetic", "nodes": 40, "classes": 2, "features": 4},
    "transform": [{"type": "self_loops"}],
    "model": {"type": "gcn", "hidden": 4},
    "train": {"type": "node_classification", "epochs": 1},
    "export": [{"type": "parquet", "what": "predictions"}],
}
SECTIONS = ["pipeline", "load", "transform", "sample", "model", "train", "export"]
NEAR = ["laod", "models", "trian", "exports", "pipline", "transforms", "sampler", "x", ""]
TYPES = {"load": ["synthetic", "edgelist", "synthetc", "parquet", "nope"],
         "transform": ["self_loops", "bidirected", "selfloops", "split", "nope"],
         "sample": ["neighbor", "node2vec", "deepwalk", "neighbour", "nope"],
         "model": ["gcn", "sage", "gat", "gin", "sgc", "gnc", "nope"],
         "train": ["node_classification", "skipgram", "node_clasification", "nope"],
         "export": ["parquet", "csv", "npy", "pt", "dgl", "parquett", "nope"]}
KEYS = ["epochs", "lr", "hidden", "layers", "dropout", "nodes", "classes", "features", "what",
        "path", "seed", "name", "device", "out_dir", "fanouts", "batch_size", "eval_every",
        "patience", "monitor", "weight_decay", "heads", "epoch", "hiden", "lrate", "kind", "dim",
        "walk_length", "window", "checkpoint", "type", "p_in"]
VALUES = st.one_of(
    st.integers(-3, 3), st.sampled_from([2**63, -2**63 - 1, 2**64]),
    st.floats(-2, 2), st.sampled_from([math.nan, math.inf, -math.inf]),
    st.booleans(), st.sampled_from(["", "auto", "cpu", "cuda:7", "gpu", "x", "embeddings",
                                    "predictions", "graph", "val_loss", "../out", "/dev/null"]),
    st.lists(st.integers(-1, 3), max_size=3), st.just({"a": 1}), st.text(max_size=5),
)


def _render(raw: dict[str, Any]) -> str:
    parts = []
    for name, value in raw.items():
        if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            parts += [section(name, v, array=True) for v in value]
        elif isinstance(value, dict):
            parts.append(section(name, value))
        else:
            parts.append(f"{name} = {toml_value(value)}\n")
    return "".join(parts)


def _tables(raw: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    out = []
    for name, value in raw.items():
        if isinstance(value, dict):
            out.append((name, value))
        elif isinstance(value, list):
            out += [(name, v) for v in value if isinstance(v, dict)]
    return out


@st.composite
def _mutate(draw: st.DrawFn, raw: dict[str, Any]) -> list[str]:
    """Apply one mutation to ``raw``; return the sections and keys it touched (an error it
    causes must name one of them)."""
    kind = draw(st.sampled_from(["value", "value", "unknown_key", "unknown_section", "type",
                                 "drop_key", "drop_section", "shape", "combination"]))
    tables = _tables(raw)
    if kind == "value" and tables:
        name, table = draw(st.sampled_from(tables))
        key = draw(st.sampled_from(sorted(table) + KEYS[:8]))
        table[key] = draw(VALUES)
        return [name, key]
    if kind == "unknown_key" and tables:
        name, table = draw(st.sampled_from(tables))
        key = draw(st.sampled_from(KEYS))
        table[key] = draw(VALUES)
        return [name, key]
    if kind == "unknown_section":
        name = draw(st.sampled_from(NEAR))
        raw[name] = {"type": draw(st.sampled_from(TYPES["model"]))}
        return [name, "type"] if name else ["type"]
    if kind == "type":
        name = draw(st.sampled_from(list(TYPES)))
        table = {"type": draw(st.one_of(st.sampled_from(TYPES[name]), VALUES))}
        raw[name] = [table] if name in ("transform", "export") else table
        return [name, "type"]
    if kind == "drop_key" and tables:
        name, table = draw(st.sampled_from(tables))
        if table:
            key = draw(st.sampled_from(sorted(table)))
            table.pop(key)
            return [name, key]
        return [name]
    if kind == "drop_section" and raw:
        name = draw(st.sampled_from(sorted(raw)))
        raw.pop(name)
        return [name]
    if kind == "shape":
        name = draw(st.sampled_from(SECTIONS))
        value = raw.get(name, {"type": "x"})
        raw[name] = [value] if isinstance(value, dict) else \
            (value[0] if isinstance(value, list) and value else draw(VALUES))
        return [name]
    if kind == "combination":
        choice = draw(st.sampled_from(["no_model", "skipgram_no_sampler", "export_embeddings",
                                       "sampler_for_full", "two_trains", "train_sub"]))
        if choice == "no_model":
            raw.pop("model", None)
            return ["model", "train"]
        if choice == "skipgram_no_sampler":
            raw["train"] = {"type": "skipgram", "epochs": 1, "dim": 4}
            return ["train", "sample", "skipgram"]
        if choice == "export_embeddings":
            raw["export"] = [{"type": "npy", "what": "embeddings"}]
            return ["export", "what", "embeddings"]
        if choice == "sampler_for_full":
            raw["sample"] = {"type": "node2vec", "walk_length": 3}
            return ["sample", "node2vec", "train"]
        if choice == "two_trains":
            raw["train"] = [{"type": "node_classification", "epochs": 1},
                            {"type": "skipgram", "epochs": 1}]
            return ["train"]
        raw["train"] = {"type": "node_classification", "epochs": 1,
                        "model": draw(st.sampled_from([{"type": "sage"}, {"type": "nope"},
                                                       {"hidden": 2}, "gcn"]))}
        return ["train", "model"]
    return []


SECTION_NAMES = (*SECTIONS, "type")
"""A configuration error names a section (``[export.0] ...``, ``load.nodes: ...``), often
another than the one a mutation touched (a dropped ``[train]`` leaves ``[export]`` without
its artifact), or the key or value at fault; a TOML syntax error names its line instead,
which the checker accepts. The pipeline file's path, which starts every such message, does
not count (see ``fuzzing.check.names_one``)."""


def _few_epochs(raw: dict[str, Any]) -> None:
    """A train table that lost its ``epochs`` (a dropped key, a new ``type``) gets one epoch
    back: the default (hundreds of epochs) is valid input, and its time would only measure
    the machine's load against the hang bound (found by benchmarks/fuzz.py: a valid 200-epoch
    run past 20 s on a loaded 2-core machine)."""
    trains = raw.get("train")
    for table in trains if isinstance(trains, list) else [trains]:
        if isinstance(table, dict) and "epochs" not in table:
            table["epochs"] = 1


@st.composite
def pipeline_toml(draw: st.DrawFn) -> Case:
    raw = copy.deepcopy(BASE)
    touched: list[str] = []
    for _ in range(draw(st.integers(1, 3))):
        touched += draw(_mutate(raw))
    _few_epochs(raw)
    text = _render(raw).encode()
    if draw(st.integers(0, 4)) == 0:
        text = draw(mangled(text, allow_identity=False))
    return Case("config.toml", {}, text, names=tuple(dict.fromkeys([*SECTION_NAMES, *touched])))


@st.composite
def _assignment(draw: st.DrawFn) -> tuple[str, list[str]]:
    """A ``--set`` value and the names in its key (an error must name one, or the value)."""
    head = draw(st.sampled_from(SECTIONS + NEAR))
    parts = [head]
    if draw(st.integers(0, 3)) == 0:
        parts.append(draw(st.sampled_from(["0", "1", "9", "-1", "x"])))
    if draw(st.integers(0, 5)):
        parts.append(draw(st.sampled_from(KEYS)))
    dotted = ".".join(parts) if draw(st.integers(0, 9)) else draw(st.sampled_from(
        [".", "a..b", "load.", ".type", "", " load . nodes "]))
    value = draw(st.one_of(VALUES.map(toml_value), st.sampled_from(
        ["[1,", "{", "'unterminated", "1e999", "0x", "nan", "tru", "\"a\"\"b\"", " "]),
        st.text(max_size=6)))
    text = dotted + ("" if draw(st.integers(0, 14)) == 0 else "=") + value
    names = [part.strip() for part in dotted.split(".") if part.strip()]
    return text, names + ["--set"]  # "--set 'TEXT': ..." quotes the value, escaped


@st.composite
def set_values(draw: st.DrawFn) -> Case:
    drawn = draw(st.lists(_assignment(), min_size=1, max_size=3))
    names = tuple(dict.fromkeys([*SECTION_NAMES, *(n for _, ns in drawn for n in ns)]))
    return Case("config.set", {}, _render(BASE).encode(),
                overrides=tuple(text for text, _ in drawn), names=names)


PIPELINE_STRATEGIES: dict[str, Callable[[], st.SearchStrategy[Case]]] = {
    "config.toml": pipeline_toml, "config.set": set_values,
}
