"""``graphflow new-plugin NAME``: write a pip-installable plugin package that passes its tests.

The package gets one working component per kind asked for, each with a docstring, options and
a summary, its tests (on graphflow's pytest fixtures, :mod:`graphflow.testing`), a README and
an example pipeline. The files are the templates in ``templates/`` (the same layout, ``PKG``
standing for the package name; ``${pkg}`` / ``${dist}`` substituted with
:class:`string.Template`); ``plugin.py`` and ``pipeline.toml`` depend on the kinds chosen and
are composed here.

Layout written (NAME = ``demo``, every kind)::

    demo/
      pyproject.toml          entry point: demo = "demo.plugin" in the group "graphflow"
      README.md  conftest.py  pipeline.toml  data/karate.adj  data/karate_labels.tsv
      src/demo/__init__.py  plugin.py  loader.py  transform.py  model.py  task.py
               exporter.py  hooks.py
      tests/test_plugin.py  test_pipeline.py  test_<kind>.py ...
"""

from __future__ import annotations

import keyword
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from string import Template

from graphflow.errors import ConfigError, did_you_mean
from graphflow.io.atomic import folder_mode

TEMPLATES = Path(__file__).resolve().parent / "templates"
KINDS = ("loader", "transform", "model", "task", "exporter", "hooks")
DEFAULT_KINDS = ("loader", "model", "exporter", "hooks")
NAME_PATTERN = re.compile(r"[a-z][a-z0-9]*(_[a-z0-9]+)*")
RESERVED = {"graphflow", "graphflow_plugins", "plugins", "tests", "test", "src", "data"}


@dataclass(frozen=True)
class Part:
    """What one kind adds: its module, its component (class, ``name``), the catalogue hook
    that registers it, its tests and data files."""

    module: str
    cls: str | None
    component: str | None  # the TOML type, without the "<pkg>_" prefix
    hook: str | None
    tests: tuple[str, ...]
    data: tuple[str, ...] = ()


PARTS: dict[str, Part] = {
    "loader": Part("loader", "AdjlistLoader", "adjlist", "graphflow_register_loaders",
                   ("test_loader.py",), ("karate.adj", "karate_labels.tsv")),
    "transform": Part("transform", "DegreeFeature", "degree", "graphflow_register_transforms",
                      ("test_transform.py",)),
    "model": Part("model", "APPNPModel", "appnp", "graphflow_register_models",
                  ("test_model.py",)),
    "task": Part("task", "Smooth", "smooth", "graphflow_register_tasks", ("test_task.py",)),
    "exporter": Part("exporter", "TextExporter", "text", "graphflow_register_exporters",
                     ("test_exporter.py",)),
    "hooks": Part("hooks", None, None, None, ("test_hooks.py",)),
}


def parse_kinds(text: str) -> tuple[str, ...]:
    """``"loader,model"`` -> the kinds in canonical order; unknown ones suggest a match."""
    asked = [k.strip() for k in text.split(",") if k.strip()]
    if not asked:
        raise ConfigError(f"--kinds is empty; choose from {', '.join(KINDS)}")
    for kind in asked:
        if kind not in KINDS:
            raise ConfigError(f"--kinds: unknown kind {kind!r}{did_you_mean(kind, KINDS)}; "
                              f"kinds: {', '.join(KINDS)}")
    return tuple(k for k in KINDS if k in asked)


def check_name(name: str) -> str:
    """The Python package name for ``name``; a ``ConfigError`` saying why it is not one."""
    if not NAME_PATTERN.fullmatch(name):
        raise ConfigError(f"{name!r} is not a valid package name: use lowercase letters, digits "
                          f"and single underscores, starting with a letter (e.g. "
                          f"{_suggest(name)!r})")
    if keyword.iskeyword(name) or name in RESERVED or name in sys.stdlib_module_names:
        raise ConfigError(f"{name!r} is a Python keyword or would shadow the module of that "
                          f"name; choose another (e.g. 'graphflow_{name}')")
    return name


def _suggest(name: str) -> str:
    cleaned = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
    cleaned = re.sub(r"^[0-9_]+", "", cleaned)
    return cleaned or "my_plugin"


def new_plugin(name: str, kinds: Sequence[str] = DEFAULT_KINDS, folder: Path = Path(".")) -> Path:
    """Write the package ``folder/name`` and return its path.

    :raises ConfigError: an invalid name or kind, or a folder that already exists (nothing is
        overwritten: the package is written to a temporary folder and renamed into place).
    """
    pkg = check_name(name)
    kinds = parse_kinds(",".join(kinds))
    target = Path(folder) / pkg
    if target.exists():
        raise ConfigError(f"{target} already exists; remove it or choose another --dir / NAME")
    if not Path(folder).is_dir():
        raise ConfigError(f"--dir {folder}: no such folder")
    values = {"pkg": pkg, "dist": f"graphflow-{pkg.replace('_', '-')}"}
    comps = [(k, f"{pkg}_{PARTS[k].component}") for k in kinds if PARTS[k].component]
    files: dict[str, str] = {
        "pyproject.toml": _render("pyproject.toml.tmpl", values,
                                  kinds_text=", ".join(kinds)),
        "README.md": _render("README.md.tmpl", values, components_md=_components_md(comps, kinds),
                             first=comps[0][1] if comps else "gcn",
                             files_md=_files_md(pkg, kinds)),
        "conftest.py": _render("conftest.py.tmpl", values),
        "pipeline.toml": pipeline_toml(pkg, kinds),
        f"src/{pkg}/__init__.py": _render("src/PKG/__init__.py.tmpl", values),
        f"src/{pkg}/plugin.py": plugin_py(pkg, kinds),
        "tests/test_plugin.py": _render("tests/test_plugin.py.tmpl", values,
                                        components=repr(set(comps))),
        "tests/test_pipeline.py": _render("tests/test_pipeline.py.tmpl", values),
    }
    for kind in kinds:
        part = PARTS[kind]
        files[f"src/{pkg}/{part.module}.py"] = _render(f"src/PKG/{part.module}.py.tmpl", values)
        for test in part.tests:
            files[f"tests/{test}"] = _render(f"tests/{test}.tmpl", values)
        for data in part.data:
            files[f"data/{data}"] = (TEMPLATES / "data" / data).read_text(encoding="utf-8")
    staging = Path(tempfile.mkdtemp(prefix=f".{pkg}-", dir=folder))
    try:
        for rel, text in files.items():
            path = staging / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        os.chmod(staging, folder_mode())  # mkdtemp makes it private; the umask's mode
        staging.rename(target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target


def _render(template: str, values: dict[str, str], **extra: str) -> str:
    text = (TEMPLATES / template).read_text(encoding="utf-8")
    return Template(text).substitute({**values, **extra})


def _components_md(comps: list[tuple[str, str]], kinds: Sequence[str]) -> str:
    lines = [f"- {kind} `{name}`" for kind, name in comps]
    if "hooks" in kinds:
        lines.append("- lifecycle hooks `graphflow_stage_end` and `graphflow_pipeline_end`")
    return "\n".join(lines)


def _files_md(pkg: str, kinds: Sequence[str]) -> str:
    return "\n".join(f"| `src/{pkg}/{PARTS[k].module}.py` | the {k}"
                     f"{'' if PARTS[k].component else ' implementations'} |" for k in kinds)


def plugin_py(pkg: str, kinds: Sequence[str]) -> str:
    """The plugin module the entry point names: one catalogue hook per component kind, and
    the lifecycle hooks imported from ``hooks.py`` (pluggy finds them on this module)."""
    lines = [f'"""Plugin "{pkg}": the hook implementations graphflow calls.',
             "",
             "graphflow imports this module through the entry point in pyproject.toml and",
             "calls each catalogue hook once, with a ``register`` bound to this plugin.",
             '"""', "", "from graphflow.api import hookimpl"]
    for kind in kinds:
        part = PARTS[kind]
        if part.cls:
            lines.append(f"from {pkg}.{part.module} import {part.cls}")
    if "hooks" in kinds:
        lines.append(f"from {pkg}.hooks import graphflow_pipeline_end, graphflow_stage_end  "
                     f"# noqa: F401 (lifecycle hooks)")
    for kind in kinds:
        part = PARTS[kind]
        if part.hook:
            lines += ["", "", "@hookimpl", f"def {part.hook}(register):",
                      f"    register({part.cls})"]
    return "\n".join(lines) + "\n"


def pipeline_toml(pkg: str, kinds: Sequence[str]) -> str:
    """An example pipeline that uses every component chosen (graphflow's own for the rest)."""
    out = [f"# The example pipeline of the {pkg} plugin: graphflow run pipeline.toml",
           "[pipeline]", f'name = "{pkg}_example"', "seed = 0", ""]
    if "loader" in kinds:
        out += ["[load]", f'type = "{pkg}_adjlist"', 'path = "data/karate.adj"',
                'labels = "data/karate_labels.tsv"', "",
                "[[transform]]  # the karate club has no train/val/test masks",
                'type = "split"', "train = 0.5", "val = 0.25", "test = 0.25", ""]
    else:
        out += ["[load]", 'type = "synthetic"', "nodes = 300", "classes = 3", "features = 16", ""]
    if "transform" in kinds:
        out += ["[[transform]]", f'type = "{pkg}_degree"', ""]
    out += ["[model]", f'type = "{pkg}_appnp"' if "model" in kinds else 'type = "gcn"', ""]
    out += ["[[train]]", 'type = "node_classification"', "epochs = 50", ""]
    if "task" in kinds:
        out += ["[[train]]", f'type = "{pkg}_smooth"', "steps = 2", ""]
    if "exporter" in kinds:
        what = "embeddings" if "task" in kinds else "logits"
        out += ["[[export]]", f'type = "{pkg}_text"', f'what = "{what}"', ""]
    out += ["[[export]]", 'type = "parquet"', 'what = "predictions"']
    return "\n".join(out) + "\n"
