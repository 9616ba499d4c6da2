"""Random-walk samplers: ``node2vec`` (second-order, p/q-biased) and ``deepwalk`` (uniform).

``prepare`` builds the walk CSR on the run's device once; ``sample(prepared, starts)`` returns
int64 ``(B, walk_length + 1)`` walks, ``-1`` after a dead end. The ``skipgram`` task draws
the start nodes and consumes the walks batch by batch. Edges held out for link prediction leave
the graph before, in the ``link_split`` transform, so that no walk crosses them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from graphflow.compat.dgl import dgl
from graphflow.components import Sampler
from graphflow.errors import ConfigError
from graphflow.graph import GraphData
from graphflow.options import option
from graphflow.sampling.csc import edge_weights
from graphflow.sampling.sampler import intra_op_threads
from graphflow.walks.csr import WalkGraph, from_edges
from graphflow.sampling import native
from graphflow.walks import native as walks_native
from graphflow.walks.node2vec import random_walks


@dataclass
class WalkOptions:
    walk_length: int = option(80, "Steps per walk; a walk holds walk_length + 1 nodes.")
    walks_per_node: int = option(10, "Walks started from every node per epoch.")
    weight: str | None = option(None, 'Edge data with non-negative weights (e.g. "weight"): '
                                "steps pick edges in proportion to them. Default: uniform.")
    batch_size: int = option(100_000, "Start nodes per walk batch (walked at once, then trained "
                             "on); larger batches amortise per-step overhead, on a GPU above all.")
    backend: Literal["graphflow", "dgl"] = option(
        "graphflow", '"graphflow": graphflow\'s walks on the run\'s device (compiled on the CPU, '
        'vectorised torch steps on a GPU); "dgl": '
        "DGL's C++ sampler on the CPU (for parity), walks then moved to the device.")
    threads: int = option(0, "CPU threads of the compiled walks (CPU) or torch's intra-op "
                          "threads (other devices) while walking; 0: the stage's cores (the "
                          "skipgram task's trainers, all cores by the core policy).")

    removed_options: ClassVar[dict[str, str]] = {
        name: 'hold edges out with a [[transform]] type = "link_split" (e.g. val = 0.0, '
              'test = 0.1) before the skipgram stage'
        for name in ("holdout_edges", "holdout_seed")}

    def __post_init__(self) -> None:
        for name in ("walk_length", "walks_per_node", "batch_size"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} = {getattr(self, name)}: must be >= 1")
        if self.threads < 0:
            raise ValueError(f"threads = {self.threads}: must be >= 0")


@dataclass
class Node2VecOptions(WalkOptions):
    p: float = option(1.0, "Return parameter: 1/p weighs stepping back to the previous node.")
    q: float = option(1.0, "In-out parameter: 1/q weighs moving away from the previous node "
                      "(q < 1 explores outward, DFS-like; q > 1 stays local, BFS-like).")

    def __post_init__(self) -> None:
        super().__post_init__()
        for name in ("p", "q"):
            value = getattr(self, name)
            if not value > 0 or value == float("inf"):
                raise ValueError(f"{name} = {value}: must be a finite number > 0")


@dataclass
class WalkData:
    """What the walk samplers' ``prepare`` returns (``ctx.sampler_graph``).

    :ivar graph: the walk CSR on ``device``.
    :ivar dgl_graph: the same edges as a CPU DGLGraph (``backend = "dgl"`` only).
    """

    graph: WalkGraph
    device: torch.device
    dgl_graph: dgl.DGLGraph | None = None

    @property
    def num_nodes(self) -> int:
        return self.graph.num_nodes


class WalkSampler(Sampler):
    """Shared part of the walk samplers (not registered itself)."""

    Options = WalkOptions

    def _pq(self) -> tuple[float, float]:
        return getattr(self.options, "p", 1.0), getattr(self.options, "q", 1.0)

    def prepare(self, data: GraphData, device: torch.device) -> WalkData:
        o = self.options
        g = data.graph
        src, dst = g.edges()
        weight = None if o.weight is None else edge_weights(g, o.weight)  # float32 (E,)
        with intra_op_threads(o.threads):
            walk_graph = from_edges(src, dst, g.num_nodes(), weight).to(device)
            p, q = self._pq()
            if (o.backend == "graphflow" and not (p == 1.0 and q == 1.0)
                    and not walks_native.supports(walk_graph)):  # the torch steps' hash set
                walk_graph.with_edge_set()
        dgl_graph = walk_graph.to("cpu").to_dgl() if o.backend == "dgl" else None
        return WalkData(graph=walk_graph, device=torch.device(device), dgl_graph=dgl_graph)

    def sample(self, graph: WalkData, seeds: torch.Tensor,
               generator: torch.Generator | None = None) -> torch.Tensor:
        """Walks from ``seeds`` (int64 (B,)): int64 (B, walk_length + 1) on the walk device.

        :param generator: a ``torch.Generator`` on the walk device (graphflow backend); the
            DGL backend seeds DGL's own generator from it.
        """
        if not isinstance(graph, WalkData):
            raise ConfigError(f"{self.name} sampler: sample() needs what prepare() returned "
                              f"(ctx.sampler_graph), got {type(graph).__name__}")
        o = self.options
        p, q = self._pq()
        if o.backend == "dgl":
            return self._dgl_walks(graph, seeds, p, q, generator)
        with intra_op_threads(o.threads), native.threads(o.threads or native.current_threads()):
            return random_walks(graph.graph, seeds.to(graph.device), o.walk_length, p=p, q=q,
                                generator=generator)

    def _dgl_walks(self, graph: WalkData, seeds: torch.Tensor, p: float, q: float,
                   generator: torch.Generator | None) -> torch.Tensor:
        o = self.options
        if generator is not None:  # DGL draws from its own global generator
            dgl.seed(int(torch.randint(2**31 - 1, (1,), generator=generator,
                                       device=generator.device)))
        g = graph.dgl_graph
        nodes = seeds.to("cpu", g.idtype)
        prob = "weight" if o.weight is not None else None
        if p == 1.0 and q == 1.0:
            traces, _ = dgl.sampling.random_walk(g, nodes, length=o.walk_length, prob=prob)
        else:
            traces = dgl.sampling.node2vec_random_walk(g, nodes, p, q, o.walk_length, prob=prob)
        return traces.to(device=graph.device, dtype=torch.int64)


class Node2VecSampler(WalkSampler):
    """Node2Vec random walks (Grover & Leskovec, KDD 2016), all walkers advanced at once.

    From ``v``, having come from ``t``, a walk steps to a neighbor ``x`` with probability
    proportional to ``alpha(t, x) * w(v, x)``: ``alpha = 1/p`` if ``x = t``, ``1`` if ``x`` is
    a neighbor of ``t``, ``1/q`` otherwise. Steps are drawn by vectorised rejection sampling
    (KnightKing) with a hash-set test of ``(t, x) in E``; ``p = q = 1`` takes the uniform fast
    path. Walks stop at nodes without out-edges (padded with -1). The same seed gives the same
    walks on the CPU. ``backend = "dgl"`` uses ``dgl.sampling.node2vec_random_walk`` instead.
    """

    name = "node2vec"
    summary = "Node2Vec (p, q)-biased random walks, vectorised on CPU or GPU"
    Options = Node2VecOptions


class DeepWalkSampler(WalkSampler):
    """DeepWalk random walks (Perozzi et al., KDD 2014): uniform (or weight-proportional) steps.

    The first-order fast path of ``node2vec`` (``p = q = 1``): one vectorised draw per step.
    ``backend = "dgl"`` uses ``dgl.sampling.random_walk``.
    """

    name = "deepwalk"
    summary = "DeepWalk uniform random walks, vectorised on CPU or GPU"
    Options = WalkOptions
