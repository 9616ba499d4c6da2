"""The ``hold_out_nodes`` transform: remove a seeded share of nodes, and all their edges."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.bundle.write import HELD_OUT_META
from graphflow.components import Transform
from graphflow.context import RunContext
from graphflow.errors import DataError
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow_plugins.transforms.rebuild import with_nodes


@dataclass
class HoldOutNodesOptions:
    fraction: float = option(0.2, "Share of all nodes to remove (with every edge touching "
                                  "them).")
    exclude: list[str] = option(
        ["train_mask", "val_mask"],
        "Node masks whose nodes are never removed (so that training and model selection "
        "see the same labelled nodes as without this transform); [] = any node.")
    seed: int | None = option(None, "Seed of the draw; default: the pipeline's seed.")

    def __post_init__(self) -> None:
        if not 0 < self.fraction < 1:
            raise ValueError(f"fraction must lie in (0, 1), got {self.fraction}")


class HoldOutNodes(Transform):
    """Remove a seeded ``fraction`` of the nodes and all their edges from the graph, for
    inductive evaluation: a model trained on what remains never sees the removed nodes,
    their features or their edges.

    The removed nodes' original ids are saved with the trained model's bundle
    (``OUT_DIR/model/held_out_nodes.parquet``, column ``id``); ``graphflow predict RUN_DIR
    --data <full graph pipeline> --nodes OUT_DIR/model/held_out_nodes.parquet`` then scores
    them on the full graph (docs/inference.md). Nodes in the ``exclude`` masks are kept.
    """

    name = "hold_out_nodes"
    summary = "Remove a seeded share of nodes and their edges (inductive evaluation)"
    Options = HoldOutNodesOptions

    def apply(self, data: GraphData, ctx: RunContext) -> GraphData:
        o = self.options
        n = data.num_nodes
        count = round(o.fraction * n)
        kept_by_mask = torch.zeros(n, dtype=torch.bool)
        for name in o.exclude:
            mask = data.graph.ndata.get(name)
            if mask is None:
                raise DataError(f"exclude names {name!r}, which the graph does not have; "
                                f"masks: {', '.join(k for k in data.graph.ndata if k.endswith('_mask')) or 'none'}")
            kept_by_mask |= mask.bool()
        eligible = torch.nonzero(~kept_by_mask).squeeze(1)  # (n_eligible,)
        if count < 1 or count > eligible.numel():
            raise DataError(f"fraction = {o.fraction} asks for {count:,} of {n:,} nodes, but "
                            f"{eligible.numel():,} are outside the masks {o.exclude}; lower "
                            f"fraction or exclude fewer masks")
        seed = ctx.seed if o.seed is None else o.seed
        generator = torch.Generator().manual_seed(seed)
        held = eligible[torch.randperm(eligible.numel(), generator=generator)[:count]]
        held = held.sort().values  # (count,)
        keep = torch.ones(n, dtype=torch.bool)
        keep[held] = False
        result = with_nodes(data, torch.nonzero(keep).squeeze(1))
        result.meta[HELD_OUT_META] = data.ids.take(held).to_arrow()
        ctx.info(f"hold_out_nodes: removed {count:,} of {n:,} nodes and their edges "
                 f"({data.num_edges - result.num_edges:,} edges)")
        return result
