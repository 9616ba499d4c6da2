"""Training a :class:`~graphflow.kge.models.KgeModel`: negatives, losses, 1-N scoring.

One epoch (:class:`KgePass`, the pass protocol of :mod:`graphflow.train.step`) shuffles the
training triples (with their inverses under ``reciprocal``) and steps through batches of
``batch_size``, each vectorised:

* ``scoring = "negatives"``: every triple gets ``negatives`` corruptions of its head or tail;
  which side is corrupted is drawn per triple, ``corrupt = "uniform"`` (one half each) or
  ``"bernoulli"`` (Wang et al. 2014: the head with probability ``tph / (tph + hpt)`` of its
  relation). Under ``reciprocal`` only tails are corrupted (the inverse triples stand for
  the heads). ``shared_negatives``: the batch shares one draw of candidates, scored with
  one matrix product per side (as DGL-KE's chunked negatives); otherwise each triple has
  its own.
* ``scoring = "1-n"``: every entity is a candidate (ConvE's 1-N); the tail side, and the
  head side unless ``reciprocal``.

Losses of a positive score ``s`` and negative scores ``n_j``, weights ``w_j`` (uniform, or
with ``adversarial_temperature`` α > 0 the self-adversarial ``softmax(α n)`` of Sun et al.
2019, held constant):

* ``margin``: ``Σ_j w_j max(0, margin - s + n_j)``;
* ``softplus``: ``(softplus(-s) + Σ_j w_j softplus(n_j)) / 2`` (the RotatE code's loss);
* ``bce``: binary cross-entropy of every score against its label (1-N: the known training
  tails of the row, with ``label_smoothing``);
* ``ce``: cross-entropy of the positive against its negatives (1-N: against every entity).

``regularizer``: ``"l2"`` or ``"n3"`` (Lacroix et al. 2018) on the embedding rows the batch
used, times ``reg_weight``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch
import torch.nn.functional as F

from graphflow.kge.evaluate import Filter
from graphflow.kge.models import KgeModel
from graphflow.train.step import Step

Scoring = Literal["negatives", "1-n"]
Corrupt = Literal["uniform", "bernoulli"]
KgeLoss = Literal["margin", "softplus", "bce", "ce"]
Regularizer = Literal["none", "l2", "n3"]


@dataclass
class TrainSettings:
    batch_size: int = 1000
    scoring: Scoring = "negatives"
    negatives: int = 64
    shared_negatives: bool = False
    corrupt: Corrupt = "uniform"
    loss: KgeLoss = "softplus"
    margin: float = 1.0
    adversarial_temperature: float = 0.0
    label_smoothing: float = 0.0
    regularizer: Regularizer = "none"
    reg_weight: float = 0.0


def head_probability(triples: torch.Tensor, num_relations: int) -> torch.Tensor:
    """Per relation, Bernoulli's probability of corrupting the head: ``tph / (tph + hpt)``
    (tails per head, heads per tail: averages over the relation's distinct heads / tails)."""
    r = triples[:, 1]
    count = torch.bincount(r, minlength=num_relations).double()
    heads = torch.unique(triples[:, :2], dim=0)[:, 1]  # one row per distinct (h, r)
    tails = torch.unique(triples[:, 1:], dim=0)[:, 0]  # one row per distinct (r, t)
    tph = count / torch.bincount(heads, minlength=num_relations).clamp(min=1)
    hpt = count / torch.bincount(tails, minlength=num_relations).clamp(min=1)
    return torch.where(count > 0, tph / (tph + hpt), torch.full_like(count, 0.5))


def negative_loss(pos: torch.Tensor, neg: torch.Tensor, s: TrainSettings) -> torch.Tensor:
    """The loss of ``pos`` (B,) against ``neg`` (B, k) (see the module docstring)."""
    pos, neg = pos.float(), neg.float()
    if s.loss == "ce":
        logits = torch.cat([pos[:, None], neg], 1)
        return F.cross_entropy(logits, torch.zeros(len(pos), dtype=torch.long))
    if s.adversarial_temperature > 0:
        w = torch.softmax(s.adversarial_temperature * neg, 1).detach()
    else:
        w = torch.full_like(neg, 1.0 / neg.shape[1])
    if s.loss == "margin":
        return (w * F.relu(s.margin - pos[:, None] + neg)).sum(1).mean()
    if s.loss == "softplus":
        return ((F.softplus(-pos) + (w * F.softplus(neg)).sum(1)) / 2).mean()
    # bce: every score against its label, negatives weighted to the positive's mass
    return (F.softplus(-pos) + neg.shape[1] * (w * F.softplus(neg)).sum(1)).mean() / (
        1 + neg.shape[1])


def sparse_steps() -> torch.sparse.check_sparse_tensor_invariants:
    """A context for optimizer steps on sparse embedding gradients: torch's sparse-tensor
    invariant checks explicitly off (torch warns once when they are only implicitly off),
    and the process's setting restored on exit."""
    return torch.sparse.check_sparse_tensor_invariants(enable=False)


class KgePass:
    """One epoch of batches over the training triples (the pass protocol)."""

    def __init__(self, model: KgeModel, step: Step, triples: torch.Tensor,
                 settings: TrainSettings, generator: torch.Generator,
                 known_train: Filter | None = None):
        self.model, self.step, self.s, self.generator = model, step, settings, generator
        self.triples = model.triples_for_training(triples)
        self.num_entities = model.num_entities
        self.head_p = head_probability(self.triples, model.num_relations).float()
        self.known = known_train

    def train_epoch(self, epoch: int) -> dict[str, float]:
        order = torch.randperm(len(self.triples), generator=self.generator)
        total, n = 0.0, 0
        self.model.train()
        with sparse_steps():
            for start in range(0, len(order), self.s.batch_size):  # over batches
                batch = self.triples[order[start:start + self.s.batch_size]]
                loss, _ = self.step(lambda: (self.loss(batch), None))
                total += float(loss.detach()) * len(batch)
                n += len(batch)
        return {"loss": total / max(n, 1)}

    # -- one batch -------------------------------------------------------------------------
    def loss(self, batch: torch.Tensor) -> torch.Tensor:
        h, r, t = batch.unbind(1)
        loss = self._one_to_n(h, r, t) if self.s.scoring == "1-n" else self._sampled(h, r, t)
        if self.s.regularizer != "none" and self.s.reg_weight > 0:
            loss = loss + self.s.reg_weight * self._penalty(h, r, t)
        return loss

    def _penalty(self, h, r, t) -> torch.Tensor:
        m = self.model
        rows = [m.entity(h), m.relation(r), m.entity(t)]
        if self.s.regularizer == "n3":
            return sum(x.abs().pow(3).sum() for x in rows) / len(h)
        return sum(x.pow(2).sum() for x in rows) / len(h)

    def _draw(self, shape: tuple[int, ...]) -> torch.Tensor:
        return torch.randint(0, self.num_entities, shape, generator=self.generator)

    def _head_side(self, r: torch.Tensor) -> torch.Tensor:
        """Which triples have their head corrupted (B,) bool."""
        if self.model.reciprocal:
            return torch.zeros(len(r), dtype=torch.bool)
        p = self.head_p[r] if self.s.corrupt == "bernoulli" else torch.full((len(r),), 0.5)
        return torch.rand(len(r), generator=self.generator) < p

    def _sampled(self, h, r, t) -> torch.Tensor:
        m, k = self.model, self.s.negatives
        head = self._head_side(r)  # (B,)
        if not self.s.shared_negatives:
            pos, neg = m.score_negatives(h, r, t, self._draw((len(h), k)), head)  # (B,), (B, k)
            return negative_loss(pos, neg, self.s)
        pos = m.score_hrt(h, r, t)  # (B,)
        cand = self._draw((k,))  # one draw shared by the batch
        neg = torch.empty(len(h), k, dtype=pos.dtype)
        tail = ~head
        if tail.any():
            neg[tail] = m.score_t(h[tail], r[tail], cand).to(pos.dtype)
        if head.any():
            neg[head] = m.score_h(r[head], t[head], cand).to(pos.dtype)
        # a candidate equal to the true entity is not a negative: push it out of reach
        truth = torch.where(head, h, t)
        clash = cand[None, :] == truth[:, None]
        neg = neg.masked_fill(clash, -1e4) if clash.any() else neg
        return negative_loss(pos, neg, self.s)

    def _one_to_n(self, h, r, t) -> torch.Tensor:
        m = self.model
        sides = [(m.score_t(h, r), t, h, r, "tails")]
        if not m.reciprocal:
            sides.append((m.score_h(r, t), h, r, t, "heads"))
        losses = []
        for scores, target, a, b, side in sides:  # one or two sides
            if self.s.loss == "ce":
                losses.append(F.cross_entropy(scores.float(), target))
                continue
            labels = torch.zeros_like(scores, dtype=torch.float32)
            index = self.known.tails if side == "tails" else self.known.heads
            rows, cols = index.lookup(a, b)
            labels[rows, cols] = 1.0
            labels[torch.arange(len(target)), target] = 1.0
            if self.s.label_smoothing:
                labels = labels * (1 - self.s.label_smoothing) + 1.0 / scores.shape[1]
            losses.append(F.binary_cross_entropy_with_logits(scores.float(), labels))
        return sum(losses) / len(losses)


def make_optimizer(name: str, model: KgeModel, lr: float) -> torch.optim.Optimizer:
    """``adagrad`` (sparse gradients, as Lacroix et al.), ``sparse_adam`` (sparse
    gradients only) or ``adam`` (dense)."""
    if name == "adagrad":
        return torch.optim.Adagrad(model.parameters(), lr=lr)
    if name == "sparse_adam":
        return torch.optim.SparseAdam(list(model.parameters()), lr=lr)
    return torch.optim.Adam(model.parameters(), lr=lr)


OptimizerFactory = Callable[[str, KgeModel, float], torch.optim.Optimizer]
