"""The ``link_split`` transform: hold out validation and test edges for link prediction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.linkpred.edge_split import file_split, is_symmetric, random_split
from graphflow.options import option


@dataclass
class LinkSplitOptions:
    val: int | float = option(0.05, "Validation pairs: a fraction (float) of the graph's "
                                    "distinct pairs, or a count (int).")
    test: int | float = option(0.1, "Test pairs: a fraction or a count.")
    negatives: int = option(1, "Fixed negative pairs drawn per validation / test positive.")
    path: Path | None = option(None, "A split file instead of a random split: Parquet or CSV "
                                     "with columns src, dst, split (train/val/test) and "
                                     "optionally label (1/0), in the original node ids.")
    undirected: bool | None = option(None, "Hold out pairs in both directions; default: when "
                                           "every edge has its reverse.")
    seed: int | None = option(None, "Split seed; default: the pipeline seed.")

    def __post_init__(self) -> None:
        for name in ("val", "test"):
            size = getattr(self, name)
            if isinstance(size, float) and not 0.0 <= size < 1.0:
                raise ValueError(f"{name} = {size}: a fraction must lie in [0, 1) (or give a "
                                 f"count)")
            if isinstance(size, int) and size < 0:
                raise ValueError(f"{name} = {size}: a count must be >= 0")
        fractions = {k: v for k, v in (("val", self.val), ("test", self.test))
                     if isinstance(v, float)}
        if len(fractions) == 2 and sum(fractions.values()) >= 1.0 - 1e-9:
            raise ValueError(f"val ({self.val}) + test ({self.test}) add up to "
                             f"{self.val + self.test:g}: the fractions must sum to less than 1 "
                             f"so that training edges remain")
        if self.negatives < 1:
            raise ValueError(f"negatives = {self.negatives}: must be >= 1")


class LinkSplit(Transform):
    """Hold out edges for link prediction, seeded, with fixed negatives (see docs/link_prediction.md).

    Picks ``val`` and ``test`` of the graph's distinct pairs (self-loops excluded) at random,
    or reads them from ``path``. The held-out positives leave the message-passing graph (on
    an undirected graph both directions of a pair leave together), and each gets
    ``negatives`` fixed negative pairs: uniform node pairs that are no edge of the full graph.
    The split is stored on the graph (``GraphData.links``) for the ``link_prediction`` task
    and for exporters (``what = "links"``). Put it after transforms that add edges.
    """

    name = "link_split"
    summary = "Hold out val/test edges (pairs both ways) with fixed negatives, or read a split file"
    Options = LinkSplitOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        g = data.graph
        seed = ctx.seed if o.seed is None else o.seed
        generator = torch.Generator().manual_seed(seed)
        src, dst = g.edges()
        undirected = is_symmetric(src, dst, data.num_nodes) if o.undirected is None \
            else o.undirected
        if o.path is not None:
            graph, split = file_split(g, data.ids, o.path, negatives=o.negatives,
                                      undirected=undirected, generator=generator)
        else:
            graph, split = random_split(g, val=o.val, test=o.test, negatives=o.negatives,
                                        undirected=undirected, generator=generator,
                                        source=f"random, seed {seed}")
        out = data.with_graph(graph)
        out.links = split
        ctx.info(f"link_split: {split.val.num_pos} val and {split.test.num_pos} test "
                 f"{'pairs' if undirected else 'edges'} held out ({split.source}); "
                 f"{graph.num_edges():,} training edges remain")
        return out
