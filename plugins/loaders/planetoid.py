"""The ``planetoid`` loader: Cora, CiteSeer and PubMed through DGL's ``CitationGraphDataset``.

DGL looks for the raw files in ``RAW_DIR/<name><suffix>/ind.<name>.*``, where ``<name>`` is
``cora_v2`` for Cora and the suffix is ``_`` plus the first 8 hex digits of the SHA-1 of the
download URL (``DGLDataset._get_hash_url_suffix``). Users should not need to know that: they
point ``root`` at a folder holding the files as Planetoid distributes them (``ind.cora.x``...),
and we build DGL's layout out of symlinks in a cache folder. ``root`` is never written to.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import os
import pickle
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar

import scipy.sparse as sp
import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData, NodeIds
from graphflow.io.node_split import MASKS
from graphflow.options import option

T = TypeVar("T")

PARTS = ("x", "y", "tx", "ty", "allx", "ally", "graph", "test.index")
"""The raw Planetoid files of a dataset are ``ind.<name>.<part>`` for these parts."""

DGL_NAMES = {"cora": "cora_v2", "citeseer": "citeseer", "pubmed": "pubmed"}
"""The name DGL gives each dataset's folder and files."""


def cache_home() -> Path:
    """``$XDG_CACHE_HOME/graphflow``, by default ``~/.cache/graphflow``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "graphflow"


def raw_files(name: str) -> list[str]:
    """The file names Planetoid uses for ``name``: ``ind.cora.x``, ..."""
    return [f"ind.{name}.{part}" for part in PARTS]


def dgl_folder_name(name: str) -> str:
    """The folder DGL expects under its raw dir, e.g. ``cora_v2_<8 hex digits>``."""
    dgl_name = DGL_NAMES[name]
    url = dgl.data.utils._get_dgl_url(dgl.data.CitationGraphDataset._urls[dgl_name])
    return dgl_name + "_" + hashlib.sha1(str(url).encode("utf-8")).hexdigest()[:8]


def link_layout(name: str, root: Path, cache: Path) -> Path:
    """Symlink ``root``'s raw files into DGL's layout under ``cache``; return DGL's raw dir.

    The raw dir is keyed by the resolved ``root`` and the files' sizes and mtimes, so a
    changed file or another root never reuses DGL's processed cache of the old one.
    """
    root = root.resolve()
    key = hashlib.sha1(str(root).encode("utf-8"))
    for fname in raw_files(name):
        st = (root / fname).stat()
        key.update(f"{fname}:{st.st_size}:{st.st_mtime_ns}".encode())
    raw_dir = cache / "planetoid" / key.hexdigest()[:16]
    folder = raw_dir / dgl_folder_name(name)
    folder.mkdir(parents=True, exist_ok=True)
    dgl_name = DGL_NAMES[name]
    for part, fname in zip(PARTS, raw_files(name)):
        link = folder / f"ind.{dgl_name}.{part}"
        if not link.is_symlink():
            with contextlib.suppress(FileExistsError):  # a concurrent run made it
                link.symlink_to(root / fname)
    return raw_dir


def check_raw_files(name: str, root: Path) -> None:
    """Unpickle the raw files as DGL will and check the structure of their sparse matrices.

    scipy's compiled code trusts a CSR matrix's indices: a damaged ``ind.cora.x`` made DGL's
    processing crash the whole process (a segmentation fault, found by fuzzing). Here such a
    file fails with its name instead.

    :raises DataError: naming the first damaged file.
    """
    for part in PARTS[:-1]:  # test.index is text, which DGL parses in Python
        path = root / f"ind.{name}.{part}"
        try:
            with open(path, "rb") as fh:
                obj = pickle.load(fh, encoding="latin1")  # the files are Python 2 pickles
            if sp.issparse(obj):
                obj.check_format(full_check=True)
        except Exception as exc:
            raise DataError(f"{path} is damaged ({first_line(exc)}); replace it with the "
                            f"original Planetoid file") from None


@dataclass
class PlanetoidOptions:
    name: Literal["cora", "citeseer", "pubmed"] = option("cora", "Which citation graph.")
    root: Path | None = option(
        None, "Folder holding the raw Planetoid files (ind.<name>.x, ...); read, never written.")
    download: bool = option(
        True, "Without files in root, let DGL download them into the cache folder.")
    remove_self_loops: bool = option(
        True, "Drop the self-loops DGL's graph has (CiteSeer: 124), giving the usual counts.")
    cache_dir: Path | None = option(
        None, "Where DGL's folder layout and processed cache go; default "
              "$XDG_CACHE_HOME/graphflow (~/.cache/graphflow).")


class PlanetoidLoader(Loader):
    """Cora, CiteSeer or PubMed with DGL's features, labels and standard split.

    Loads through DGL's ``CitationGraphDataset`` (row-normalised bag-of-words features,
    edges in both directions, the 20-per-class / 500 / 1000 split). Statistics:
    Cora 2708 nodes, 10556 edges, 1433 features, 7 classes; CiteSeer 3327, 9104, 3703, 6;
    PubMed 19717 nodes, 500 features, 3 classes. DGL's own CiteSeer graph also has 124
    self-loops (9228 edges); ``remove_self_loops = false`` keeps such loops.

    With ``root`` holding the raw files it works offline; otherwise DGL downloads them.
    """

    name = "planetoid"
    summary = "Cora / CiteSeer / PubMed via DGL, offline from raw Planetoid files"
    Options = PlanetoidOptions

    def _missing(self) -> list[str]:
        root = self.options.root
        if root is None:
            return raw_files(self.options.name)
        return [f for f in raw_files(self.options.name) if not (root / f).is_file()]

    def _where_to_put(self, missing: list[str]) -> str:
        name, root = self.options.name, self.options.root
        files = ", ".join(raw_files(name))
        if root is None:
            return (f"no root folder given; put {files} in a folder and set "
                    f'root = "/that/folder" in [load]')
        have = "does not exist" if not root.is_dir() else f"lacks {', '.join(missing)}"
        return f"root {root} {have}; put {files} in {root} (or set root to the folder with them)"

    def check(self) -> None:
        missing = self._missing()
        if missing and not self.options.download:
            raise DataError(f"{self.options.name}: {self._where_to_put(missing)}")

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        cache = o.cache_dir or cache_home()
        missing = self._missing()
        if not missing:
            check_raw_files(o.name, o.root)
            raw_dir = link_layout(o.name, o.root, cache)
        elif o.download:
            raw_dir = cache / "planetoid" / "download"
            ctx.info(f"planetoid {o.name}: raw files not found locally; asking DGL to "
                     f"download them into {raw_dir}")
        else:
            raise DataError(f"{o.name}: {self._where_to_put(missing)}; download = false")
        try:
            dataset = _quietly(lambda: dgl.data.CitationGraphDataset(
                o.name, raw_dir=str(raw_dir), verbose=False))
        except Exception as exc:
            if missing:
                raise DataError(
                    f"{o.name}: download failed ({type(exc).__name__}: {str(exc)[:200]}); "
                    f"{self._where_to_put(missing)}") from None
            raise DataError(f"{o.name}: DGL could not read the raw files in {o.root} "
                            f"({first_line(exc)})") from None
        g = dataset[0]
        if o.remove_self_loops:
            g = dgl.remove_self_loop(g)
        for mask in MASKS:
            g.ndata[mask] = g.ndata[mask].to(torch.bool)
        g.ndata["label"] = g.ndata["label"].to(torch.int64)
        g.ndata["feat"] = g.ndata["feat"].to(torch.float32)
        return GraphData(graph=g, ids=NodeIds.identity(g.num_nodes()), name=o.name,
                         meta={"num_classes": int(dataset.num_classes)})


def _quietly(build: Callable[[], T]) -> T:
    """Run ``build()`` with DGL's prints and warnings silenced."""
    with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return build()
