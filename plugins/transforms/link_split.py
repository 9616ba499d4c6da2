"""The ``link_split`` transform: hold out validation and test edges for link prediction."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.graph import GraphData
from graphflow.errors import ConfigError
from graphflow.linkpred.edge_split import (file_split, is_symmetric, random_split,
                                           reverse_relations, target_relations,
                                           typed_random_split)
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
    target: str | list[str] = option(
        "all", 'Typed graphs: the relations to hold out edges of: "all" (every relation but '
               'the reverse ones), a relation name, "src_type:relation:dst_type", or a list.')
    reverse: dict[str, str] | None = option(
        None, "Typed graphs: reverse relation pairs {relation = its reverse}: the reverse "
              "edges (v, u) of a held-out (u, v) leave the graph too; default: "
              "(s, r, d) and (d, rev-r, s) by name (the loaders' reverse = true); {} for none.")

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

    On a typed graph the split is per ``target`` relation (fractions of each relation's
    pairs), held-out edges leave their relation and their reverse edges the ``reverse``
    relation, and the fixed negatives ``(u, w)`` draw ``w`` among the nodes of the relation's
    destination type (:func:`graphflow.linkpred.edge_split.typed_random_split`).
    """

    name = "link_split"
    summary = ("Hold out val/test edges (pairs both ways; per relation on typed graphs) with "
               "fixed negatives, or read a split file")
    Options = LinkSplitOptions
    typed = True

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        g = data.graph
        seed = ctx.seed if o.seed is None else o.seed
        generator = torch.Generator().manual_seed(seed)
        if data.is_typed:
            return self._typed(data, ctx, generator, seed)
        if o.target != "all" or o.reverse is not None:
            raise ConfigError(f"link_split: target and reverse are for typed graphs; the graph "
                              f"{data.name!r} has one node type and one relation: remove them")
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

    def _typed(self, data: GraphData, ctx: RunContext, generator: torch.Generator,
               seed: int) -> GraphData:
        o = self.options
        g = data.graph
        if o.path is not None:
            raise ConfigError("link_split: path (a split file) is for graphs with one node "
                              "type; on a typed graph use val / test fractions or counts per "
                              "relation")
        if o.undirected is not None:
            raise ConfigError("link_split: undirected is for graphs with one node type; on a "
                              "typed graph a relation within one type whose edges all have "
                              "their reverse is split both ways by itself")
        reverse = reverse_relations(g, o.reverse)
        targets = target_relations(g, o.target, reverse, o.reverse)
        graph, split = typed_random_split(g, targets=targets, reverse=reverse, val=o.val,
                                          test=o.test, negatives=o.negatives,
                                          generator=generator, source=f"random, seed {seed}")
        out = data.with_graph(graph)
        out.links = split  # type: ignore[assignment]
        held = ", ".join(
            f"{split.name(r)} {s.val.num_pos}/{s.test.num_pos}"
            + (f" (with {split.name(split.reverse[r])})" if split.reverse[r] else "")
            for r, s in split.rels.items())
        ctx.info(f"link_split: val/test edges held out per relation: {held} "
                 f"({split.source}); {graph.num_edges():,} training edges remain")
        return out
