"""The ``synthetic`` loader: seeded SBM (node classification), R-MAT (power-law) graphs, and
the explanation benchmarks BA-Shapes, Tree-Cycles and Tree-Grid with their motif edges."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Loader
from graphflow.context import RunContext
from graphflow.errors import ConfigError
from graphflow.io.motifs import ba_shapes, tree_cycles, tree_grid
from graphflow.io.synthetic import rmat, sbm
from graphflow.graph import GraphData, NodeIds
from graphflow.io.node_split import check_sizes, stratified_split
from graphflow.options import option


MOTIF_KINDS = ("ba_shapes", "tree_cycles", "tree_grid")


@dataclass
class SyntheticOptions:
    kind: Literal["sbm", "powerlaw", "ba_shapes", "tree_cycles", "tree_grid"] = option(
        "sbm", "Generator: stochastic block model, R-MAT, or an explanation benchmark with "
               "motif edges (edata['motif']) as ground truth (docs/explain.md).")
    nodes: int = option(1000, "Number of nodes.")
    classes: int = option(4, "sbm: number of (balanced) classes.")
    features: int = option(16, "Feature width (0 for none). sbm features are class-correlated; "
                               "powerlaw features are N(0, 1) noise.")
    p_in: float = option(0.05, "sbm: probability of an edge between two nodes of one class.")
    p_out: float = option(0.005, "sbm: probability of an edge between nodes of two classes.")
    signal: float = option(1.0, "sbm: distance of class centroids relative to feature noise.")
    edges: int = option(10000, "powerlaw: number of directed edges (duplicates kept).")
    seed: int | None = option(None, "Generator and split seed; default: the pipeline seed.")
    motifs: int = option(80, "ba_shapes / tree_cycles / tree_grid: motifs attached to the base.")
    noise: float = option(0.1, "ba_shapes / tree_cycles / tree_grid: random edges added, as a "
                               "fraction of the edges.")
    train: int | float = option(0.6, "sbm: training nodes, a fraction (float) or a count (int).")
    val: int | float = option(0.2, "sbm: validation nodes, a fraction or a count.")
    test: int | float = option(0.2, "sbm: test nodes, a fraction or a count.")

    def __post_init__(self) -> None:
        if self.kind in MOTIF_KINDS:
            if self.motifs < 1:
                raise ValueError(f"motifs = {self.motifs}: must be >= 1")
            if self.noise < 0:
                raise ValueError(f"noise = {self.noise}: must be >= 0")
            check_sizes(self.train, self.val, self.test)
            return
        if self.nodes < 2:
            raise ValueError(f"nodes = {self.nodes}: need at least 2")
        if self.features < 0:
            raise ValueError(f"features = {self.features}: must be >= 0")
        if self.kind == "sbm":
            if self.classes < 1:
                raise ValueError(f"classes = {self.classes}: must be >= 1")
            for name in ("p_in", "p_out"):
                value = getattr(self, name)
                if not 0.0 <= value <= 1.0:
                    raise ValueError(f"{name} = {value}: a probability must lie in [0, 1]")
            check_sizes(self.train, self.val, self.test)
        elif self.edges < 1:
            raise ValueError(f"edges = {self.edges}: need at least 1")


class SyntheticLoader(Loader):
    """Seeded synthetic graphs, ready for node classification or for scale tests.

    ``kind = "sbm"``: an undirected stochastic block model (both edge directions, no
    self-loops, no duplicates) with ``classes`` balanced classes, features
    ``signal * centroid[class] + N(0, 1)``, labels, and a stratified train/val/test split.

    ``kind = "powerlaw"``: ``edges`` directed R-MAT edges over ``nodes`` nodes (power-law
    degrees; duplicates and self-loops kept, as in Graph500), with noise features when
    ``features > 0`` and no labels. 1M nodes / 20M edges take a few seconds.

    ``kind = "ba_shapes" / "tree_cycles" / "tree_grid"``: GNNExplainer's benchmarks (Ying et
    al. 2019): a Barabási–Albert base of 300 nodes or a binary tree of height 8, ``motifs``
    houses / six-node cycles / 3×3 grids attached, ``noise`` random edges; labels are motif
    roles, features all ones (``features`` wide; the paper's are 10 wide), and
    ``edata["motif"]`` (bool) marks the edges inside a motif, the explanations' ground truth.
    ``nodes`` and the sbm options do not apply (:mod:`graphflow.io.motifs`).

    Node ids are ``0..N-1``. The same seed gives the same graph, features and split.
    """

    name = "synthetic"
    summary = "Seeded SBM (labels, features, split) or R-MAT power-law graph"
    Options = SyntheticOptions

    def load(self, ctx: RunContext) -> GraphData:
        o = self.options
        seed = ctx.seed if o.seed is None else o.seed
        if o.kind in MOTIF_KINDS:
            return self._motif_graph(o, seed)
        if o.kind == "sbm":
            gen = sbm(o.nodes, o.classes, o.features, p_in=o.p_in, p_out=o.p_out, seed=seed,
                      signal=o.signal)
        else:
            gen = rmat(o.nodes, o.edges, seed=seed)
            if o.features > 0:
                noise = torch.Generator().manual_seed(seed + 1)
                gen.feat = torch.randn(o.nodes, o.features, generator=noise)
        g = dgl.graph((gen.src, gen.dst), num_nodes=gen.num_nodes)
        if gen.feat is not None:
            g.ndata["feat"] = gen.feat.to(torch.float32)
        meta: dict[str, object] = {"generator": o.kind, "seed": seed}
        if gen.label is not None:
            g.ndata["label"] = gen.label.to(torch.int64)
            meta["num_classes"] = o.classes
            try:
                masks = stratified_split(gen.label, o.nodes, train=o.train, val=o.val,
                                         test=o.test, seed=seed)
            except ValueError as exc:
                raise ConfigError(f"the train/val/test split: {exc}") from None
            g.ndata.update(masks.as_ndata())
        return GraphData(graph=g, ids=NodeIds.identity(o.nodes), name=o.kind, meta=meta)

    def _motif_graph(self, o: SyntheticOptions, seed: int) -> GraphData:
        make = {"ba_shapes": ba_shapes, "tree_cycles": tree_cycles, "tree_grid": tree_grid}[o.kind]
        gen = make(motifs=o.motifs, noise=o.noise, features=o.features, seed=seed)
        g = dgl.graph((gen.src, gen.dst), num_nodes=gen.num_nodes)
        g.ndata["feat"] = gen.feat
        g.ndata["label"] = gen.label
        g.edata["motif"] = gen.motif_edge
        try:
            masks = stratified_split(gen.label, gen.num_nodes, train=o.train, val=o.val,
                                     test=o.test, seed=seed)
        except ValueError as exc:
            raise ConfigError(f"the train/val/test split: {exc}") from None
        g.ndata.update(masks.as_ndata())
        meta: dict[str, object] = {"generator": o.kind, "seed": seed,
                                   "num_classes": gen.num_classes}
        return GraphData(graph=g, ids=NodeIds.identity(gen.num_nodes), name=o.kind, meta=meta)
