"""The held-out pairs of a link prediction split, carried on :class:`~graphflow.graph.GraphData`.

The ``link_split`` transform removes the validation and test positives from the graph (the
message-passing graph the encoder sees) and stores them here with their fixed negatives, in
internal node ids, so that the ``link_prediction`` task, the exporters (``what = "links"``)
and any later stage read the same pairs.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch

SPLITS = ("val", "test")
Relation = tuple[str, str, str]


@dataclass
class HeldOutPairs:
    """One split's pairs: positives and negatives, int64 (2, P) and (2, Q) ``(src, dst)``."""

    pos: torch.Tensor
    neg: torch.Tensor

    @property
    def num_pos(self) -> int:
        return int(self.pos.shape[1])

    @property
    def num_neg(self) -> int:
        return int(self.neg.shape[1])

    def labelled(self) -> tuple[torch.Tensor, torch.Tensor]:
        """``(pairs, label)``: int64 (2, P + Q) positives then negatives, float32 (P + Q,) 1/0."""
        label = torch.cat([torch.ones(self.num_pos), torch.zeros(self.num_neg)])
        return torch.cat([self.pos, self.neg], dim=1), label


@dataclass
class LinkSplit:
    """Validation and test pairs of a link prediction split (internal node ids).

    :ivar val: / :ivar test: the held-out positives (no longer edges of the graph, in either
        direction when ``undirected``) and their fixed negatives (never edges of the full graph).
    :ivar undirected: whether pairs were held out as undirected pairs (both directions).
    :ivar source: where the split came from, for messages ("random, seed 0", a file name).
    """

    val: HeldOutPairs
    test: HeldOutPairs
    undirected: bool
    source: str = "random"

    def get(self, split: str) -> HeldOutPairs:
        return self.val if split == "val" else self.test

    def positives(self) -> torch.Tensor:
        """int64 (2, P_val + P_test): every held-out positive."""
        return torch.cat([self.val.pos, self.test.pos], dim=1)


@dataclass
class TypedLinkSplit:
    """A link prediction split of a typed graph: one :class:`LinkSplit` per target relation.

    Each relation's pairs are ``(src, dst)`` ids *within* the relation's source and destination
    node types; its negatives corrupt the tail (a destination of the relation's destination
    type). ``reverse[rel]`` is the relation whose edges ``(v, u)`` left the message-passing
    graph with each held-out ``(u, v)`` of ``rel`` (None: no reverse relation).

    :ivar rels: canonical relation ``(src_type, relation, dst_type)`` -> its split.
    :ivar reverse: canonical relation -> its reverse relation, or None.
    :ivar names: canonical relation -> the short name used in metric names and exports: the
        relation name when no other canonical relation shares it, else ``src:rel:dst``.
    """

    rels: dict[Relation, LinkSplit]
    reverse: dict[Relation, Relation | None]
    names: dict[Relation, str] = field(default_factory=dict)
    source: str = "random"

    undirected = False  # read by code written for LinkSplit: pairs are per relation

    @property
    def relations(self) -> list[Relation]:
        return list(self.rels)

    def name(self, rel: Relation) -> str:
        return self.names.get(rel) or ":".join(rel)


LINK_SPLITS = ("val", "test", "candidates")
"""The ``split`` names of the ``links`` artifact's rows (``candidates``: ``score_pairs``)."""


@dataclass
class ScoredLinks:
    """The ``links`` artifact: scored pairs in internal node ids.

    :ivar pairs: int64 (2, M) ``(src, dst)``.
    :ivar split: int8 (M,) index into :data:`LINK_SPLITS`.
    :ivar label: float32 (M,) 1 (edge), 0 (non-edge) or NaN (unknown: a candidate).
    :ivar score: float32 (M,) the decoder's raw score (higher: more likely an edge).
    :ivar relation: on a typed graph, int64 (M,) index into ``relations``; the pair's ids are
        then within the relation's source / destination types. None on a homogeneous graph.
    :ivar relations: the canonical relations ``relation`` indexes, and ``names`` their short
        names (:class:`TypedLinkSplit`).
    """

    pairs: torch.Tensor
    split: torch.Tensor
    label: torch.Tensor
    score: torch.Tensor
    relation: torch.Tensor | None = None
    relations: list[Relation] | None = None
    names: list[str] | None = None

    @property
    def num_pairs(self) -> int:
        return int(self.pairs.shape[1])
