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


class EmbeddingsOnly(Exporter):
    """Writes embeddings as word2vec text."""

    name = "w2v"
    summary = "word2vec text"
    writes = ("embeddings",)

    @dataclass
    class Options:
        what: str = option("embeddings", "what to write")
        path: Path | None = option(None, "where")


def test_exporter_writes_must_name_known_artifacts():
    registry = Registry()
    registry.add("exporter", EmbeddingsOnly, "mine")
    assert registry.get("exporter", "w2v").cls.writes == ("embeddings",)

    class Vague(EmbeddingsOnly):
        """Declares an artifact that does not exist."""

        name = "vague"
        writes = ("embeddings", "pictures")

    with pytest.raises(PluginError, match=r"registered an invalid exporter 'Vague': its writes "
                                          r"must be a non-empty tuple of embeddings, "
                                          r"predictions, logits, graph"):
        registry.add("exporter", Vague, "mine")


def test_validate_rejects_what_an_exporter_does_not_write(tmp_path):
    from graphflow.config import load_config
    from graphflow.errors import ConfigError
    from graphflow.manager import create_host

    class Plugin:
        from graphflow.plugin import hookimpl

        @hookimpl
        def graphflow_register_exporters(self, register):
            register(EmbeddingsOnly)

    host = create_host(plugins={"w2v": Plugin()})
    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetic"\n'
                    '[[export]]\ntype = "w2v"\nwhat = "predictions"\n')
    with pytest.raises(ConfigError, match=r'\[export.0\] w2v: what = "predictions" is not written '
                                          r"by this exporter; it writes: embeddings; exporters "
                                          r"that write predictions: csv, dgl, npy, parquet, pt$"):
        load_config(path, host.registry)
    path.write_text(path.read_text().replace('"predictions"', '"embeddings"'))
    assert load_config(path, host.registry).exports[0].options.what == "embeddings"


def test_cli_validate_names_what_the_exporter_writes(tmp_path, cli):
    path = tmp_path / "p.toml"
    path.write_text('[load]\ntype = "synthetic"\n[[export]]\ntype = "npy"\nwhat = "graph"\n')
    code, _, err = cli("validate", path)
    assert code == 1
    assert err.splitlines()[0].endswith('[export.0] npy: what = "graph" is not written by this '
                                        "exporter; it writes: embeddings, predictions, logits; "
                                        "exporters that write graph: csv, dgl, parquet, pt")


EXPORTER_WRITES = {"npy": ("embeddings", "predictions", "logits"),
                   "pt": ("embeddings", "predictions", "logits", "graph", "model"),
                   "dgl": ("embeddings", "predictions", "logits", "graph")}


@pytest.mark.parametrize("exporter", ["npy", "pt", "dgl"])
def test_links_go_only_to_the_table_exporters(tmp_path, cli, exporter):
    path = tmp_path / "p.toml"
    path.write_text(f'[load]\ntype = "synthetic"\n[[export]]\ntype = "{exporter}"\n'
                    f'what = "links"\n')
    code, _, err = cli("validate", path)
    assert code == 1
    assert err.splitlines()[0].endswith(f'[export.0] {exporter}: what = "links" is not written '
                                        f"by this exporter; it writes: "
                                        f"{', '.join(EXPORTER_WRITES[exporter])}; exporters "
                                        f"that write links: csv, parquet")


def test_an_unknown_name_names_each_broken_plugin_and_drop_forgets_a_plugin():
    from graphflow.registry import BrokenPlugin

    registry = Registry()
    registry.add("loader", Good, "half")
    registry.drop("half")
    assert registry.find("good") == []
    registry.mark_broken(BrokenPlugin("half", "half-dist", "2.0",
                                      "in hook graphflow_register_models", "RuntimeError: boom"))
    registry.mark_broken(BrokenPlugin("gone", None, None, "to import (gone)",
                                      "ImportError: no gone"))
    with pytest.raises(UnknownComponentError) as err:
        registry.get("loader", "good")
    assert str(err.value) == (
        'unknown loader type "good"; plugin "half" (from half-dist 2.0) may provide it but failed '
        'in hook graphflow_register_models: RuntimeError: boom; plugin "gone" may provide it but '
        "failed to import (gone): ImportError: no gone; choices: (none registered)")
    assert registry.broken["gone"].fix() == "set GRAPHFLOW_BLOCK_PLUGINS=gone to skip it"
