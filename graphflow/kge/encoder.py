r"""Knowledge-graph completion with a message-passing encoder: R-GCN + DistMult.

Schlichtkrull et al. 2018 (section 4): a typed encoder (``[model] type = "rgcn"``, or
``"hetero"`` over any layer) turns the training graph into entity vectors ``e_i`` (per node
type ``(N_t, D)``), and a DistMult decoder per relation scores a triple

.. math:: f(s, r, o) = \sum_k e_{s,k}\, w_{r,k}\, e_{o,k}.

Training is :class:`~graphflow.linkpred.typed.TypedLinkFullBatch` (the encoder over the
whole training graph each epoch, every training edge against ``negatives`` tails drawn
within its destination type, binary cross-entropy). Evaluation is the filtered ranking
protocol of :mod:`graphflow.kge.evaluate`: each valid / test triple's tail is ranked against
every entity of the relation's destination type (its head: of the source type), the other
known true triples filtered out, ties realistic; MRR, MR and Hits@1/3/10 overall and per
relation.

Two graphs feed it:

* a typed graph with a typed link split (``tables`` or ``rdf`` + ``[[transform]] type =
  "link_split"``): the entities are every node of every type (named ``<type>:<id>``), the
  relations the split's target relations, the training triples the edges left in the
  message-passing graph, valid / test the held-out positives (:func:`typed_view`);
* the ``triples`` loader's graph (one node type ``entity``, a relation per predicate, the
  training triples as edges) and its :class:`~graphflow.kge.triples.KnowledgeGraph`.

:class:`EncoderScorer` gives the scoring contract (``score_t`` / ``score_h`` over every
entity, ``(B, E)``) from one evaluation's embeddings: the candidates of another type are
NaN, which the ranking neither counts above nor tied with the true entity.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import torch

from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.kge.triples import KnowledgeGraph
from graphflow.linkpred.decoders import DistMultDecoder
from graphflow.linkpred.held_out import TypedLinkSplit
from graphflow.linkpred.typed import TypedLinkModel

Relation = tuple[str, str, str]


@dataclass
class TypedKg:
    """A knowledge graph over a typed graph's nodes.

    :ivar kg: global entity ids (node types one after the other, in the graph's order).
    :ivar relations: the canonical relation of each relation index of ``kg``.
    :ivar offsets: the first global id of each node type.
    """

    kg: KnowledgeGraph
    relations: list[Relation]
    offsets: dict[str, int]

    def entity_types(self, ntypes: list[str]) -> torch.Tensor:
        """(E,) the node type index (in ``ntypes``) of every entity."""
        counts = [self._count(t, ntypes) for t in ntypes]
        return torch.repeat_interleave(torch.arange(len(ntypes)), torch.tensor(counts))

    def _count(self, t: str, ntypes: list[str]) -> int:
        i = ntypes.index(t)
        end = self.offsets[ntypes[i + 1]] if i + 1 < len(ntypes) else self.kg.num_entities
        return end - self.offsets[t]


def typed_view(data: GraphData) -> TypedKg:
    """The knowledge graph of ``data``: the ``triples`` loader's own, or one built from a
    typed link split (see the module docstring).

    :raises DataError: a typed graph without a link split (one line, with the fix).
    """
    g = data.graph
    kg = data.meta.get("kg")
    if isinstance(kg, KnowledgeGraph):
        if g.ntypes != ["entity"]:
            raise DataError(f"the triples graph {data.name!r} has node types {g.ntypes}; "
                            f"load it with the triples loader alone")
        rels = [("entity", str(r), "entity") for r in kg.relations]
        return TypedKg(kg, rels, {"entity": 0})
    split = data.links
    if not isinstance(split, TypedLinkSplit):
        raise DataError(f"kg_completion with an encoder needs the triples loader, or a typed "
                        f"graph with held-out edges; add [[transform]] type = \"link_split\" "
                        f"(target relations, val / test fractions) after the [load] of "
                        f"{data.name!r}")
    offsets, start, names = {}, 0, []
    for t in g.ntypes:  # over node types
        offsets[t] = start
        n = g.num_nodes(t)
        ids = data.typed_ids[t].to_arrow().to_numpy(zero_copy_only=False) \
            if data.typed_ids is not None and t in data.typed_ids else np.arange(n)
        names.append(np.char.add(f"{t}:", np.asarray(ids).astype(str)).astype(object))
        start += n
    rels = list(split.relations)
    parts: dict[str, list[torch.Tensor]] = {"train": [], "valid": [], "test": []}
    for i, rel in enumerate(rels):  # over target relations
        s, _, d = rel
        src, dst = g.edges(etype=rel)
        pairs = {"train": torch.stack([src, dst]).long(), "valid": split.rels[rel].val.pos,
                 "test": split.rels[rel].test.pos}
        for name, p in pairs.items():  # (2, P) ids within the types
            parts[name].append(torch.stack([p[0] + offsets[s], torch.full_like(p[0], i),
                                            p[1] + offsets[d]], 1))
    splits = {k: torch.cat(v) if v else torch.zeros(0, 3, dtype=torch.long)
              for k, v in parts.items()}
    for name in ("valid", "test"):
        if not len(splits[name]):
            raise DataError(f"link_split held out no {name} edges of {data.name!r}; raise its "
                            f"{'val' if name == 'valid' else 'test'} fraction")
    entities = np.concatenate(names) if names else np.zeros(0, dtype=object)
    labels = np.asarray([split.name(r) for r in rels], dtype=object)
    return TypedKg(KnowledgeGraph(entities=entities, relations=labels, splits=splits,
                                  name=data.name), rels, offsets)


class EncoderScorer:
    """``score_t`` / ``score_h`` over every entity from one evaluation's embeddings ``h``
    (per node type) and the model's DistMult decoders; candidates of the wrong type: NaN."""

    def __init__(self, model: TypedLinkModel, h: Mapping[str, torch.Tensor], view: TypedKg,
                 ntypes: list[str]):
        dim = next(iter(h.values())).shape[1]
        rows = [h[t].float() if t in h else torch.zeros(view._count(t, ntypes), dim)
                for t in ntypes]  # types no relation reaches have no vectors: never ranked
        self.h = torch.cat(rows)  # (E, D)
        self.weight = torch.stack([model.decoder(r).weight.detach().float()
                                   for r in view.relations])  # (R, D)
        index = {t: i for i, t in enumerate(ntypes)}
        self.src_type = torch.tensor([index[r[0]] for r in view.relations])  # (R,)
        self.dst_type = torch.tensor([index[r[2]] for r in view.relations])
        self.entity_type = view.entity_types(ntypes)  # (E,)

    def score_t(self, h: torch.Tensor, r: torch.Tensor) -> torch.Tensor:
        s = (self.h[h] * self.weight[r]) @ self.h.T  # (B, E)
        return s.masked_fill(self.entity_type[None, :] != self.dst_type[r][:, None],
                             float("nan"))

    def score_h(self, r: torch.Tensor, t: torch.Tensor) -> torch.Tensor:
        s = (self.h[t] * self.weight[r]) @ self.h.T  # (B, E)
        return s.masked_fill(self.entity_type[None, :] != self.src_type[r][:, None],
                             float("nan"))


def check_decoders(model: TypedLinkModel) -> None:
    """Every decoder is a DistMult (the one the filtered scorer reads)."""
    for d in model.decoders:
        if not isinstance(d, DistMultDecoder):
            raise ConfigError(f"kg_completion with an encoder scores with a DistMult decoder "
                              f"per relation, not {type(d).__name__}")
