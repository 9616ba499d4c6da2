"""Edge-seeded minibatches for link prediction: DGL's ``as_edge_prediction_sampler``.

A batch is a set of training edge ids. For each edge ``(u, v)`` the batch holds the positive
pair and ``k`` negative pairs ``(u, w_j)`` from a negative sampler (same source, drawn
destinations, as DGL's ``negative_sampler.Uniform``). The blocks are sampled around the
distinct endpoints of all these pairs, and the batch's own edges and their reverses (the
``reverse`` edge ids) are excluded from every block (DGL's ``exclude="reverse_id"``), so the
encoder never passes messages along the edges it is asked to predict::

    edges = EdgeBatches(sampler, sampled_graph, src, dst, reverse, negatives, k=1)
    for mb in edges.iterate(train_eids, generator):          # shuffled, prefetched
        h = encoder([Adjacency.from_block(b) for b in mb.blocks], mb.features)  # (S, D)
        pos = decoder(h[mb.pos[0]], h[mb.pos[1]])            # (B,)
        neg = decoder(h[mb.neg[0]], h[mb.neg[1]])            # (B * k,)

``mb.seeds`` are the distinct endpoints (global ids); ``mb.pos`` / ``mb.neg`` index them.
Batching, per-batch generators and prefetching are the node sampler's
(:meth:`~graphflow.sampling.sampler.MinibatchSampler.iterate`), so the same generator state
gives the same batches with any number of workers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import torch

from graphflow.errors import ConfigError
from graphflow.sampling import native
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.prefetch import prefetch
from graphflow.sampling.sampler import (MinibatchSampler, SampledGraph, gather_threads,
                                        intra_op_threads)
from graphflow.sampling.seeds import num_batches, seed_batches
from graphflow.sparse.indexed_rows import IndexedRows

NegativeDraw = Callable[[torch.Tensor, int, torch.Generator], torch.Tensor]
"""``draw(src, k, generator) -> dst``: int64 (B * k,) negative destinations for sources (B,)."""


@dataclass
class EdgeMiniBatch(MiniBatch):
    """A :class:`MiniBatch` around the endpoints of a batch of positive and negative pairs.

    :ivar pos: int64 (2, B) the positive pairs, as indices into ``seeds``.
    :ivar neg: int64 (2, B * k) the negative pairs (``neg[:, i*k:(i+1)*k]`` share positive
        ``i``'s source), as indices into ``seeds``.
    :ivar eids: int64 (B,) the batch's training edge ids.
    """

    pos: torch.Tensor = field(default_factory=lambda: torch.zeros(2, 0, dtype=torch.int64))
    neg: torch.Tensor = field(default_factory=lambda: torch.zeros(2, 0, dtype=torch.int64))
    eids: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.int64))


def reverse_edge_ids(src: torch.Tensor, dst: torch.Tensor, num_nodes: int) -> torch.Tensor:
    """int64 (E,) the id of an edge ``v -> u`` for each edge ``u -> v``, or -1 without one.

    One sort of the edge keys and one binary search (with parallel edges, one of them).
    """
    keys = src * num_nodes + dst
    sorted_keys, order = torch.sort(keys)
    rev = dst * num_nodes + src
    pos = torch.searchsorted(sorted_keys, rev).clamp(max=max(keys.numel() - 1, 0))
    found = sorted_keys[pos] == rev if keys.numel() else torch.zeros(0, dtype=torch.bool)
    return torch.where(found, order[pos], torch.full_like(pos, -1))


class EdgeBatches:
    """Edge-seeded minibatches from a node sampler (see the module docstring).

    :param sampler: a :class:`MinibatchSampler` with ``excludes_edges``.
    :param graph: what ``sampler.prepare`` returned for the training graph.
    :param src: / :param dst: int64 (E,) the training graph's edges (ids = positions).
    :param reverse: int64 (E,) reverse edge ids (:func:`reverse_edge_ids`), -1 for none.
    :param draw: the negative sampler.
    :param k: negatives per positive.
    """

    def __init__(self, sampler: MinibatchSampler, graph: SampledGraph, src: torch.Tensor,
                 dst: torch.Tensor, reverse: torch.Tensor, draw: NegativeDraw, k: int):
        if not getattr(sampler, "excludes_edges", False):
            raise ConfigError(f"sampler {sampler.name!r} cannot exclude edges from its blocks, "
                              f"which link prediction needs (a batch must not see its own "
                              f'edges); use [sample] type = "neighbor"')
        dev = graph.device
        self.sampler, self.graph, self.draw, self.k = sampler, graph, draw, k
        self.src, self.dst, self.reverse = src.to(dev), dst.to(dev), reverse.to(dev)

    def num_batches(self, num_edges: int) -> int:
        o = self.sampler.options
        return num_batches(num_edges, o.batch_size, drop_last=o.drop_last)

    def sample(self, eids: torch.Tensor, generator: torch.Generator | None,
               gather: int | None = None, rows: bool = False) -> EdgeMiniBatch:
        """One batch around the training edges ``eids`` (B,); ``gather``: intra-op threads of
        the feature gather (default the sampler's ``threads``; 0: the caller's, see
        :func:`~graphflow.sampling.sampler.gather_threads`); ``rows``: leave the features as
        :class:`~graphflow.sparse.indexed_rows.IndexedRows` where the store allows it (for a
        model with ``accepts_rows``), as the node sampler's ``iterate(..., rows=True)``."""
        graph = self.graph
        threads = self.sampler.options.threads
        gather = threads if gather is None else gather
        kernel_threads = gather or torch.get_num_threads()  # as the node sampler's _sample
        with intra_op_threads(threads), native.threads(kernel_threads):
            eids = eids.to(graph.device)
            s, d = self.src.index_select(0, eids), self.dst.index_select(0, eids)  # (B,)
            nd = self.draw(s, self.k, generator)  # (B * k,)
            nodes, inverse = torch.unique(torch.cat([s, d, nd]), return_inverse=True)  # (S,)
            b = s.shape[0]
            ps, pd, nsd = inverse[:b], inverse[b:2 * b], inverse[2 * b:]
            rev = self.reverse.index_select(0, eids)
            exclude = torch.cat([eids, rev[rev >= 0]])  # the batch's edges and reverses
            blocks = self.sampler.sample_blocks(graph.structure, nodes, generator,
                                                exclude=exclude)
        input_nodes = blocks[0].src_nodes
        table = graph.store.local_table() if rows else None
        with intra_op_threads(gather):
            features, _ = graph.store.gather(input_nodes, nodes[:0], features=table is None)
        if table is not None:
            features = IndexedRows(table, input_nodes)  # read in place by the first layer
        out = graph.output_device
        nb = out.type == "cuda"
        pos = torch.stack([ps, pd])  # (2, B)
        neg = torch.stack([ps.repeat_interleave(self.k), nsd])  # (2, B * k)
        return EdgeMiniBatch(seeds=nodes.to(out, non_blocking=nb),
                             input_nodes=input_nodes.to(out, non_blocking=nb),
                             blocks=[blk.to(out, non_blocking=nb) for blk in blocks],
                             features=features, labels=None, pos=pos.to(out), neg=neg.to(out),
                             eids=eids)

    def iterate(self, eids: torch.Tensor, generator: torch.Generator | None = None, *,
                workers: int | None = None, rows: bool = False) -> Iterator[EdgeMiniBatch]:
        """Shuffled (with ``generator``), batched, prefetched batches over edge ids ``eids``;
        ``workers``: background sampling threads (default: the sampler's, see
        ``MinibatchSampler.num_workers``). The batches are the same either way. ``rows``: the
        consumer takes ``IndexedRows`` features, used only when sampling inline (a worker's
        gather runs off the training thread)."""
        o = self.sampler.options
        batches = seed_batches(eids.cpu().long(), o.batch_size, shuffle=o.shuffle,
                               drop_last=o.drop_last, generator=generator)
        draw = int(torch.randint(2**62, (1,), generator=generator))
        batch_seeds = torch.randint(2**62, (len(batches),),
                                    generator=torch.Generator().manual_seed(draw)).tolist()
        device = self.graph.device
        workers = self.sampler.num_workers(workers)
        gather = gather_threads(o, workers)
        lazy = rows and (workers == 0 or o.prefetch <= 0)

        def produce(item: tuple[int, torch.Tensor]) -> EdgeMiniBatch:
            gen = torch.Generator(device=device).manual_seed(batch_seeds[item[0]])
            return self.sample(item[1], gen, gather, lazy)

        stream_device = self.graph.output_device if self.graph.output_device.type == "cuda" \
            else device
        return prefetch(produce, list(enumerate(batches)), depth=o.prefetch,
                        workers=workers, device=stream_device)
