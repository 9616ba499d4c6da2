from dataclasses import dataclass
from pathlib import Path

import pytest

from graphflow.components import Exporter, Loader, Transform
from graphflow.errors import PluginError, UnknownComponentError
from graphflow.options import option
from graphflow.registry import Register, Registry


class Good(Loader):
    """A loader."""

    name = "good"
    summary = "good loader"


def test_register_records_the_plugin():
    registry = Registry()
    Register(registry, "loader", "mine")(Good)
    info = registry.get("loader", "good")
    assert info.plugin == "mine" and info.cls is Good
    assert info.summary == "good loader" and info.doc == "A loader."
    assert registry.find("good") == [info]
    assert registry.of_plugin("mine") == [info]


def test_duplicate_names_both_plugins():
    registry = Registry()
    registry.add("loader", Good, "first")
    with pytest.raises(PluginError) as err:
        registry.add("loader", Good, "second")
    msg = str(err.value)
    assert 'plugin "second" registers loader "good"' in msg
    assert 'plugin "first" already registered' in msg
    assert "GRAPHFLOW_BLOCK_PLUGINS" in msg


def test_unknown_name_lists_choices_and_nearest():
    registry = Registry()
    registry.add("loader", Good, "p")
    with pytest.raises(UnknownComponentError,
                       match='unknown loader type "goood" \\(did you mean "good"\\?\\); choices: good'):
        registry.get("loader", "goood")


class NoDoc(Loader):
    name = "nodoc"
    summary = "x"


class NoName(Loader):
    """Doc."""

    summary = "x"


class BadOptions(Loader):
    """Doc."""

    name = "bad"
    summary = "x"
    Options = dict


class ExporterWithoutPath(Exporter):
    """Doc."""

    name = "nopath"
    summary = "x"

    @dataclass
    class Options:
        what: str = option("embeddings", "what")


@pytest.mark.parametrize("kind, cls, problem", [
    ("transform", Good, "must be a subclass of graphflow.components.Transform"),
    ("loader", NoDoc, "needs its own docstring"),
    ("loader", NoName, "needs a non-empty class attribute 'name'"),
    ("loader", BadOptions, "Options must be a dataclass"),
    ("exporter", ExporterWithoutPath, "exporter options need ['path']"),
    ("loader", lambda: None, "must be a subclass"),
])
def test_invalid_components_are_rejected_with_the_plugin_named(kind, cls, problem):
    with pytest.raises(PluginError) as err:
        Registry().add(kind, cls, "acme")
    assert 'plugin "acme" registered an invalid' in str(err.value)
    assert problem in str(err.value)


def test_by_kind_is_sorted():
    class Zed(Transform):
        """Doc."""

        name = "zed"
        summary = "z"

    class Alpha(Transform):
        """Doc."""

        name = "alpha"
        summary = "a"

    registry = Registry()
    registry.add("transform", Zed, "p")
    registry.add("transform", Alpha, "p")
    assert [c.name for c in registry.by_kind("transform")] == ["alpha", "zed"]
    assert registry.names("loader") == []


def test_exporter_contract_accepts_path_and_what():
    class Ok(Exporter):
        """Doc."""

        name = "ok"
        summary = "ok"

        @dataclass
        class Options:
            what: str = option("embeddings", "what")
            path: Path = option(Path("x"), "path")

    assert Registry().add("exporter", Ok, "p").name == "ok"
