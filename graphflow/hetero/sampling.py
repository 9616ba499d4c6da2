"""Typed neighbour sampling: per-layer typed blocks grown from seeds of one node type.

For each layer, from the output side, every relation ``(s, r, t)`` whose destination type ``t``
has frontier nodes draws up to ``fanout(layer, r)`` of each frontier node's in-edges of that
relation, uniformly without replacement (all of them for ``-1``), vectorised over the
frontier with graphflow's sampler kernels (:func:`graphflow.sampling.per_row.sample_rows`).
The in-edge CSCs of the relations that end at one node type are stacked into one CSC whose
rows are (relation, node) pairs, so the relations of a destination type that share a fanout
are sampled in one call (one call per relation cost as much as the sampling itself on graphs
with many relations). The block's source nodes of each type are its destination nodes
of that type followed by the newly reached ones (DGL's ``to_block`` convention), and each
relation becomes one :class:`~graphflow.sparse.Adjacency` in a
:class:`~graphflow.nn.typed.TypedAdjacency`. The next layer's frontier is this block's source
nodes. The loop runs over layers and relations, never over nodes or edges.

**Devices.** The CSCs, the relabelling tables and the sampled blocks live on the device the
graph was prepared for (``TypedNeighborGraph(g, device)``; ``[pipeline] device = "cuda"``
samples on the GPU, as the ``neighbor`` sampler does): seeds are moved there, and the random
draws come from a generator on that device seeded from the loop's CPU generator, so a seeded
run repeats on either device (the two devices draw different streams).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass

import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError
from graphflow.nn.typed import Relation, TypedAdjacency
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.per_row import flat_nonzero, sample_rows
from graphflow.sampling.relabel import SCAN_RATIO
from graphflow.sparse import Adjacency

Fanout = int | Mapping[str, int]


@dataclass
class TypedMiniBatch:
    """One sampled batch.

    :ivar seeds: int64 (B,) seed ids within the target type.
    :ivar input_nodes: per node type, int64 ids (within the type) of the first layer's
        source nodes.
    :ivar adjs: one :class:`TypedAdjacency` per layer, input side first.
    :ivar src_nodes: per layer (input side first), per node type, the ids of the block's
        source nodes (its destinations are the first ``adjs[i].num_dst[t]``).
    """

    seeds: torch.Tensor
    input_nodes: dict[str, torch.Tensor]
    adjs: list[TypedAdjacency]
    src_nodes: list[dict[str, torch.Tensor]]


def relation_fanouts(fanouts: Sequence[Fanout], relations: Sequence[Relation],
                     default: int = -1) -> list[dict[Relation, int]]:
    """Each layer's fanout per canonical relation. A layer's fanout is an int (every relation)
    or a table ``{relation name: fanout}`` (relations left out take ``default``; a name may
    also be written ``"src:relation:dst"``). An unknown name is a ``ConfigError`` listing the
    relations."""
    names = {r[1] for r in relations} | {":".join(r) for r in relations}
    out = []
    for i, f in enumerate(fanouts):
        if isinstance(f, int):
            out.append({r: f for r in relations})
            continue
        unknown = sorted(set(f) - names)
        if unknown:
            raise ConfigError(f"[sample] fanouts[{i}]: relation {unknown[0]!r} is not in the "
                              f"graph; relations: {', '.join(sorted({r[1] for r in relations}))}")
        out.append({r: int(f.get(":".join(r), f.get(r[1], default))) for r in relations})
    return out


class TypedNeighborGraph:
    """What typed sampling reads: one stacked in-edge CSC per destination type (built once),
    node counts, and one relabelling table per node type."""

    def __init__(self, g: dgl.DGLGraph, device: torch.device | str = "cpu"):
        self.device = torch.device(device)
        self.relations: list[Relation] = list(g.canonical_etypes)
        self.num_nodes = {t: g.num_nodes(t) for t in g.ntypes}
        # per destination type t: one CSC over the rows (relation j, node v) = j * n_t + v of
        # the relations ending at t, in self.relations order
        self.csc: dict[str, CSCGraph] = {}
        self.row_offset: dict[Relation, int] = {}
        for t in self.num_nodes:
            rels = [rel for rel in self.relations if rel[2] == t]
            if not rels:
                continue
            n_t = self.num_nodes[t]
            counts, sources, eids = [], [], []
            for j, rel in enumerate(rels):
                src, dst, eid = g.edges(form="all", etype=rel)
                order = torch.sort(dst, stable=True).indices  # (E_r,) grouped by destination
                counts.append(torch.bincount(dst, minlength=n_t))
                sources.append(src[order])
                eids.append(eid[order])
                self.row_offset[rel] = j * n_t
            indptr = torch.zeros(len(rels) * n_t + 1, dtype=torch.int64)
            torch.cumsum(torch.cat(counts), 0, out=indptr[1:])
            self.csc[t] = CSCGraph(indptr, torch.cat(sources), torch.cat(eids)).to(self.device)
        # (n_t,) global -> local id of the block being built; every entry read is written first
        self._table = {t: torch.empty(n, dtype=torch.int64, device=self.device)
                       for t, n in self.num_nodes.items()}
        self._flags = {t: torch.zeros(n, dtype=torch.bool, device=self.device)
                       for t, n in self.num_nodes.items()}

    def sample_blocks(self, target: str, seeds: torch.Tensor,
                      fanouts: Sequence[Mapping[Relation, int]],
                      generator: torch.Generator | None = None) -> TypedMiniBatch:
        """The blocks of ``len(fanouts)`` layers (``fanouts[0]``: the input-side layer) around
        ``seeds`` (int64 ids of ``target`` nodes; moved to the graph's device)."""
        seeds = seeds.to(self.device)
        dst: dict[str, torch.Tensor] = {target: seeds}
        adjs: list[TypedAdjacency] = []
        layer_nodes: list[dict[str, torch.Tensor]] = []
        for fanout in reversed(fanouts):
            picked = self._sample_layer(dst, fanout, generator)
            picked = {rel: picked[rel] for rel in self.relations if rel in picked}
            reached: dict[str, list[torch.Tensor]] = {}
            for rel, (_, nbr, _) in picked.items():
                reached.setdefault(rel[0], []).append(nbr)
            src: dict[str, torch.Tensor] = {}
            for t in self.num_nodes:
                d = dst.get(t)
                nbrs = reached.get(t)
                if d is None and nbrs is None:
                    continue
                d = d if d is not None else torch.zeros(0, dtype=torch.int64,
                                                        device=self.device)
                src[t] = self._relabel(t, d, torch.cat(nbrs) if nbrs else d[:0])
            rels = {}
            for rel, (indptr, nbr, eids) in picked.items():
                s, _, t = rel
                local = self._table[s].index_select(0, nbr) if nbr.numel() else nbr
                # the table holds the ids of this block's type-s sources: set by _relabel(s)
                rels[rel] = Adjacency(indptr, local, eids, src[s].shape[0], dst[rel[2]].shape[0])
            adjs.append(TypedAdjacency(rels, {t: v.shape[0] for t, v in src.items()},
                                       {t: dst[t].shape[0] if t in dst else 0 for t in src}))
            layer_nodes.append(src)
            dst = src
        adjs.reverse()
        layer_nodes.reverse()
        return TypedMiniBatch(seeds=seeds, input_nodes=dst, adjs=adjs, src_nodes=layer_nodes)

    def _sample_layer(self, dst: Mapping[str, torch.Tensor], fanout: Mapping[Relation, int],
                      generator: torch.Generator | None
                      ) -> dict[Relation, tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:
        """Per relation: ``indptr`` (n_dst + 1,), sources, edge ids of the in-edges drawn for
        the frontier ``dst``; one ``sample_rows`` call per destination type and fanout."""
        picked: dict[Relation, tuple[torch.Tensor, torch.Tensor, torch.Tensor]] = {}
        for t, d in dst.items():
            n = d.numel()
            if n == 0 or t not in self.csc:
                continue
            groups: dict[int, list[Relation]] = {}
            for rel in self.relations:
                if rel[2] == t and fanout[rel] != 0:
                    groups.setdefault(fanout[rel], []).append(rel)
            csc = self.csc[t]
            for k, rels in groups.items():
                rows = torch.cat([d + self.row_offset[rel] for rel in rels])  # (R n,)
                indptr, pos = sample_rows(csc, rows, k, replace=False, generator=generator)
                nbr, eids = csc.gather(pos)  # (nnz,) source ids in each source type, edge ids
                cuts = indptr[::n].tolist()  # (R + 1,) each relation's first edge
                for j, rel in enumerate(rels):
                    a, b = cuts[j], cuts[j + 1]
                    picked[rel] = (indptr[j * n:(j + 1) * n + 1] - a, nbr[a:b], eids[a:b])
        return picked

    def _relabel(self, t: str, dst: torch.Tensor, nbr: torch.Tensor) -> torch.Tensor:
        """``cat(dst, new)`` with ``new`` the sorted ids of ``nbr`` not in ``dst``; leaves the
        type's table mapping each of them to its position."""
        flags, table = self._flags[t], self._table[t]
        if nbr.shape[0] * SCAN_RATIO < flags.shape[0]:  # few ids: sort them
            cand = torch.unique(nbr)  # (u,) sorted
            flags.index_fill_(0, dst, True)
            new = cand[~flags.index_select(0, cand)]  # (n_new,)
            flags.index_fill_(0, dst, False)
        else:  # many: mark them and scan the type's flags (no sort)
            flags.index_fill_(0, nbr, True)
            flags.index_fill_(0, dst, False)
            new = flat_nonzero(flags)  # (n_new,) sorted
            flags.index_fill_(0, new, False)
        nodes = torch.cat([dst, new])  # (n_src,)
        table.index_copy_(0, nodes, torch.arange(nodes.shape[0], device=nodes.device))
        return nodes

    def iterate(self, target: str, seeds: torch.Tensor, fanouts: Sequence[Mapping[Relation, int]],
                batch_size: int, generator: torch.Generator,
                shuffle: bool = True) -> Iterator[TypedMiniBatch]:
        """Batches of ``batch_size`` seeds (shuffled with ``generator``, a CPU generator) and
        their blocks, drawn on the graph's device."""
        seeds = seeds.cpu()
        order = torch.randperm(seeds.shape[0], generator=generator) if shuffle \
            else torch.arange(seeds.shape[0])
        draws = self.generator_for(generator)
        for batch in seeds[order].split(batch_size):
            yield self.sample_blocks(target, batch, fanouts, draws)

    def generator_for(self, generator: torch.Generator) -> torch.Generator:
        """``generator`` itself on the CPU; elsewhere a generator on the graph's device
        seeded from it (one draw), so that the CPU generator's state still decides the run."""
        if self.device.type == "cpu":
            return generator
        seed = int(torch.randint(0, 2**62, (1,), generator=generator))
        return torch.Generator(device=self.device).manual_seed(seed)
