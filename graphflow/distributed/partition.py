"""``graphflow partition PIPELINE --parts N [--method metis|random] --out DIR``.

Runs the pipeline's ``[load]`` and ``[[transform]]`` stages, then DGL's
``dgl.distributed.partition_graph`` (METIS or random, training nodes balanced across parts
with ``balance_ntypes``, edges balanced too), and writes next to DGL's files:

* ``DIR/graph.json``: DGL's partition config (the one ``DistGraphServer`` and ``DistGraph``
  read; its ``graph_name`` is the pipeline's name);
* ``DIR/part0 ... partN-1``: DGL's partitions (structure, node data: ``feat``, ``label``,
  masks; edge data);
* ``DIR/node_ids.parquet``: the original node id of every node, in DGL's new (partitioned)
  id order, so that exports can carry the original ids;
* ``DIR/graphflow.json``: graphflow's metadata (:class:`PartitionMeta`): node data names and
  widths, number of classes, split sizes, the method and where the graph came from;
* ``DIR/run.json``: the record of the load and transform stages.
"""

from __future__ import annotations

import dataclasses
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.parquet as pq
import torch

from graphflow.compat.dgl import dgl
from graphflow.config import PipelineConfig
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.io.atomic import atomic_path, write_json
from graphflow.manager import PluginHost
from graphflow.runtime.progress import progress
from graphflow.runner import run_pipeline

Method = Literal["metis", "random"]
PART_CONFIG = "graph.json"
META = "graphflow.json"
NODE_IDS = "node_ids.parquet"
SPLITS = ("train", "val", "test")


@dataclass
class PartitionMeta:
    """What ``graphflow.json`` records about a partitioned graph.

    :ivar graph_name: DGL's graph name (the pipeline's name).
    :ivar parts: number of partitions.
    :ivar method: ``"metis"`` or ``"random"``.
    :ivar num_nodes: N.
    :ivar num_edges: E.
    :ivar node_data: node data name -> width (0 for a vector such as ``label``).
    :ivar num_classes: classes (label columns for multi-label), None without labels.
    :ivar split: nodes per split present (``train``, ``val``, ``test``).
    :ivar part_nodes: nodes owned by each partition.
    :ivar source: the pipeline file it was made from.
    :ivar config_hash: digest of that pipeline's resolved config.
    :ivar classes: class names of string labels (exports show them), None otherwise.
    """

    graph_name: str
    parts: int
    method: str
    num_nodes: int
    num_edges: int
    node_data: dict[str, int]
    num_classes: int | None
    split: dict[str, int]
    part_nodes: list[int] = field(default_factory=list)
    source: str = ""
    config_hash: str = ""
    classes: list[str] | None = None

    @classmethod
    def read(cls, path: Path) -> PartitionMeta:
        """``graphflow.json`` beside the partition config ``path``, checked."""
        meta_path = path.parent / META
        if not path.is_file():
            raise DataError(f"partition config not found: {path}; make it with: graphflow "
                            f"partition PIPELINE.toml --parts N --out {path.parent}")
        dgl_config = read_part_config(path)
        if not meta_path.is_file():
            raise DataError(f"{meta_path} is missing: {path} was not written by graphflow "
                            f"partition; partition the graph again with it")
        try:
            raw = json.loads(meta_path.read_text(encoding="utf-8"))
            meta = cls(**{f.name: raw[f.name] for f in dataclasses.fields(cls)
                          if f.name in raw})
        except (json.JSONDecodeError, UnicodeDecodeError, TypeError, KeyError) as exc:
            raise DataError(f"{meta_path}: not a graphflow partition ({exc})") from None
        if dgl_config.get("num_parts") != meta.parts or \
                dgl_config.get("graph_name") != meta.graph_name:
            raise DataError(f"{path} (graph {dgl_config.get('graph_name')!r}, "
                            f"{dgl_config.get('num_parts')} parts) does not match {meta_path} "
                            f"(graph {meta.graph_name!r}, {meta.parts} parts); partition again")
        return meta

    def require(self, names: list[str], path: Path) -> None:
        """Raise ``DataError`` unless the partition holds node data ``names``."""
        missing = [n for n in names if n not in self.node_data]
        if missing:
            have = ", ".join(sorted(self.node_data)) or "none"
            raise DataError(f"{path}: the pipeline needs node data {', '.join(missing)} but "
                            f"the partition has {have}; partition the graph of a pipeline "
                            f"whose loader provides them")


def read_part_config(path: Path) -> dict[str, Any]:
    """DGL's partition config at ``path``. Any other file (the folder's ``run.json`` or
    ``graphflow.json``, a file that is not JSON) raises ``DataError`` saying which file to
    point at: the ``graph.json`` beside it when there is one."""
    try:
        config = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        why = "not JSON"
    else:
        keys = config if isinstance(config, dict) else {}
        missing = [k for k in ("graph_name", "num_parts") if k not in keys]
        if not missing:
            return config
        why = f"a JSON file without DGL's {' and '.join(missing)}"
    beside = path.parent / PART_CONFIG
    if beside.is_file() and beside.resolve() != path.resolve():
        fix = f"point path at {beside}, the partition config graphflow partition wrote beside it"
    else:
        fix = ("point path at the graph.json in the folder that graphflow partition wrote "
               "(graphflow partition PIPELINE.toml --parts N --out DIR writes DIR/graph.json)")
    raise DataError(f"{path} is not a partition config ({why}); {fix}")


def check_parts(parts: int, method: str) -> None:
    if parts < 1:
        raise ConfigError(f"--parts {parts}: give the number of partitions (one per machine), "
                          f"at least 1")
    if method not in ("metis", "random"):
        raise ConfigError(f'--method {method!r}: use "metis" or "random"')


def partition(config: PipelineConfig, host: PluginHost, *, parts: int, method: Method,
              out: Path, quiet: bool = False) -> PartitionMeta:
    """Load and transform ``config``'s graph, partition it into ``out``; return the metadata."""
    check_parts(parts, method)
    out = out.resolve()
    if (out / PART_CONFIG).exists() and not (out / META).exists():
        raise DataError(f"{out} holds a partition graphflow did not write; choose another --out")
    steps = ["load and transform", f"{method} partition into {parts}", "write metadata"]
    say = (lambda m: None) if quiet else (lambda m: print(m, flush=True))
    bar = iter(progress(steps, desc="partition", total=len(steps), unit="step") if not quiet
               else steps)
    next(bar)
    start = time.perf_counter()
    # The pipeline's own [load] and [[transform]] stages, recorded in OUT/run.json.
    graph_only = dataclasses.replace(
        config, sample=None, model=None, train=(), exports=(),
        settings=dataclasses.replace(config.settings, out_dir=out))
    data = run_pipeline(graph_only, host, quiet=quiet).ctx.graph()
    if parts > data.num_nodes:
        raise ConfigError(f"--parts {parts}: the graph has only {data.num_nodes} nodes")
    say(f"graphflow: loaded {data.summary()} in {time.perf_counter() - start:.1f}s")
    next(bar)
    start = time.perf_counter()
    g = data.graph
    train = g.ndata.get("train_mask")
    name = config.settings.name
    new_to_old, _ = dgl.distributed.partition_graph(
        g, name, parts, str(out), part_method=method, return_mapping=True,
        balance_ntypes=train.long() if train is not None else None, balance_edges=True)
    (out / f"{name}.json").replace(out / PART_CONFIG)
    say(f"graphflow: {method} partition into {parts} parts in "
        f"{time.perf_counter() - start:.1f}s")
    next(bar)
    meta = _write_meta(data, config, name, parts, method, out, new_to_old)
    for _ in bar:
        pass
    return meta


def _write_meta(data: GraphData, config: PipelineConfig, name: str, parts: int, method: str,
                out: Path, new_to_old: torch.Tensor) -> PartitionMeta:
    g = data.graph
    ids = data.ids.take(new_to_old)  # original id of each new (partitioned) node id
    with atomic_path(out / NODE_IDS) as tmp:
        pq.write_table(pa.table({"id": ids.to_arrow()}), tmp)
    dgl_config = json.loads((out / PART_CONFIG).read_text(encoding="utf-8"))
    ranges = dgl_config["node_map"]["_N"]  # [[start, end), ...] per part in new ids
    node_data = {k: (int(v.shape[1]) if v.dim() == 2 else 0) for k, v in g.ndata.items()}
    split = {s: int(g.ndata[f"{s}_mask"].sum()) for s in SPLITS if f"{s}_mask" in g.ndata}
    meta = PartitionMeta(graph_name=name, parts=parts, method=method,
                         num_nodes=data.num_nodes, num_edges=data.num_edges,
                         node_data=node_data, num_classes=data.num_classes, split=split,
                         part_nodes=[int(e - s) for s, e in ranges],
                         source=str(config.source), config_hash=config.digest(),
                         classes=list(data.meta["classes"]) if "classes" in data.meta
                         else None)
    write_json(out / META, dataclasses.asdict(meta))
    return meta


def describe(meta: PartitionMeta, out: Path) -> str:
    """The summary ``graphflow partition`` prints."""
    sizes = ", ".join(f"{n:,}" for n in meta.part_nodes)
    return (f'graphflow: partitioned "{meta.graph_name}" ({meta.num_nodes:,} nodes, '
            f"{meta.num_edges:,} edges) into {meta.parts} parts by {meta.method}: {sizes} "
            f"nodes\n  wrote: {out / PART_CONFIG} (DGL partition config), {out / META}, "
            f"{out / NODE_IDS}\n  train on it with [load] type = \"partitioned\", path = "
            f"\"{out / PART_CONFIG}\"")
