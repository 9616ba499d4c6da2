"""pyproject.toml agrees with the tree: packages, entry points, the plugins/ mapping."""

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())


def package_dirs() -> set[str]:
    found = set()
    for top, name in (("graphflow", "graphflow"), ("plugins", "graphflow_plugins")):
        for init in (ROOT / top).rglob("__init__.py"):
            rel = init.parent.relative_to(ROOT / top).parts
            found.add(".".join((name, *rel)))
    return found


def test_every_package_folder_is_listed():
    assert set(PYPROJECT["tool"]["setuptools"]["packages"]) == package_dirs()


def test_plugins_folder_is_imported_under_a_namespaced_name():
    assert PYPROJECT["tool"]["setuptools"]["package-dir"]["graphflow_plugins"] == "plugins"
    pattern = re.compile(r"^\s*(from|import)\s+plugins\b", re.M)
    sources = [*ROOT.glob("graphflow/**/*.py"), *ROOT.glob("plugins/**/*.py"),
               *ROOT.glob("tests/**/*.py"), *ROOT.glob("benchmarks/*.py")]
    assert [str(p) for p in sources if pattern.search(p.read_text())] == []


def test_each_first_party_plugin_is_an_entry_point():
    eps = PYPROJECT["project"]["entry-points"]["graphflow"]
    plugin_dirs = {p.parent.name for p in (ROOT / "plugins").glob("*/__init__.py")}
    assert set(eps) == plugin_dirs
    assert all(value == f"graphflow_plugins.{name}" for name, value in eps.items())


def test_torch_is_constrained_to_the_tested_cpu_build():
    deps = PYPROJECT["project"]["dependencies"]
    torch_spec = next(d for d in deps if d.startswith("torch"))
    assert "<2.14" in torch_spec
    assert "dgl==2.1.0" in deps and "torchdata<0.10" in deps
    assert (ROOT / "constraints.txt").read_text().strip() == "torch==2.13.0"

