"""``[load] type = "tu"``: a collection of graphs in the TU Dortmund text format."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch

from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.graphs.build import (NodeFeatures, Sources, build_collection, features_option,
                                    max_degree_option)
from graphflow.graphs.features import label_codes, one_hot
from graphflow.graphs.textfile import read_numbers
from graphflow.options import option

REQUIRED = ("A", "graph_indicator")
OPTIONAL = ("graph_labels", "graph_attributes", "node_labels", "node_attributes",
            "edge_labels", "edge_attributes")


@dataclass
class TUOptions:
    path: Path = option(doc="The folder holding DS_A.txt, DS_graph_indicator.txt, ...")
    name: str = option("", "The DS prefix of the files (default: the folder's name).")
    features: NodeFeatures = features_option('"attributes" (DS_node_attributes.txt)',
                                             '"labels" (DS_node_labels.txt one-hot)')
    max_degree: int | None = max_degree_option()
    targets: Literal["labels", "attributes"] = option(
        "labels", 'What the tasks predict: "labels" (DS_graph_labels.txt, classes) or '
                  '"attributes" (DS_graph_attributes.txt, regression targets).')


class TULoader(Loader):
    """Graph collections in the TU Dortmund format (TUDataset: MUTAG, PROTEINS, IMDB-B...).

    Files ``DS_*.txt`` in ``path``, one value or one comma-separated row per line, ids 1-based:

    * ``DS_A.txt``: ``row, col`` per edge (both directions of an undirected graph);
    * ``DS_graph_indicator.txt``: the graph of node ``i`` on line ``i``, sorted;
    * ``DS_graph_labels.txt``: the class of graph ``g`` on line ``g``;
    * optional ``DS_node_labels.txt``, ``DS_node_attributes.txt``, ``DS_edge_labels.txt``,
      ``DS_edge_attributes.txt``, ``DS_graph_attributes.txt`` (regression targets).

    The result is one block-diagonal graph with ``data.graphs`` (graph ids ``1..G``, labels
    mapped to ``0..C-1``; the original values are the class names). Node labels stay in
    ``ndata["node_label"]``, edge labels in ``edata["edge_label"]``. The edge features
    (``edata["edge_feat"]``, what ``gine`` reads) are the edge attributes, or without them the
    edge labels one-hot. Any malformed line fails naming the file and the line.
    """

    name = "tu"
    summary = "TU Dortmund graph collection (DS_A.txt, DS_graph_indicator.txt, ...)"
    Options = TUOptions

    def _file(self, part: str) -> Path:
        o = self.options
        return o.path / f"{o.name or o.path.name}_{part}.txt"

    def check(self) -> None:
        if not self.options.path.is_dir():
            raise DataError(f"TU folder not found: {self.options.path}")
        for part in REQUIRED:
            if not self._file(part).is_file():
                raise DataError(f"{self._file(part)} not found (set name = \"DS\" when the "
                                f"files are DS_{part}.txt)")
        need = "graph_labels" if self.options.targets == "labels" else "graph_attributes"
        if not self._file(need).is_file():
            raise DataError(f"{self._file(need)} not found; targets = "
                            f'"{self.options.targets}" reads it')

    def load(self, ctx: RunContext) -> GraphData:
        self.check()
        o = self.options
        files = {p: self._file(p) for p in (*REQUIRED, *OPTIONAL)}
        indicator = read_numbers(files["graph_indicator"], integer=True, columns=1)[:, 0]
        n = len(indicator)
        num_graphs = int(indicator.max()) if n else 0
        edges = read_numbers(files["A"], integer=True, columns=2) - 1  # 0-based
        bad = np.flatnonzero((edges < 0).any(1) | (edges >= n).any(1))
        if bad.size:
            i = int(bad[0])
            raise DataError(f"{files['A']} line {i + 1}: edge {edges[i, 0] + 1}, {edges[i, 1] + 1} "
                            f"names a node outside 1..{n} ({files['graph_indicator'].name} "
                            f"lists {n} nodes)")
        opt = {p: read_numbers(files[p], integer=p.endswith("labels"))
               for p in OPTIONAL if files[p].is_file()}
        for part in ("node_labels", "node_attributes"):
            if part in opt and len(opt[part]) != n:
                raise DataError(f"{files[part]} has {len(opt[part])} lines but "
                                f"{files['graph_indicator'].name} lists {n} nodes; the files "
                                f"disagree on the node count")
        for part in ("edge_labels", "edge_attributes"):
            if part in opt and len(opt[part]) != len(edges):
                raise DataError(f"{files[part]} has {len(opt[part])} lines but "
                                f"{files['A'].name} lists {len(edges)} edges")
        labels = targets = None
        if o.targets == "labels":
            if "graph_labels" not in opt:
                raise DataError(f"{files['graph_labels']} not found")
            labels = opt["graph_labels"][:, 0]
        else:
            if "graph_attributes" not in opt:
                raise DataError(f"{files['graph_attributes']} not found")
            targets = opt["graph_attributes"]
            where = files["graph_attributes"]
            if len(targets) != num_graphs:
                raise DataError(f"{where} has {len(targets)} lines for {num_graphs} graphs")
        edge_features = None  # the attributes, else the labels one-hot
        if "edge_attributes" in opt:
            edge_features = opt["edge_attributes"].astype(np.float32)
        elif "edge_labels" in opt:  # bond types and the like, as node labels are
            codes, k = label_codes(opt["edge_labels"], where=str(files["edge_labels"]))
            edge_features = one_hot(codes, k).numpy()
        data = build_collection(
            name=o.name or o.path.name, num_nodes=n, src=edges[:, 0], dst=edges[:, 1],
            graph_of_node=indicator - 1, num_graphs=num_graphs,
            sources=Sources(edges=str(files["A"]), graph_index=str(files["graph_indicator"]),
                            graph_labels=str(files["graph_labels"] if targets is None
                                             else files["graph_attributes"]), first_id=1),
            graph_labels=labels, graph_targets=targets, node_labels=opt.get("node_labels"),
            node_attributes=opt.get("node_attributes"), edge_features=edge_features,
            features=o.features,
            max_degree=o.max_degree, meta={"source": str(o.path)})
        if "edge_labels" in opt:
            data.graph.edata["edge_label"] = torch.from_numpy(opt["edge_labels"][:, 0].copy())
        return data
