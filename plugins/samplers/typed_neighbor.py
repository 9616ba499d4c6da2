"""``[sample] type = "typed_neighbor"``: neighbour sampling on a typed graph, fanouts per layer
and optionally per relation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import torch

from graphflow.components import Sampler
from graphflow.errors import ConfigError, DataError
from graphflow.hetero.sampling import TypedMiniBatch, TypedNeighborGraph, relation_fanouts
from graphflow.options import option


@dataclass
class TypedNeighborOptions:
    fanouts: list[int | dict[str, int]] = option(
        [10, 10], "One entry per layer, input side first: a fanout for every relation, or a "
                  "table {relation = fanout} (relations left out take default_fanout; -1: "
                  "every in-edge).")
    default_fanout: int = option(-1, "Fanout of the relations a fanout table leaves out.")
    batch_size: int = option(1024, "Seed nodes (of the target type) per minibatch.")

    def __post_init__(self) -> None:
        if not self.fanouts:
            raise ValueError("fanouts needs one entry per layer")
        values = [f for e in self.fanouts for f in (e.values() if isinstance(e, dict) else [e])]
        if any(f == 0 or f < -1 for f in values) or self.default_fanout < -1:
            raise ValueError(f"fanouts must be positive or -1 (every in-edge), got "
                             f"{self.fanouts}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")


class TypedNeighborSampler(Sampler):
    """Uniform neighbour sampling on a typed graph (DGL ``NeighborSampler`` on a heterograph):
    seeds of the target node type, up to ``fanout`` in-edges per node and relation, one typed
    block per layer (destination nodes first among each type's sources, as DGL's ``to_block``).
    Vectorised per relation over graphflow's sampler kernels, on the run's device (the GPU with
    ``device = "cuda"``)."""

    name = "typed_neighbor"
    summary = "Neighbour sampling on typed graphs (fanouts per layer or per relation)"
    Options = TypedNeighborOptions
    options: TypedNeighborOptions

    @property
    def num_layers(self) -> int:
        return len(self.options.fanouts)

    def check_layers(self, num_layers: int, *, what: str = "the model") -> None:
        if num_layers != self.num_layers:
            raise ConfigError(f"fanouts = {self.options.fanouts} has {self.num_layers} entries "
                              f"but {what} has {num_layers} message-passing layers; give one "
                              f"fanout per layer")

    def prepare(self, data: Any, device: torch.device) -> Any:
        g = data.graph
        if len(g.ntypes) == 1 and len(g.canonical_etypes) == 1:
            raise DataError('[sample] "typed_neighbor" needs a typed graph; for a graph with '
                            'one node type use type = "neighbor"')
        graph = TypedNeighborGraph(g, device)  # the CSCs and blocks on the run's device
        self.fanouts = relation_fanouts(self.options.fanouts, graph.relations,
                                        self.options.default_fanout)
        return graph

    def sample(self, graph: TypedNeighborGraph, seeds: Any) -> TypedMiniBatch:
        """``seeds``: ``{target type: int64 ids}`` (one type)."""
        if not isinstance(seeds, dict) or len(seeds) != 1:
            raise DataError("typed_neighbor samples around seeds of one node type: pass "
                            "{node type: ids}")
        (target, ids), = seeds.items()
        return graph.sample_blocks(target, ids, self._fanouts(graph))

    def iterate_typed(self, graph: TypedNeighborGraph, target: str, seeds: torch.Tensor,
                      generator: torch.Generator) -> Iterator[TypedMiniBatch]:
        """Shuffled batches of ``batch_size`` target-type seeds with their blocks."""
        yield from graph.iterate(target, seeds, self._fanouts(graph), self.options.batch_size,
                                 generator)

    def _fanouts(self, graph: TypedNeighborGraph) -> list:
        if getattr(self, "fanouts", None) is None:
            self.fanouts = relation_fanouts(self.options.fanouts, graph.relations,
                                            self.options.default_fanout)
        return self.fanouts
