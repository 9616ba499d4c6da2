"""Skip-gram with negative sampling (Mikolov et al. 2013) over walk tensors, with sparse updates.

Every node ``v`` has an input vector :math:`e_v` (the embedding) and an output vector
:math:`c_v`. For a positive pair ``(v, u)`` (``u`` within ``v``'s window in a walk) and noise
nodes :math:`n \\sim P_n` (see :mod:`graphflow.walks.negatives`), word2vec minimises

.. math::

    \\ell = -\\log \\sigma(e_v^\\top c_u) - \\sum_{k=1}^{K} \\log \\sigma(-e_v^\\top c_{n_k}).

**Blocked computation.** A walk of at most ``chunk`` nodes is one block, whose centers and
context are the walk itself; longer walks are cut into chunks of ``C`` centers, each seeing the
``C + 2w`` nodes around it (:func:`graphflow.walks.pairs.context_blocks`). A block's ``M`` noise
nodes are shared by its centers. Stacking the output vectors of the block's context (``S``
rows) and noise nodes (``M`` rows) into :math:`X` ((S + M), D), all its scores are one product

.. math::

    Z = E X^\\top \\in \\mathbb{R}^{C \\times (S + M)},

with :math:`E` (C, D) the centers' input vectors. Center ``i`` with :math:`P_i` positives weighs
each shared noise term by :math:`K P_i / M`, so that its expected negative gradient is
word2vec's (``K`` noise draws per positive pair). With the 0/1 pair mask :math:`A` (C, S), the
gradient with respect to the scores and the row gradients are

.. math::

    G = \\big[\\, A \\odot (\\sigma(Z_{:, :S}) - 1) \\;\\big|\\;
        \\tfrac{K P}{M} \\odot \\sigma(Z_{:, S:}) \\,\\big], \\qquad
    \\nabla E = G X, \\qquad \\nabla X = G^\\top E,

three batched matrix products ``(blocks, C, ·)`` per step: the pair work runs as BLAS instead
of one dot product per pair, and each node row is gathered once per block, not once per pair.

**Sparse updates.** Only the rows that occur in a batch change. Their gradients are summed
per row (``index_add_``) and applied with row-wise AdaGrad, the rule PyTorch-BigGraph uses for
the same blocked, shared-negative objective: one accumulator per row,

.. math::

    s_v \\leftarrow s_v + \\tfrac{1}{D} \\lVert g_v \\rVert^2, \\qquad
    \\theta_v \\leftarrow \\theta_v - \\eta_t \\, g_v / \\sqrt{s_v}.

There is no dense gradient of a table and no optimiser state beyond the ``(N,)``
accumulators. Plain word2vec SGD does not survive batching: a hub (or a shared noise node)
occurs hundreds of times in one batch, and the summed step overshoots and diverges, where
word2vec's one-pair-at-a-time updates would have corrected themselves; the accumulator
scales such rows down. The learning rate :math:`\\eta_t` decays linearly to
``lr * 1e-4`` over the whole run (word2vec's schedule).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from graphflow.walks.negatives import UnigramTable
from graphflow.walks.pairs import context_blocks, keep_probability, subsample

MIN_LR_FRACTION = 1e-4
"""The learning rate decays linearly from ``lr`` to ``lr * MIN_LR_FRACTION`` (word2vec)."""


@dataclass
class SkipGramSettings:
    """Hyper-parameters of :class:`SkipGram` (the ``skipgram`` task's options).

    :ivar dim: embedding width ``D``. :ivar window: largest context offset ``w``.
    :ivar negatives: ``K``, noise samples per positive pair.
    :ivar dynamic_window: draw each center's radius from ``1..w`` (word2vec) instead of ``w``.
    :ivar subsample: frequent-node subsampling threshold ``t`` (0 = off).
    :ivar chunk: centers per block ``C``; walks of at most ``chunk`` nodes are one block whose
        context is the walk itself (no padding columns), longer ones are cut.
    :ivar shared_negatives: noise nodes per block ``M`` (default ``K * (w + 1)``: as many
        distinct noise nodes per center as word2vec draws with a dynamic window on average).
    """

    dim: int = 128
    window: int = 10
    negatives: int = 5
    dynamic_window: bool = True
    subsample: float = 0.0
    chunk: int = 128
    shared_negatives: int | None = None

    def noise_per_block(self) -> int:
        if self.shared_negatives is not None:
            return self.shared_negatives
        return self.negatives * (self.window + 1)


class SkipGram:
    """The two embedding tables and the sparse update step.

    :param num_nodes: N. :param settings: hyper-parameters.
    :param frequency: float (N,) node frequencies for the noise table and subsampling
        (in-strengths; see :mod:`graphflow.walks.negatives`).
    :param device: where the tables live and training runs.
    :param generator: seeded ``torch.Generator`` on ``device``.
    """

    def __init__(self, num_nodes: int, settings: SkipGramSettings, frequency: torch.Tensor,
                 device: torch.device, generator: torch.Generator | None = None):
        self.settings = settings
        self.generator = generator
        self.device = device
        d = settings.dim
        # word2vec's initialisation: inputs U(-0.5/D, 0.5/D), outputs 0.
        init = torch.rand(num_nodes, d, generator=generator, device=device)
        self.emb = (init - 0.5) / d  # (N, D) input vectors: the embeddings
        self.ctx = torch.zeros(num_nodes, d, device=device)  # (N, D) output vectors
        freq = frequency.to(device=device, dtype=torch.float64)
        self.noise = UnigramTable(freq)
        total = float(freq.sum())
        self.keep = keep_probability(freq / total if total > 0 else freq, settings.subsample)
        self.s_emb = torch.zeros(num_nodes, device=device)  # (N,) AdaGrad accumulators
        self.s_ctx = torch.zeros(num_nodes, device=device)

    def step(self, walks: torch.Tensor, lr: float) -> tuple[torch.Tensor, torch.Tensor]:
        """One update from a batch of walks (int64 (B, L), ``-1`` padding).

        :returns: ``(summed loss, number of positive pairs)`` as 0-d tensors on the device
            (summed by the caller, so that a GPU run does not wait for them every step).
        """
        s = self.settings
        gen = self.generator
        if s.subsample > 0:
            walks = subsample(walks, self.keep, gen)
        radius = None
        if s.dynamic_window:
            radius = torch.randint(1, s.window + 1, walks.shape, generator=gen, device=self.device)
        blocks = context_blocks(walks, s.window, s.chunk, radius)
        g, c = blocks.centers.shape
        span = blocks.context.shape[1]
        m = s.noise_per_block()
        centers = blocks.centers.clamp(min=0).reshape(-1)  # (G*C,)
        noise = self.noise.sample(g * m, gen).view(g, m)  # (G, M)
        others = torch.cat([blocks.context.clamp(min=0), noise], 1).reshape(-1)  # (G*(S+M),)
        e = self.emb.index_select(0, centers).view(g, c, s.dim)  # (G, C, D)
        x = self.ctx.index_select(0, others).view(g, span + m, s.dim)  # (G, S+M, D) S = C+2w
        pos = blocks.positive.to(e.dtype)  # (G, C, S)
        n_pos = pos.sum(2, keepdim=True)  # (G, C, 1)
        weight_n = n_pos * (s.negatives / m)  # (G, C, 1) each shared noise term's weight
        score = torch.bmm(e, x.transpose(1, 2))  # (G, C, S+M)
        grad = torch.sigmoid_(score)  # in place: the scores are not needed any more
        sig_pos, sig_neg = grad[:, :, :span], grad[:, :, span:]
        # -log sigma(s) on pairs, -log(1 - sigma(s)) on noise (clamped: no log(0) on outliers)
        loss = -(torch.log(sig_pos.clamp(min=1e-12)) * pos).sum() \
            - (torch.log((1.0 - sig_neg).clamp_(min=1e-12)) * weight_n).sum()
        sig_pos.sub_(1.0).mul_(pos)  # d loss / d score = sigma(s) - 1 on positive pairs
        sig_neg.mul_(weight_n)  # and (K P / M) sigma(s) on noise
        grad_e = torch.bmm(grad, x).view(-1, s.dim)  # (G*C, D)
        grad_x = torch.bmm(grad.transpose(1, 2), e).view(-1, s.dim)  # (G*(S+M), D)
        _rowwise_adagrad(self.emb, self.s_emb, centers, grad_e, lr)
        _rowwise_adagrad(self.ctx, self.s_ctx, others, grad_x, lr)
        return loss.detach(), n_pos.sum()

    def embeddings(self) -> torch.Tensor:
        """float32 (N, D) input vectors, on the CPU."""
        return self.emb.detach().float().cpu()


def _rowwise_adagrad(param: torch.Tensor, state: torch.Tensor, index: torch.Tensor,
                     grad: torch.Tensor, lr: float, eps: float = 1e-10) -> None:
    """Row-wise AdaGrad on the rows ``index`` (int64 (R,), repeats summed) of ``param`` (N, D).

    :param state: float (N,) accumulated mean squared row gradients.
    :param grad: float (R, D) one gradient row per entry of ``index``.
    """
    rows, inverse = torch.unique(index, return_inverse=True)  # (U,)
    g = torch.zeros(rows.numel(), param.shape[1], dtype=param.dtype, device=param.device)
    g.index_add_(0, inverse, grad)  # (U, D) summed per row
    acc = state.index_select(0, rows) + (g * g).mean(1)  # (U,)
    state.index_copy_(0, rows, acc)
    param.index_add_(0, rows, g / (acc.sqrt() + eps)[:, None], alpha=-lr)


def linear_lr(lr: float, done: int, total: int) -> float:
    """word2vec's schedule: ``lr`` decays linearly to ``lr * MIN_LR_FRACTION`` at ``total``."""
    frac = min(done / max(total, 1), 1.0)
    return max(lr * (1.0 - frac), lr * MIN_LR_FRACTION)
