"""The one place graphflow imports DGL.

DGL 2.1.0 (the last Linux build on PyPI) ships GraphBolt only as C++ libraries built for
torch <= 2.2.1, and ``import dgl`` imports ``dgl.graphbolt`` eagerly, so on any newer torch the
import dies with "Cannot find DGL C++ graphbolt library". DGL's core (graphs, kernels,
samplers, nn modules, datasets) does not need GraphBolt. When the running torch has no
GraphBolt build we put a stub module in ``sys.modules["dgl.graphbolt"]`` before importing DGL.

The stub's ``__getattr__`` raises ``AttributeError`` (not ``ImportError``): ``inspect`` and
``hasattr`` probe modules for attributes and only tolerate ``AttributeError``.

Every other graphflow file does ``from graphflow.compat.dgl import dgl``.
"""

from __future__ import annotations

import os
import sys
import types
from importlib import metadata
from pathlib import Path

from graphflow.errors import EnvironmentProblem

_STUB_NAME = "dgl.graphbolt"
_FIX = (
    'install the tested versions with: pip install "dgl==2.1.0" "torchdata<0.10" '
    "packaging pandas -c constraints.txt"
)


class FusedCSCSamplingGraph:
    """Never instantiated: DistDGL's servers ask ``isinstance(g,
    dgl.graphbolt.FusedCSCSamplingGraph)`` of every partition they load, and no graph is one
    without GraphBolt."""


class _GraphBoltStub(types.ModuleType):
    """Stands in for ``dgl.graphbolt`` when DGL has no GraphBolt build for this torch."""

    __graphflow_stub__ = True
    FusedCSCSamplingGraph = FusedCSCSamplingGraph

    def __getattr__(self, name: str):
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(name)
        raise AttributeError(
            f"dgl.graphbolt.{name} is unavailable: this DGL has no GraphBolt build for "
            f"torch {_torch_version()} (graphflow stubs it; DGL's core is unaffected)"
        )


def _torch_version() -> str:
    import torch

    return torch.__version__.split("+")[0]


def graphbolt_library_present(torch_version: str, dgl_dir: Path) -> bool:
    """True when DGL ships a GraphBolt C++ library for ``torch_version`` (e.g. "2.13.0")."""
    lib_dir = dgl_dir / "graphbolt"
    if not lib_dir.is_dir():
        return False
    return any(lib_dir.glob(f"libgraphbolt_pytorch_{torch_version}.*"))


def _dgl_dir() -> Path | None:
    try:
        dist = metadata.distribution("dgl")
    except metadata.PackageNotFoundError:
        return None
    return Path(str(dist.locate_file("dgl")))


def install_graphbolt_stub() -> bool:
    """Put the stub in place unless a real GraphBolt module is loaded. Returns True if stubbed."""
    existing = sys.modules.get(_STUB_NAME)
    if existing is not None:
        return bool(getattr(existing, "__graphflow_stub__", False))
    sys.modules[_STUB_NAME] = _GraphBoltStub(_STUB_NAME, __doc__)
    return True


def import_dgl() -> types.ModuleType:
    """Import DGL on any torch >= 2.0, or raise one actionable ``EnvironmentProblem``."""
    if "dgl" in sys.modules and "dgl.base" in sys.modules:
        return sys.modules["dgl"]
    # DGL writes ~/.dgl/config.json and prints a notice unless the backend is given.
    os.environ.setdefault("DGLBACKEND", "pytorch")
    dgl_dir = _dgl_dir()
    if dgl_dir is None:
        raise EnvironmentProblem(f"DGL is not installed; {_FIX}")
    if not graphbolt_library_present(_torch_version(), dgl_dir):
        install_graphbolt_stub()
    try:
        import dgl as _dgl
    except Exception as exc:  # DGL raises FileNotFoundError, OSError, ImportError...
        sys.modules.pop("dgl", None)
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise EnvironmentProblem(
            f"DGL {_dist_version('dgl')} failed to import with torch {_torch_version()} "
            f"({first}); {_FIX}"
        ) from exc
    return _dgl


def graphbolt_is_stubbed() -> bool:
    """Whether the running process uses the stub instead of DGL's GraphBolt."""
    return bool(getattr(sys.modules.get(_STUB_NAME), "__graphflow_stub__", False))


def _dist_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "(not installed)"


dgl = import_dgl()

__all__ = ["dgl", "import_dgl", "install_graphbolt_stub", "graphbolt_is_stubbed"]
