"""Skip-gram with negative sampling (Mikolov et al. 2013) over walk tensors, with sparse updates.

Every node ``v`` has an input vector :math:`e_v` (the embedding) and an output vector
:math:`c_v`. For a positive pair ``(v, u)`` (``u`` within ``v``'s window in a walk) and noise
nodes :math:`n \\sim P_n` (see :mod:`graphflow.sampling.unigram`), word2vec minimises

.. math::

    \\ell = -\\log \\sigma(e_v^\\top c_u) - \\sum_{k=1}^{K} \\log \\sigma(-e_v^\\top c_{n_k}).

**Blocked computation.** A walk of at most ``chunk`` nodes is one block, whose centers and
context are the walk itself; longer walks are cut into chunks of ``C`` centers, each seeing the
``C + 2w`` nodes around it (:func:`graphflow.embeddings.context_pairs.context_blocks`). A block's ``M`` noise
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

**Sparse updates.** Only the rows that occur in a batch change: plain SGD, as word2vec does,
with the row gradients gathered by ``index_add_``, never a dense gradient of a table and no
optimiser state. One adaptation to batching: a row that occurs ``n_v`` times in a batch (a hub,
a popular noise node, a node a walk keeps returning to, every node of a small graph) sums up
to ``R`` = :data:`SUM_LIMIT` of its gradients and beyond that steps along ``R`` times their
mean,

.. math::

    \\theta_v \\leftarrow \\theta_v - \\frac{\\eta_t}{\\max(1, n_v / R)} \\sum_{o=1}^{n_v} g_{v,o}.

word2vec, updating one pair at a time, takes ``n_v`` small steps that correct each other as
the scores saturate; all of them at once from the same point (the plain sum) overshoots and
diverges where rows repeat a lot (Cora: 12% test accuracy), while the plain mean (``R = 1``)
trains rows that repeat too little in one epoch (a 20k-node SBM, p = 0.25: 73-74% against
77-78% for gensim on the same walks; ``R = 4``: 77%). Padding points at a dummy row, so it
never counts as an occurrence. Row-wise AdaGrad was stable but slower still to learn (72%).
The learning rate :math:`\\eta_t` decays linearly from ``lr`` to ``lr * 1e-4`` over the run
(word2vec's schedule).

**Hogwild workers** (``fit(..., workers=W)``, CPU). As word2vec and gensim do, ``W`` threads
train at once, each on its own contiguous share of the walks, updating the shared tables
without locks (Recht et al., "Hogwild!", 2011): torch's kernels release the GIL, and two
updates that hit the same row at the same moment may lose one of them, which SGD on sparse
rows tolerates. Each share has its own generator (seeded from one draw of the model's), and
its learning rate follows the global progress (``done + W * walks seen by this worker``).
Workers step from nearly the same point at once, so their steps on a row that occurs in every
step add up: on a 2k-node SBM where every row occurs in every batch two workers lost 8-10
points of accuracy (0.72-0.74 against 0.82-0.83 with one worker). Such graphs (fewer nodes
than one step's walk tokens) therefore train on one worker (:func:`hogwild_workers`), which
takes the cores of the workers it replaces as intra-op threads (:func:`hogwild_threads`).

The row cap holds across workers too. A hub (a node of degree 14k among 10k nodes, as in
social graphs) or a popular noise node occurs in every step of every worker, so with the cap
per worker alone ``W`` capped steps computed from the same point landed on it at once: ``W``
times the bound, and on a 10k-node R-MAT graph (334k edges) two workers diverged to NaN at
``lr = 0.03`` where one worker trained (loss 2.5); the 10k-node dense graph of
``benchmarks/node2vec.py`` diverged with two workers at 0.05. So each worker counts, beside
its own ``n_v`` occurrences of a row, the ``m_v`` that the other ``W - 1`` workers' steps are
expected to hold at the same time, and steps along its sum divided by
``max(1, (n_v + m_v) / R)`` (:func:`sparse_sgd`): the concurrent steps on a row add up to at
most ``R`` times their mean, as one worker's do. ``m_v`` comes from the row's share of walk
tokens (in-strength) and of noise draws (:meth:`SkipGram.concurrent_occurrences`), so a row
seen rarely keeps its full step, and rows that repeat within one walk (p = 0.25 walks stepping
back) keep theirs too, where dividing the cap by ``W`` for every row under-trained them
(20k-node SBM of ``benchmarks/node2vec.py``, two workers: macro-F1 0.770 and 0.770 with
``SUM_LIMIT / 2``, 0.778 and 0.776 with ``SUM_LIMIT``; gensim 0.779).
With ``W = 1`` a seed gives the same tables on every run; with ``W > 1`` each worker's walks,
windows and noise are still fixed by the seed, but the order in which the threads' row updates
interleave is not, so the tables differ slightly from run to run (removednode2vec.md
measures the accuracy spread).

Noise nodes are shared per block, ``M = 2 K (w + 1)`` by default: twice as many distinct
noise rows per center as word2vec draws on average (``K`` per pair, about ``w + 1`` pairs per
center with a dynamic window). Fewer shared rows cost accuracy on the SBM above (``K (w+1)``:
-0.6 points), more cost time (the products grow with ``S + M``).
"""

from __future__ import annotations

import threading
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

import torch

from graphflow.runtime.signals import join_threads
from graphflow.walks.csr import WalkGraph
from graphflow.embeddings.smoothed_start import smoothed
from graphflow.sampling.unigram import UnigramTable
from graphflow.embeddings.context_pairs import context_blocks, keep_probability, subsample

AfterStep = Callable[[int, int, torch.Tensor, torch.Tensor], None]
"""``after_step(steps trained, done, summed loss, positive pairs)`` of :meth:`SkipGram.fit`."""

NOISE_FACTOR = 2
"""Default noise nodes per block: ``NOISE_FACTOR * K * (w + 1)`` (see :class:`SkipGramSettings`)."""

SUM_LIMIT = 4
"""A row's gradients within one batch add up to this many; beyond, ``SUM_LIMIT`` x their mean."""

DEFAULT_LR = 0.025
"""The ``skipgram`` task's initial learning rate: word2vec's 0.025. A higher 0.03 did a little
better on the 20k-node SBM of ``benchmarks/node2vec.py``, where p = 0.25 walks keep stepping
back and the row cap (:data:`SUM_LIMIT`) shortens the steps of repeated rows, but lost on Cora
and CiteSeer (``benchmarks/defaults.py``: 0.03 - 0.025 = -0.64 +- 0.19 and -0.87 +- 0.33
points of test accuracy, 11 losses in 15 paired cells each, 1, 2 and 4 workers, native and
AVX2-capped, three training seeds), where CiteSeer's loss per pair also climbed with the rate
(2 workers: 1.47 at 0.025, 1.59 at 0.03, 2.52 at 0.035). On the graphs that played no part in
this choice the two rates tie within a training seed's spread, and no cell stopped on a
non-finite value (docs/node2vec.md, "Defaults checked on other graphs")."""

INIT_HOPS = 4
"""Default transition steps of the input vectors' graph-smoothed start (0: word2vec's random
start; see :mod:`graphflow.embeddings.smoothed_start`): four, as FastRP's default powers 1-4.
Against the random start it gained most on weakly clustered graphs (``benchmarks/defaults.py``:
+10.6 points of macro-F1 on a 3k-node dense multi-label graph, +4.6 at 30k nodes) and lost
nothing beyond the seed spread on Cora, CiteSeer, karate, a power-law and a weighted graph
(docs/node2vec.md)."""

STEP_WALKS = {"cpu": 64, "cuda": 512}
"""Default walks per update, by device type. 64 on the CPU (a block's rows stay in cache). On a
GPU larger steps mean fewer kernels, but every row's summed step is capped (:data:`SUM_LIMIT`),
so a step of many walks trains each frequent row less. The GPU's 512 was chosen on Cora
(``examples/cora_node2vec.toml``, which plays no part in ``benchmarks/node2vec.py``; seeds
0 / 1, test accuracy):
0.720 / 0.726 with 64 walks, 0.768 / 0.759 with 512, 0.677 / 0.670 with 2048. The 20k-node SBM
of ``benchmarks/node2vec.py`` reports it (docs/node2vec.md, "On a GPU")."""

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
    :ivar shared_negatives: noise nodes per block ``M`` (default ``2 K (w + 1)``: twice as
        many distinct noise nodes per center as word2vec draws with a dynamic window).
    :ivar precision: dtype of the three batched products (tables, accumulators and the
        sigmoid stay float32): ``auto`` takes bfloat16 where the device multiplies it natively
        (CPUs with AVX512-BF16 / AMX, CUDA GPUs with bf16 support), else float32.
    :ivar init_hops: ``h``: the input vectors start as word2vec's random ones averaged over
        ``h`` steps of the walk graph's transition matrix (:mod:`graphflow.embeddings.smoothed_start`); 0
        keeps word2vec's random start.
    """

    dim: int = 128
    window: int = 10
    negatives: int = 5
    dynamic_window: bool = True
    subsample: float = 0.0
    chunk: int = 128
    shared_negatives: int | None = None
    precision: Literal["auto", "float32", "bfloat16"] = "auto"
    init_hops: int = INIT_HOPS

    def noise_per_block(self) -> int:
        if self.shared_negatives is not None:
            return self.shared_negatives
        return NOISE_FACTOR * self.negatives * (self.window + 1)


class SkipGram:
    """The two embedding tables and the sparse SGD step.

    :param num_nodes: N. :param settings: hyper-parameters.
    :param frequency: float (N,) node frequencies for the noise table and subsampling
        (in-strengths; see :mod:`graphflow.sampling.unigram`).
    :param device: where the tables live and training runs.
    :param generator: seeded ``torch.Generator`` on ``device``.
    :param graph: the walk graph, needed when ``settings.init_hops > 0`` (the input vectors
        then start graph-smoothed, :func:`graphflow.embeddings.smoothed_start.smoothed`).
    """

    def __init__(self, num_nodes: int, settings: SkipGramSettings, frequency: torch.Tensor,
                 device: torch.device, generator: torch.Generator | None = None,
                 graph: WalkGraph | None = None):
        self.settings = settings
        self.generator = generator
        self.device = device
        d = settings.dim
        # word2vec's initialisation: inputs U(-0.5/D, 0.5/D) (then graph-smoothed, below),
        # outputs 0. Row N is a dummy that padding points at: its gradients are 0 and it never
        # dilutes a real row's mean.
        self.num_nodes = num_nodes
        init = torch.rand(num_nodes + 1, d, generator=generator, device=device)
        self.emb = (init - 0.5) / d  # (N + 1, D) input vectors: the embeddings
        if settings.init_hops > 0:
            if graph is None:
                raise ValueError(f"init_hops = {settings.init_hops} needs the walk graph")
            self.emb[:num_nodes] = smoothed(self.emb[:num_nodes], graph, settings.init_hops)
        self.out_emb = torch.zeros(num_nodes + 1, d, device=device)  # (N + 1, D) output vectors
        freq = frequency.to(device=device, dtype=torch.float64)
        self.noise = UnigramTable(freq)
        total = float(freq.sum())
        self.keep = keep_probability(freq / total if total > 0 else freq, settings.subsample)
        # Each row's share of walk tokens (the walks' stationary visits go as in-strength)
        # and of noise draws (strength^0.75), padding row 0: what another Hogwild worker's
        # step is expected to hold of it (concurrent_occurrences).
        noise = freq.clamp(min=0) ** 0.75
        pad = torch.zeros(1, dtype=torch.float64, device=device)
        self.token_share = torch.cat([freq / total if total > 0 else freq, pad]).float()
        self.noise_share = torch.cat([noise / noise.sum().clamp(min=1e-300), pad]).float()
        self.matmul_dtype = matmul_dtype(settings.precision, device)

    def step(self, walks: torch.Tensor, lr: float, generator: torch.Generator | None = None,
             sum_limit: float = SUM_LIMIT,
             concurrent: tuple[torch.Tensor, torch.Tensor] | None = None
             ) -> tuple[torch.Tensor, torch.Tensor]:
        """One update from a batch of walks (int64 (B, L), ``-1`` padding).

        :param generator: random source of this step (default: the model's); a Hogwild
            worker passes its own.
        :param sum_limit: a row's gradients add up to this many (see :func:`sparse_sgd`).
        :param concurrent: float (N + 1,) occurrences of each input / output row expected in
            the other Hogwild workers' steps at the same time (:meth:`concurrent_occurrences`);
            they count towards the cap.
        :returns: ``(summed loss, number of positive pairs)`` as 0-d tensors on the device
            (summed by the caller, so that a GPU run does not wait for them every step).
        """
        s = self.settings
        gen = generator if generator is not None else self.generator
        if s.subsample > 0:
            walks = subsample(walks, self.keep, gen)
        radius = None
        if s.dynamic_window:
            radius = torch.randint(1, s.window + 1, walks.shape, generator=gen, device=self.device)
        blocks = context_blocks(walks, s.window, s.chunk, radius)
        g, c = blocks.centers.shape
        span = blocks.context.shape[1]
        m = s.noise_per_block()
        pad = self.num_nodes  # the dummy row
        centers = blocks.centers.masked_fill(blocks.centers < 0, pad).reshape(-1)  # (G*C,)
        noise = self.noise.sample(g * m, gen).view(g, m)  # (G, M)
        context = blocks.context.masked_fill(blocks.context < 0, pad)
        others = torch.cat([context, noise], 1).reshape(-1)  # (G*(S+M),)
        mm = self.matmul_dtype  # products in bfloat16 where the hardware has it; rest float32
        e = self.emb.index_select(0, centers).view(g, c, s.dim).to(mm)  # (G, C, D)
        x = self.out_emb.index_select(0, others).view(g, span + m, s.dim).to(mm)  # (G, S+M, D)
        pos = blocks.positive.to(self.emb.dtype)  # (G, C, S)
        n_pos = pos.sum(2, keepdim=True)  # (G, C, 1)
        weight_n = n_pos * (s.negatives / m)  # (G, C, 1) each shared noise term's weight
        score = torch.bmm(e, x.transpose(1, 2)).float()  # (G, C, S+M)
        grad = torch.sigmoid_(score)  # in place: the scores are not needed any more
        sig_pos, sig_neg = grad[:, :, :span], grad[:, :, span:]
        # -log sigma(s) on pairs, -log(1 - sigma(s)) on noise (clamped: no log(0) on outliers)
        loss = -(torch.log(sig_pos.clamp(min=1e-12)) * pos).sum() \
            - (torch.log((1.0 - sig_neg).clamp_(min=1e-12)) * weight_n).sum()
        sig_pos.sub_(1.0).mul_(pos)  # d loss / d score = sigma(s) - 1 on positive pairs
        sig_neg.mul_(weight_n)  # and (K P / M) sigma(s) on noise
        grad = grad.to(mm)
        grad_e = torch.bmm(grad, x).view(-1, s.dim).float()  # (G*C, D)
        grad_x = torch.bmm(grad.transpose(1, 2), e).view(-1, s.dim).float()  # (G*(S+M), D)
        busy_e, busy_x = concurrent if concurrent is not None else (None, None)
        sparse_sgd(self.emb, centers, grad_e, lr, sum_limit, busy_e)
        sparse_sgd(self.out_emb, others, grad_x, lr, sum_limit, busy_x)
        return loss.detach(), n_pos.sum()

    def fit(self, walks: torch.Tensor, lr: float, done: int, total: int,
            step_walks: int, workers: int = 1, worker_threads: int = 1,
            stop: Callable[[], object] | None = None, *, start: int = 0,
            after_step: AfterStep | None = None) -> tuple[torch.Tensor, torch.Tensor, int]:
        """Train on ``walks`` (int64 (B, L)) ``step_walks`` at a time, the learning rate
        decaying with :func:`linear_lr` over ``total`` walks, of which ``done`` came before.

        With ``workers`` > 1 (CPU), the walks are cut into ``workers`` contiguous parts, each
        trained by its own thread (see "Hogwild workers" in the module docstring), each
        thread with ``worker_threads`` intra-op threads. The threads have ended when this
        returns or raises (also on a signal's ``Terminated``).

        :param stop: asked before every step (by every worker); a true value ends training
            of ``walks`` there (e.g. :func:`graphflow.runtime.signals.pending`: a safe point per step).
        :param start: one trainer: the steps (chunks of ``step_walks`` walks) of ``walks``
            trained already, skipped (a walk batch resumed part-way; ``done`` counts them).
        :param after_step: one trainer: called after each step with ``(steps trained, done,
            summed loss, positive pairs)`` (the sums over this call's steps): a point where the
            tables and the model's generator are exactly what the next step starts from, to
            save them (checkpoints). Hogwild workers never call it.
        :returns: ``(summed loss, positive pairs, done + walks trained)``; the sums as 0-d
            device tensors.
        """
        if workers > 1 and self.device.type == "cpu" and walks.shape[0] > step_walks \
                and start == 0:
            return self._fit_hogwild(walks, lr, done, total, step_walks, workers,
                                     worker_threads, stop)
        loss_sum = torch.zeros((), dtype=torch.float64, device=self.device)
        pairs = torch.zeros((), dtype=torch.float64, device=self.device)
        for i, chunk in enumerate(walks.split(step_walks)):
            if i < start:
                continue
            if stop is not None and stop():
                break
            step_loss, step_pairs = self.step(chunk, linear_lr(lr, done, total))
            loss_sum += step_loss
            pairs += step_pairs
            done += chunk.shape[0]
            if after_step is not None:
                after_step(i + 1, done, loss_sum, pairs)
        return loss_sum, pairs, done

    def _fit_hogwild(self, walks: torch.Tensor, lr: float, done: int, total: int,
                     step_walks: int, workers: int, worker_threads: int,
                     stop: Callable[[], object] | None) -> tuple[torch.Tensor, torch.Tensor, int]:
        """:meth:`fit` on ``workers`` threads sharing the tables without locks."""
        parts = walks.tensor_split(workers)  # contiguous (B_w, L) parts
        # One generator per part, seeded from one draw of the model's: the noise and windows
        # of a part do not depend on thread timing.
        seeds = torch.randint(2**62, (workers,), generator=self.generator,
                              device=self.device).tolist()
        results: list[tuple[torch.Tensor, torch.Tensor] | BaseException | None] = \
            [None] * workers
        tokens = float((walks >= 0).sum()) / walks.shape[0] * step_walks  # per step
        concurrent = self.concurrent_occurrences(tokens, walks.shape[1], step_walks,
                                                 workers - 1)

        def work(w: int) -> None:
            try:
                torch.set_num_threads(worker_threads)  # this OS thread only
                gen = torch.Generator(device=self.device).manual_seed(seeds[w])
                loss_sum = torch.zeros((), dtype=torch.float64)
                pairs = torch.zeros((), dtype=torch.float64)
                seen = 0
                for chunk in parts[w].split(step_walks):
                    if halt.is_set() or (stop is not None and stop()):
                        break
                    # Global progress, as the workers advance side by side (word2vec's decay).
                    rate = linear_lr(lr, done + seen * workers, total)
                    step_loss, step_pairs = self.step(chunk, rate, gen, SUM_LIMIT, concurrent)
                    loss_sum += step_loss
                    pairs += step_pairs
                    seen += chunk.shape[0]
                results[w] = (loss_sum, pairs)
            except BaseException as exc:  # raised in the caller below
                results[w] = exc

        halt = threading.Event()  # the caller is leaving (an exception, a signal): stop now
        threads = [threading.Thread(target=work, args=(w,), daemon=True,
                                    name=f"graphflow-skipgram-{w}") for w in range(workers)]
        try:
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        finally:  # a thread left inside a torch kernel at exit aborts the process
            halt.set()
            join_threads([t for t in threads if t.ident is not None])
        loss_sum = torch.zeros((), dtype=torch.float64)
        pairs = torch.zeros((), dtype=torch.float64)
        for result in results:
            if isinstance(result, BaseException):
                raise result
            assert result is not None
            loss_sum += result[0]
            pairs += result[1]
        return loss_sum, pairs, done + walks.shape[0]

    def concurrent_occurrences(self, tokens: float, length: int, step_walks: int,
                               others: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Occurrences of each row expected in ``others`` other workers' concurrent steps of
        ``step_walks`` walks of at most ``length`` nodes holding ``tokens`` nodes: as a
        center (input table) ``tokens * share``; as context and noise (output table) the
        context columns' ``tokens (1 + 2w / C)`` (``tokens`` when a walk is one block) times
        ``share`` plus ``blocks * M`` noise draws times the noise share.

        :returns: float (N + 1,) for the input table and for the output table.
        """
        s = self.settings
        blocks = step_walks * -(-length // s.chunk)
        context = tokens if length <= s.chunk else tokens * (1 + 2 * s.window / s.chunk)
        busy_e = self.token_share * (others * tokens)  # (N + 1,)
        busy_x = self.token_share * (others * context) \
            + self.noise_share * (others * blocks * s.noise_per_block())  # (N + 1,)
        return busy_e, busy_x

    def embeddings(self, readout: Readout = "input") -> torch.Tensor:
        """float32 (N, D) node vectors on the CPU: the input vectors (``"input"``, word2vec's
        and gensim's ``wv``), or the input plus the output vectors (``"sum"``, ``w + c``:
        Levy, Goldberg & Dagan 2015; GloVe's readout)."""
        if readout not in READOUTS:
            raise ValueError(f"readout = {readout!r}: must be one of {', '.join(READOUTS)}")
        emb = self.emb[: self.num_nodes].detach()
        if readout == "sum":
            emb = emb + self.out_emb[: self.num_nodes].detach()
        return emb.float().cpu().clone()


Readout = Literal["input", "sum"]
"""What :meth:`SkipGram.embeddings` returns: the input vectors, or input plus output."""
READOUTS: tuple[str, ...] = typing.get_args(Readout)


def bf16_matmul_supported(device: torch.device) -> bool:
    """Whether ``device`` multiplies bfloat16 matrices natively (not by emulation)."""
    if device.type == "cuda":
        return torch.cuda.is_bf16_supported()
    if device.type == "cpu":
        try:
            return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
        except (AttributeError, RuntimeError):
            return False
    return False


def matmul_dtype(precision: str, device: torch.device) -> torch.dtype:
    """The dtype of the skip-gram products for a ``precision`` setting on ``device``."""
    if precision == "float32":
        return torch.float32
    if precision == "bfloat16":
        return torch.bfloat16
    if precision == "auto":
        return torch.bfloat16 if bf16_matmul_supported(device) else torch.float32
    raise ValueError(f"precision must be 'auto', 'float32' or 'bfloat16', got {precision!r}")


def sparse_sgd(param: torch.Tensor, index: torch.Tensor, grad: torch.Tensor, lr: float,
               sum_limit: float = SUM_LIMIT, concurrent: torch.Tensor | None = None) -> None:
    """SGD on the rows ``index`` of ``param`` (N, D) (see "Sparse updates" above).

    A row with ``n`` gradients steps along their sum divided by ``max(1, n / sum_limit)``,
    or, with ``concurrent`` (Hogwild workers), by ``max(1, (n + m) / sum_limit)`` where ``m``
    is the row's expected occurrences in the other workers' steps at the same time, so that
    the steps that land on a row at once add up to at most ``sum_limit`` times their mean.

    :param index: int64 (R,) row of each gradient (repeats allowed).
    :param grad: float (R, D) one gradient row per entry of ``index``.
    :param concurrent: float (N,) ``m`` per row of ``param``, or None (one worker).
    """
    rows, inverse, counts = torch.unique(index, return_inverse=True, return_counts=True)  # (U,)
    g = torch.zeros(rows.numel(), param.shape[1], dtype=param.dtype, device=param.device)
    g.index_add_(0, inverse, grad)  # (U, D) summed per row
    load = counts.to(g.dtype)  # (U,)
    if concurrent is not None:
        load = load + concurrent.index_select(0, rows)
    scale = (load / sum_limit).clamp_(min=1.0)  # (U,)
    param.index_add_(0, rows, g / scale[:, None], alpha=-lr)


def default_step_walks(device: torch.device) -> int:
    """Walks per update when the task sets none: :data:`STEP_WALKS` of the device type."""
    return STEP_WALKS.get(device.type, STEP_WALKS["cuda"])


def hogwild_workers(planned: int, num_nodes: int, step_tokens: int, *,
                    forced: bool = False) -> int:
    """The Hogwild workers to train with: ``planned`` (the core plan's), except one when the
    graph has fewer nodes than one step's walk tokens (every row occurs in every step, and
    the workers' steps would pile up on it; see "Hogwild workers" above) unless ``forced``."""
    if planned > 1 and not forced and num_nodes < step_tokens:
        return 1
    return max(1, planned)


def hogwild_threads(planned: int, worker_threads: int, workers: int, *,
                    forced: bool = False) -> int:
    """Intra-op threads per worker when ``workers`` train where the core plan gave
    ``planned`` workers of ``worker_threads`` each: the plan's, or, with fewer workers, the
    dropped workers' cores shared among those left (a plan of 2 workers x 1 thread that
    trains on one worker runs it on 2 threads, not on half the cores). ``forced`` (a thread
    count the user set) keeps ``worker_threads``."""
    if forced or workers >= planned:
        return worker_threads
    return max(worker_threads, planned * worker_threads // max(1, workers))


def hogwild_split(planned: int, worker_threads: int, device: torch.device, num_nodes: int,
                  step_tokens: int, *, forced_workers: bool = False,
                  forced_threads: bool = False) -> tuple[int, int]:
    """``(workers, intra-op threads each)`` that train, from a core plan's ``planned``
    workers of ``worker_threads`` each: one worker on a GPU, :func:`hogwild_workers` and
    :func:`hogwild_threads` on the CPU."""
    planned = planned if device.type == "cpu" else 1  # a GPU trains one worker
    workers = hogwild_workers(planned, num_nodes, step_tokens, forced=forced_workers)
    return workers, hogwild_threads(planned, worker_threads, workers, forced=forced_threads)


def linear_lr(lr: float, done: int, total: int) -> float:
    """word2vec's schedule: ``lr`` decays linearly to ``lr * MIN_LR_FRACTION`` at ``total``."""
    frac = min(done / max(total, 1), 1.0)
    return max(lr * (1.0 - frac), lr * MIN_LR_FRACTION)
