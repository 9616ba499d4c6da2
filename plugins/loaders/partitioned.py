"""``[load] type = "partitioned"``: a graph written by ``graphflow partition``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq
import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.distributed import distdgl
from graphflow.distributed.partition import NODE_IDS, SPLITS, PartitionMeta
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds
from graphflow.options import option
from graphflow_plugins.samplers.dist_neighbor import DIST_GRAPH

NTYPE = "_N"  # DGL's name of the node type of a homogeneous graph


@dataclass
class PartitionedOptions:
    path: Path = option(Path("graph.json"), "The partition config that graphflow partition "
                        "wrote (DIR/graph.json).")
    node_data: list[str] = option(["feat"], "Node data the pipeline needs; checked against "
                                  "the partition before anything is read.")


class PartitionedLoader(Loader):
    """Reads every partition of a ``graphflow partition`` folder back into one graph.

    Nodes take DGL's partitioned ids (each part's nodes contiguous), edges their partitioned
    ids; node data (``feat``, ``label``, masks) and edge data come from the parts, the
    original node ids from ``node_ids.parquet``, so exports carry them. Use it to train or
    check a partitioned graph in one process; ``graphflow launch`` reads the same folder
    through DistDGL's servers instead.
    """

    name = "partitioned"
    summary = "A graph partitioned by graphflow partition (DGL partition config)"
    Options = PartitionedOptions

    def check(self) -> None:
        PartitionMeta.read(self.options.path).require(self.options.node_data,
                                                      self.options.path)

    def load(self, ctx: RunContext) -> GraphData:
        path = self.options.path
        meta = PartitionMeta.read(path)
        meta.require(self.options.node_data, path)
        if distdgl.is_trainer():
            return self._remote(path, meta)
        src, dst, eids, nfeats, efeats = [], [], [], {}, {}
        for part in ctx.progress(range(meta.parts), desc="partitions", total=meta.parts,
                                 unit="part"):
            g, node_feats, edge_feats, *_ = dgl.distributed.load_partition(str(path), part)
            inner = g.edata["inner_edge"].bool()  # the edges this part owns
            s, d = g.find_edges(torch.nonzero(inner).squeeze(1))
            src.append(g.ndata[dgl.NID][s])
            dst.append(g.ndata[dgl.NID][d])
            eids.append(g.edata[dgl.EID][inner])
            for key, value in node_feats.items():  # "_N/feat": rows of the part's own nodes
                nfeats.setdefault(key.split("/", 1)[1], []).append(value)
            for key, value in edge_feats.items():  # "_N:_E:_N/weight": rows of owned edges
                efeats.setdefault(key.rsplit("/", 1)[1], []).append(value)
        order = torch.argsort(torch.cat(eids))  # edges in partitioned id order
        graph = dgl.graph((torch.cat(src)[order], torch.cat(dst)[order]),
                          num_nodes=meta.num_nodes)
        if graph.num_edges() != meta.num_edges:
            raise DataError(f"{path}: the parts hold {graph.num_edges()} edges, "
                            f"graphflow.json says {meta.num_edges}; partition again")
        for key, parts in nfeats.items():
            value = torch.cat(parts)
            graph.ndata[key] = value.bool() if key.endswith("_mask") else value
        for key, parts in efeats.items():
            graph.edata[key] = torch.cat(parts)[order]
        ids = pq.read_table(path.parent / NODE_IDS).column("id")
        out = GraphData(graph=graph, ids=NodeIds(meta.num_nodes, ids), name=meta.graph_name)
        return with_classes(out, meta)

    def _remote(self, path: Path, meta: PartitionMeta) -> GraphData:
        """Under ``graphflow launch``: the graph stays on the DistDGL servers.

        The trainer holds an edgeless graph of the N nodes with their labels and split
        masks (read from the servers: about 11 bytes per node), the original ids, and the
        ``DistGraph`` in ``meta["dist_graph"]``, through which the ``dist_neighbor`` sampler
        reads structure and features.
        """
        g = distdgl.dist_graph(meta.graph_name, str(path))
        graph = dgl.graph(([], []), num_nodes=meta.num_nodes)
        every = torch.arange(meta.num_nodes)
        for key in ("label", *(f"{s}_mask" for s in SPLITS)):
            if key in g.ndata:
                value = g.ndata[key][every]
                graph.ndata[key] = value.bool() if key.endswith("_mask") else value
        ids = pq.read_table(path.parent / NODE_IDS).column("id")
        out = GraphData(graph=graph, ids=NodeIds(meta.num_nodes, ids), name=meta.graph_name)
        out.meta[DIST_GRAPH] = g
        return with_classes(out, meta)


def with_classes(data: GraphData, meta: PartitionMeta) -> GraphData:
    """``data`` with the number of classes and their names (string labels) of ``meta``."""
    if meta.num_classes is not None:
        data.meta["num_classes"] = meta.num_classes
    if meta.classes is not None:
        data.meta["classes"] = list(meta.classes)
    return data
