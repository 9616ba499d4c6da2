"""Graphs in DGL's binary format (``dgl.save_graphs``), with graphflow's ids and metadata.

DGL files hold tensors only, so the original node ids and ``GraphData.meta`` ride along as
graph labels (``save_graphs(..., labels=...)``), which DGL stores next to the graph:

======================  ============================================================
``graphflow_ids``        int64 (N,): integer node ids
``graphflow_id_offsets`` int64 (N+1,) and ``graphflow_id_bytes`` uint8: string node ids,
``graphflow_id_bytes``   as Arrow lays them out (UTF-8 bytes and offsets)
``graphflow_meta``       uint8: UTF-8 JSON of the name and metadata
======================  ============================================================

A file without them (any graph saved by DGL itself) loads with ids ``0..N-1``.

DGL's C++ reader trusts the sizes it reads: a cut or corrupted file makes it abort the
process, crash it or allocate without bound. So :func:`load_graph` reads nothing with DGL
before two checks, each of which turns damage into one line naming the file:

1. :func:`check_container` parses the container in Python against the file's length
   (DGL's ``src/graph/serialize/heterograph_serialize.cc``, format version 2)::

       4096-byte header: uint64 magic 0xDD2E4FF046B4A13F, version 2, graph type 2, num_graphs
       uint64 gdata_start_pos
       labels: uint64 count, then per label  uint64 len, name bytes, NDArray
       num_graphs graph records (heterograph, relation graphs, node/edge data: NDArrays)
       uint64 count (= num_graphs), uint64 graph_indices[count]   (start of each record)
       uint64 size of the graph_indices vector in bytes

   An NDArray is ``uint64 magic 0xDD5E40F096B4A13F, uint64 reserved, int32 device type,
   int32 device id, int32 ndim, uint8 code, uint8 bits, uint16 lanes, int64 shape[ndim],
   int64 data_byte_size, data``; every one found in the file must have consistent sizes
   that end inside the part of the file it belongs to.
2. :func:`probe` loads the file with DGL in a forked child with bounded time and memory,
   and checks the edges' endpoints and the data lengths; a crash, a timeout or an error
   there becomes a :class:`DataError`, and the process itself only loads a file that the
   child loaded cleanly (a good file is read twice; the overhead is in docs/reliability.md).
"""

from __future__ import annotations

import faulthandler
import json
import mmap
import os
import resource
import select
import signal
import struct
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import DataError, first_line
from graphflow.graph import GraphData, NodeIds
from graphflow.io.atomic import atomic_path
from graphflow.io.node_split import MASKS

IDS_INT = "graphflow_ids"
IDS_OFFSETS = "graphflow_id_offsets"
IDS_BYTES = "graphflow_id_bytes"
META = "graphflow_meta"

DGL_MAGIC = 0xDD2E4FF046B4A13F
NDARRAY_MAGIC = 0xDD5E40F096B4A13F
HETERO_GRAPH = 2
HEADER_BYTES = 4096
PROBE_SECONDS = 10.0
"""Time the probe may take, plus a second per 100 MB of file."""


def id_tensors(ids: NodeIds) -> dict[str, torch.Tensor]:
    """The labels that store ``ids`` (none for identity ids)."""
    if ids.is_identity:
        return {}
    values = ids.to_arrow()
    if pa.types.is_integer(values.type):
        return {IDS_INT: torch.from_numpy(values.to_numpy(zero_copy_only=False).astype(np.int64))}
    values = values.cast(pa.large_string())  # int64 offsets
    n = len(values)
    first = values.offset
    offsets = np.frombuffer(values.buffers()[1], dtype=np.int64)[first:first + n + 1]
    start, end = int(offsets[0]), int(offsets[-1])
    data = np.frombuffer(values.buffers()[2], dtype=np.uint8)[start:end] if end > start else \
        np.zeros(0, dtype=np.uint8)
    return {IDS_OFFSETS: torch.from_numpy(offsets - start),
            IDS_BYTES: torch.from_numpy(data.copy())}


def ids_from_tensors(labels: dict[str, torch.Tensor], n: int) -> NodeIds:
    """Inverse of :func:`id_tensors`."""
    if IDS_INT in labels:
        return NodeIds(n, pa.array(labels[IDS_INT].numpy()))
    if IDS_OFFSETS in labels:
        if IDS_BYTES not in labels:
            raise ValueError(f"string node ids without their bytes ({IDS_BYTES})")
        offsets = labels[IDS_OFFSETS].numpy().astype(np.int64)
        data = labels[IDS_BYTES].numpy().astype(np.uint8)
        big = pa.Array.from_buffers(pa.large_string(), n, [None, pa.py_buffer(offsets),
                                                           pa.py_buffer(data)])
        big.validate(full=True)  # offsets inside the bytes: Arrow's kernels trust them
        return NodeIds(n, big.cast(pa.string()))
    return NodeIds.identity(n)


def save_graph(path: Path, data: GraphData, extra: dict[str, torch.Tensor] | None = None) -> Path:
    """Write ``data`` (plus ``extra`` node data) atomically to ``path``."""
    g = data.graph
    if extra:
        g = g.clone()
        g.ndata.update(extra)
    labels = id_tensors(data.ids)
    for ntype, ids in (data.typed_ids or {}).items():  # a typed graph: ids per node type
        labels.update({f"{k}{TYPE_SEPARATOR}{ntype}": v for k, v in id_tensors(ids).items()})
    meta = json.dumps({"name": data.name, "meta": data.meta}, default=str).encode()
    labels[META] = torch.frombuffer(bytearray(meta), dtype=torch.uint8)
    with atomic_path(path) as tmp:
        dgl.save_graphs(str(tmp), [g], labels)
    return path


def check_container(path: Path) -> None:
    """Check the layout of the DGL file at ``path`` against its length (see the module
    docstring) without DGL; raise :class:`DataError` naming the file and the damage."""
    size = path.stat().st_size
    if size < 32:
        raise DataError(f"{path} is not a graph file written by dgl.save_graphs "
                        f"({size} bytes, shorter than DGL's header)")
    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as buf:
        _check_layout(path, buf, size)


def _check_layout(path: Path, buf: mmap.mmap, size: int) -> None:
    magic, version, kind, num_graphs = struct.unpack_from("<4Q", buf, 0)
    if magic != DGL_MAGIC:
        raise DataError(f"{path} is not a graph file written by dgl.save_graphs "
                        f"(no DGL magic number at its start)")
    if version != 2:
        return  # DGL's older format (version 1): left to the probe
    if kind != HETERO_GRAPH:
        raise DataError(f"{path}: damaged DGL file (graph type {kind} in its header, "
                        f"expected {HETERO_GRAPH}); export the graph again")

    def damaged(what: str) -> DataError:
        return DataError(f"{path}: damaged or cut DGL file ({what}; the file has {size} "
                         f"bytes); export the graph again")

    if size < HEADER_BYTES + 8 + 8 + 8 * 2:
        raise damaged("shorter than DGL's header and index")
    (gdata_start,) = struct.unpack_from("<Q", buf, HEADER_BYTES)
    (index_bytes,) = struct.unpack_from("<Q", buf, size - 8)
    if not HEADER_BYTES + 16 <= gdata_start <= size - 8 - index_bytes or \
            index_bytes != 8 * (num_graphs + 1):
        raise damaged(f"{num_graphs} graph(s), graph data at byte {gdata_start}, "
                      f"a {index_bytes}-byte graph index at its end")
    end = size - 8 - index_bytes
    count, *starts = struct.unpack_from(f"<{num_graphs + 1}Q", buf, end)
    if count != num_graphs or (starts and starts[0] != gdata_start) or \
            any(not a < b for a, b in zip(starts, starts[1:] + [end])):
        raise damaged(f"graph index {[count, *starts][:6]} does not match the header")
    _check_labels(buf, HEADER_BYTES + 8, gdata_start, damaged)
    _check_arrays(buf, gdata_start, end, damaged)


def _check_labels(buf: mmap.mmap, start: int, end: int, damaged: Any) -> None:
    """The labels: ``uint64 count``, then ``uint64 len, name, NDArray`` per label."""
    try:
        (count,) = struct.unpack_from("<Q", buf, start)
        at = start + 8
        for _ in range(count):
            (n,) = struct.unpack_from("<Q", buf, at)
            if at + 8 + n > end:
                raise damaged(f"a label name of {n} bytes runs past the labels")
            at = _array_end(buf, at + 8 + n, end, damaged)
    except struct.error:
        raise damaged("the labels end early") from None
    if at != end:
        raise damaged(f"{end - at} bytes after the labels")


def _array_end(buf: mmap.mmap, at: int, limit: int, damaged: Any) -> int:
    """Check the NDArray at ``buf[at:]`` (ending by ``limit``); return where it ends."""
    if at + 40 > limit:
        raise struct.error("past the limit")
    magic, _, _, ndim, code, bits, lanes = struct.unpack_from("<QQQiBBH", buf, at)
    if magic != NDARRAY_MAGIC:
        raise damaged(f"no array at byte {at}")
    if not 0 <= ndim <= 8 or code > 2 or bits not in (1, 8, 16, 32, 64) or lanes != 1:
        raise damaged(f"an array header (ndim {ndim}, type {code}/{bits}/{lanes}) at byte "
                      f"{at} is not one DGL writes")
    if at + 40 + 8 * ndim > limit:
        raise struct.error("past the limit")
    shape = struct.unpack_from(f"<{ndim}q", buf, at + 32)
    (nbytes,) = struct.unpack_from("<q", buf, at + 32 + 8 * ndim)
    data = at + 40 + 8 * ndim
    expect = max(bits // 8, 1)
    for dim in shape:
        expect = expect * dim if dim >= 0 else -1
    if expect != nbytes or data + nbytes > limit:
        raise damaged(f"an array of shape {list(shape)} claims {nbytes} bytes at byte {at}")
    return data + nbytes


def _check_arrays(buf: mmap.mmap, start: int, end: int, damaged: Any) -> None:
    """Every NDArray header found in the graph records must be consistent and end before
    ``end`` (the records' own counts are left to the probe)."""
    needle = struct.pack("<Q", NDARRAY_MAGIC)
    at = buf.find(needle, start, end)
    while at >= 0:
        try:
            at = _array_end(buf, at, end, damaged)
        except struct.error:
            raise damaged("an array header runs past the graph records") from None
        at = buf.find(needle, at, end)


def probe(path: Path, timeout: float | None = None) -> None:
    """Load ``path`` with DGL in a forked child under a time and memory bound, and check
    what it read; raise :class:`DataError` if DGL fails, crashes or hangs on it.

    Without ``os.fork`` (not POSIX) this does nothing."""
    if not hasattr(os, "fork"):
        return
    size = path.stat().st_size
    timeout = timeout if timeout is not None else PROBE_SECONDS + size / 100e6
    read, write = os.pipe()
    with warnings.catch_warnings():  # Python >= 3.12 warns of fork() beside threads: the
        warnings.simplefilter("ignore", DeprecationWarning)  # child only reads the file
        pid = os.fork()
    if pid == 0:  # the child: never returns
        _probe_child(path, size, read, write)
    os.close(write)
    message = b""
    try:
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([read], [], [], left)[0]:
                raise DataError(f"{path}: DGL's reader did not finish within {timeout:.0f}s "
                                f"(a damaged or cut file); export the graph again")
            chunk = os.read(read, 4096)
            if not chunk:
                break
            message += chunk
        _, status = os.waitpid(pid, 0)
        pid = 0
    finally:
        os.close(read)
        if pid:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        raise DataError(f"{path}: DGL's reader crashed on this file ({name}): it is damaged "
                        f"or cut; export the graph again")
    if message:
        raise DataError(message.decode("utf-8", errors="replace"))
    if os.WEXITSTATUS(status) != 0:  # DGL ended the child itself (exit() in native code)
        raise DataError(f"{path}: DGL's reader exited with status {os.WEXITSTATUS(status)} "
                        f"on this file: it is damaged or cut; export the graph again")


def _probe_child(path: Path, size: int, read: int, write: int) -> None:
    code = 0
    try:
        os.close(read)
        for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(sig, signal.SIG_DFL)
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, 1)
        os.dup2(null, 2)  # DGL's own abort messages
        faulthandler.disable()  # its dump on SIGABRT may go to a saved copy of stderr
        torch.set_num_threads(1)
        try:  # bound memory: what is mapped + 4x the file (Linux; elsewhere no bound)
            with open("/proc/self/statm") as fh:
                mapped = int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
            limit = mapped + 4 * size + (1 << 30)
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        except (OSError, ValueError):
            pass
        message = _read_and_check(path)
    except BaseException as exc:  # noqa: BLE001: everything goes back as one line
        message = f"{path}: DGL could not read this file ({first_line(exc)})"
    try:
        os.write(write, message.encode()[:4000])
    except BaseException:  # noqa: BLE001
        code = 3
    os._exit(code)


def _read_and_check(path: Path) -> str:
    """What the child does: ``""`` if DGL reads ``path`` into sound graphs, else why not."""
    try:
        graphs, _ = dgl.load_graphs(str(path))
    except dgl.DGLError as exc:
        first = str(exc).splitlines()[0].split(": ")[-1].strip() if str(exc) else ""
        return (f"{path}: damaged DGL file, DGL could not read it" +
                (f" ({first})" if first else "") + "; export the graph again")
    for i, g in enumerate(graphs):
        for etype in g.canonical_etypes:
            src, dst = g.edges(etype=etype)
            for ends, ntype in ((src, etype[0]), (dst, etype[2])):
                n = g.num_nodes(ntype)
                if ends.numel() and (int(ends.min()) < 0 or int(ends.max()) >= n):
                    return (f"{path}: damaged DGL file: graph {i} has edges whose ends lie "
                            f"outside its {n} nodes; export the graph again")
        for ntype in g.ntypes:
            for key, value in g.nodes[ntype].data.items():
                if value.shape[:1] != (g.num_nodes(ntype),):
                    return f"{path}: damaged DGL file: node data {key!r} has the wrong length"
        for etype in g.canonical_etypes:
            for key, value in g.edges[etype].data.items():
                if value.shape[:1] != (g.num_edges(etype),):
                    return f"{path}: damaged DGL file: edge data {key!r} has the wrong length"
    return ""


def load_graph(path: Path, index: int = 0) -> GraphData:
    """Read graph ``index`` of a DGL file, with graphflow's ids and metadata when present.

    The file is checked first (:func:`check_container`, :func:`probe`): DGL's reader
    crashes the process on damaged files."""
    if not path.is_file():
        raise DataError(f"DGL graph file not found: {path}")
    check_container(path)
    probe(path)
    try:
        graphs, labels = dgl.load_graphs(str(path))
    except dgl.DGLError as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise DataError(f"{path} is not a graph file written by dgl.save_graphs "
                        f"({first.split(': ')[-1]})") from None
    if not 0 <= index < len(graphs):
        raise DataError(f"{path} holds {len(graphs)} graph(s); index = {index} is out of range")
    g = graphs[index]
    typed = not g.is_homogeneous
    info: dict[str, Any] = {}
    typed_ids = None
    try:
        if META in labels and len(graphs) == 1:
            info = json.loads(bytes(labels[META].numpy().tobytes()).decode())
        ids = ids_from_tensors(labels, g.num_nodes()) if len(graphs) == 1 and not typed else \
            NodeIds.identity(g.num_nodes())
        if typed:
            typed_ids = {t: ids_from_tensors(_of_type(labels, t), g.num_nodes(t))
                         if len(graphs) == 1 else NodeIds.identity(g.num_nodes(t))
                         for t in g.ntypes}
    except (ValueError, TypeError, pa.ArrowException) as exc:  # bad JSON, ids not matching
        raise DataError(f"{path}: the node ids or metadata graphflow stored with the graph are "
                        f"damaged ({first_line(exc)}); export the graph again") from None
    if not isinstance(info, dict):
        raise DataError(f"{path}: the metadata graphflow stored with the graph are damaged "
                        f"(not a JSON object); export the graph again")
    for ntype in g.ntypes:  # over node types (one for a homogeneous graph)
        frame = g.nodes[ntype].data
        for mask in MASKS:
            if mask in frame:
                frame[mask] = frame[mask].to(torch.bool)
    return GraphData(graph=g, ids=ids, name=info.get("name", path.stem),
                     meta=info.get("meta", {}), typed_ids=typed_ids)


TYPE_SEPARATOR = "/"
"""Labels of a typed graph's ids: ``graphflow_ids/<node type>`` and so on."""


def _of_type(labels: dict[str, torch.Tensor], ntype: str) -> dict[str, torch.Tensor]:
    """The id labels of node type ``ntype``, under their untyped names."""
    suffix = f"{TYPE_SEPARATOR}{ntype}"
    return {k[:-len(suffix)]: v for k, v in labels.items() if k.endswith(suffix)}
