"""graphflow.api: the public plugin API is complete, importable and documented."""

from __future__ import annotations

from pathlib import Path

import graphflow.api as api

DOCS = Path(__file__).resolve().parents[1] / "docs" / "plugins.md"


def test_every_public_name_resolves():
    missing = [name for name in api.__all__ if not hasattr(api, name)]
    assert missing == []


def test_every_public_name_is_documented_in_plugins_md():
    text = DOCS.read_text()
    undocumented = [name for name in api.__all__ if f"`{name}`" not in text]
    assert undocumented == []


def test_the_scaffold_templates_import_only_the_api():
    templates = Path(api.__file__).parent / "scaffold" / "templates" / "src"
    for path in templates.rglob("*.tmpl"):
        imports = [line for line in path.read_text().splitlines()
                   if line.startswith("from graphflow")
                   and not line.startswith("from graphflow.api")]
        assert imports == [], f"{path.name}: {imports}"
