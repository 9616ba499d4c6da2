"""docs/formats.md documents every loader, transform and exporter of the first-party plugins,
with each of their options."""

import dataclasses
from pathlib import Path

import pytest

from graphflow.manager import create_host

DOC = (Path(__file__).resolve().parents[3] / "docs" / "formats.md").read_text()
PLUGINS = {"loader": "loaders", "transform": "transforms", "exporter": "exporters"}


def components():
    registry = create_host().registry
    return [info for kind, plugin in PLUGINS.items() for info in registry.by_kind(kind)
            if info.plugin == plugin]


@pytest.mark.parametrize("info", components(), ids=lambda i: f"{i.kind}:{i.name}")
def test_component_and_options_are_documented(info):
    assert f"`{info.name}`" in DOC
    for field in dataclasses.fields(info.cls.Options):
        assert f"`{field.name}" in DOC, \
            f"{info.kind} {info.name}: option {field.name} is not in docs/formats.md"
