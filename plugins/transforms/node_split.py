"""The ``split`` transform: seeded train/val/test masks, stratified by label."""

from __future__ import annotations

from dataclasses import dataclass

from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.io.node_split import MASKS, check_sizes, stratified_split
from graphflow.options import option


@dataclass
class SplitOptions:
    train: int | float = option(0.6, "Training nodes: a fraction (float) of the labelled "
                                     "nodes, or a total count (int).")
    val: int | float = option(0.2, "Validation nodes: a fraction or a count.")
    test: int | float = option(0.2, "Test nodes: a fraction or a count.")
    train_per_class: int = option(0, "When > 0: this many training nodes from every class "
                                     "instead of train (the Planetoid protocol).")
    seed: int | None = option(None, "Split seed; default: the pipeline seed.")
    overwrite: bool = option(False, "Replace masks the graph already has (default: keep them).")
    node_type: str = option("", "Typed graphs: the node type to split; default: the target type "
                           "(the loader's, or the one type with labels).")

    def __post_init__(self) -> None:
        check_sizes(self.train, self.val, self.test, self.train_per_class)


class Split(Transform):
    """Random train/val/test masks, the same for the same seed.

    With integer labels the split is stratified: each class contributes in proportion to
    its size (or ``train_per_class`` nodes each). Unlabelled nodes (label < 0) get no mask.
    Without labels, or with multi-label targets, nodes are drawn without stratification.
    A graph that already has masks (Planetoid's standard split...) keeps them unless
    ``overwrite = true``.
    """

    name = "split"
    summary = "Seeded, stratified train/val/test masks by fractions or per-class counts"
    Options = SplitOptions
    typed = True

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        if data.is_typed:
            return self._typed(data, ctx)
        if o.node_type:
            raise DataError(f'split: node_type = "{o.node_type}", but the graph has one node type; '
                            f"leave node_type out")
        g = data.graph
        present = [m for m in MASKS if m in g.ndata]
        if present and not o.overwrite:
            ctx.info(f"split: keeping the graph's own {', '.join(present)} "
                     f"(set overwrite = true to replace them)")
            return data
        seed = ctx.seed if o.seed is None else o.seed
        try:
            masks = stratified_split(g.ndata.get("label"), data.num_nodes, train=o.train,
                                     val=o.val, test=o.test, seed=seed,
                                     train_per_class=o.train_per_class)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        out = data.with_graph(g.clone())
        out.graph.ndata.update(masks.as_ndata())
        return out

    def _typed(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        g = data.graph
        ntype = o.node_type or data.meta.get("target") or ""
        if not ntype:
            labelled = data.labelled_types
            if len(labelled) != 1:
                raise DataError(f"split: say which node type to split (node_type = ...); "
                                f"node types: {', '.join(g.ntypes)}")
            ntype = labelled[0]
        if ntype not in g.ntypes:
            raise DataError(f'split: node_type = "{ntype}" is not a node type; node types: '
                            f"{', '.join(g.ntypes)}")
        frame = g.nodes[ntype].data
        present = [m for m in MASKS if m in frame]
        if present and not o.overwrite:
            ctx.info(f"split: keeping the {ntype} nodes' own {', '.join(present)} "
                     f"(set overwrite = true to replace them)")
            return data
        seed = ctx.seed if o.seed is None else o.seed
        try:
            masks = stratified_split(frame.get("label"), g.num_nodes(ntype), train=o.train,
                                     val=o.val, test=o.test, seed=seed,
                                     train_per_class=o.train_per_class)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
        out = data.with_graph(g.clone())
        out.graph.nodes[ntype].data.update(masks.as_ndata())
        return out
