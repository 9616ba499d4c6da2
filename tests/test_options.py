from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import pytest

from graphflow.errors import ConfigError
from graphflow.options import coerce, describe_options, option, parse_options, type_name


@dataclass(kw_only=True)
class Opts:
    epochs: int = option(200, "Number of epochs.")
    lr: float = option(0.01, "Learning rate.")
    hidden: int | list[int] = option(16, "Hidden width(s).")
    norm: Literal["none", "batch", "layer"] = option("none", "Normalisation.")
    path: Path | None = option(None, "An input file.")
    tags: list[str] = option(["a"], "Tags.")
    name: str = option(doc="Required name.")


def parse(values, base=Path("/base")):
    return parse_options(Opts, values, section="train", component="demo", source="p.toml",
                         base_dir=base)


def test_parse_fills_defaults_and_converts():
    opts = parse({"name": "x", "lr": 1, "hidden": [32, 16], "path": "data/e.tsv"})
    assert opts.epochs == 200
    assert opts.lr == 1.0 and isinstance(opts.lr, float)
    assert opts.hidden == [32, 16]
    assert opts.path == Path("/base/data/e.tsv")
    assert opts.tags == ["a"]


def test_absolute_path_is_kept():
    assert parse({"name": "x", "path": "/abs/e.tsv"}).path == Path("/abs/e.tsv")


def test_list_defaults_are_not_shared():
    a, b = parse({"name": "x"}), parse({"name": "y"})
    a.tags.append("b")
    assert b.tags == ["a"]


def test_unknown_key_names_section_key_and_suggests():
    with pytest.raises(ConfigError) as err:
        parse({"name": "x", "epoch": 5})
    msg = str(err.value)
    assert "p.toml: train.epoch" in msg
    assert 'did you mean "epochs"?' in msg
    assert "valid options: epochs, lr" in msg


def test_wrong_type_names_key_and_expected_type():
    with pytest.raises(ConfigError) as err:
        parse({"name": "x", "epochs": "5"})
    assert str(err.value) == 'p.toml: train.epochs: expected int, got "5" (string)'


def test_bool_is_not_an_int_and_int_list_items_are_checked():
    with pytest.raises(ConfigError, match="expected int"):
        parse({"name": "x", "epochs": True})
    with pytest.raises(ConfigError, match=r"expected int \| list\[int\], got \[1, 'a'\]"):
        parse({"name": "x", "hidden": [1, "a"]})


def test_literal_lists_the_choices():
    with pytest.raises(ConfigError, match='expected "none" \\| "batch" \\| "layer", got "bn"'):
        parse({"name": "x", "norm": "bn"})


def test_literal_suggests_the_near_choice():
    with pytest.raises(ConfigError, match='got "layr" \\(string\\) \\(did you mean "layer"\\?\\)$'):
        parse({"name": "x", "norm": "layr"})
    with pytest.raises(ConfigError, match='got "bn" \\(string\\)$'):  # nothing near: no hint
        parse({"name": "x", "norm": "bn"})


def test_missing_required_option():
    with pytest.raises(ConfigError, match="train.name: required option of 'demo' is missing"):
        parse({})


def test_post_init_errors_are_config_errors():
    @dataclass
    class Checked:
        k: int = option(1, "k")

        def __post_init__(self):
            if self.k < 1:
                raise ValueError("k must be >= 1")

    with pytest.raises(ConfigError, match=r"\[sample\] demo: k must be >= 1") as err:
        parse_options(Checked, {"k": 0}, section="sample", component="demo", source="p.toml",
                      base_dir=Path("."))
    assert err.value.__cause__ is None  # a rejected value, not a bug: no "--debug" hint


def test_coerce_optional_and_dict():
    assert coerce(None, int | None, where="x") is None
    assert coerce({"a": 1}, dict[str, float], where="x") == {"a": 1.0}
    with pytest.raises(ConfigError, match="x: expected dict"):
        coerce({"a": "b"}, dict[str, float], where="x")


def test_describe_options_and_type_names():
    infos = {i.name: i for i in describe_options(Opts)}
    assert infos["hidden"].type == "int | list[int]"
    assert infos["path"].type == "path | none"
    assert infos["name"].required and infos["name"].default is None
    assert infos["tags"].default == ["a"]
    assert infos["epochs"].doc == "Number of epochs."
    assert type_name(list[int]) == "list[int]"


@dataclass
class Table:
    path: Path = option(doc="A table.")
    id: str = option("id", "Its id column.")


@dataclass
class Nested:
    nodes: list[Table] = option(doc="[[load.nodes]]")
    main: Table | None = option(None, "[load.main]")


def test_nested_tables_parse_into_dataclasses_and_name_their_index():
    opts = parse_options(Nested, {"nodes": [{"path": "a.csv"}, {"path": "b.csv", "id": "key"}],
                                  "main": {"path": "m.csv"}},
                         section="load", component="demo", source="p.toml", base_dir=Path("/b"))
    assert opts.nodes == [Table(Path("/b/a.csv")), Table(Path("/b/b.csv"), "key")]
    assert opts.main == Table(Path("/b/m.csv"))
    with pytest.raises(ConfigError, match=r"p.toml: load.nodes.1.path: required option"):
        parse_options(Nested, {"nodes": [{"path": "a.csv"}, {"id": "x"}]}, section="load",
                      component="demo", source="p.toml", base_dir=Path("/b"))
    with pytest.raises(ConfigError, match=r"load.nodes: expected an array of tables"):
        parse_options(Nested, {"nodes": "a.csv"}, section="load", component="demo",
                      source="p.toml", base_dir=Path("/b"))
