"""Skip-gram's pairs, learning rate and noise against gensim's definitions (word2vec_inner.pyx,
word2vec.py), written out in plain Python on tiny inputs: what the quality comparison with
gensim in benchmarks/node2vec.py takes as equal on both sides."""

from __future__ import annotations

import random

import pytest
import torch

from graphflow.embeddings.context_pairs import context_blocks, context_pairs
from graphflow.embeddings.skipgram import DEFAULT_LR, linear_lr
from graphflow.sampling.unigram import UnigramTable


def gensim_sg_pairs(sentence: list[int], window: int, reduced: list[int]) -> list[tuple[int, int]]:
    """gensim's ``train_batch_sg`` loop: position ``i`` pairs with ``j`` in
    ``[i - window + b_i, i + window + 1 - b_i)`` inside the sentence, ``j != i``, where
    ``b_i = reduced_windows[i]`` is drawn uniformly from ``0..window - 1``. Returned as
    ``(sentence[i], sentence[j])``: the word whose window it is, then the other."""
    pairs = []
    for i in range(len(sentence)):
        lo = max(0, i - window + reduced[i])
        hi = min(len(sentence), i + window + 1 - reduced[i])
        pairs += [(sentence[i], sentence[j]) for j in range(lo, hi) if j != i]
    return pairs


@pytest.mark.parametrize("chunk", [128, 4])  # one block per walk, and walks cut into chunks
def test_dynamic_window_pairs_are_gensims_reduced_windows(chunk):
    rng = random.Random(0)
    window = 3
    lengths = [9, 6, 2, 1, 9]  # shorter walks end in padding (-1), as a walker that stopped
    walks = torch.full((len(lengths), 9), -1, dtype=torch.long)
    reduced = torch.zeros(walks.shape, dtype=torch.long)
    expected = []
    for b, n in enumerate(lengths):
        sentence = [rng.randrange(20) for _ in range(n)]
        draws = [rng.randrange(window) for _ in range(9)]  # gensim: randint(0, window)
        walks[b, :n] = torch.tensor(sentence)
        reduced[b] = torch.tensor(draws)
        expected += gensim_sg_pairs(sentence, window, draws[:n])
    radius = window - reduced  # graphflow's draw: 1..window, uniform, as window - b
    center, context = context_pairs(walks, window, radius)
    assert sorted(zip(center.tolist(), context.tolist())) == sorted(expected)
    blocks = context_blocks(walks, window, chunk, radius)  # what training multiplies
    g, c, s = blocks.positive.nonzero(as_tuple=True)
    blocked = zip(blocks.centers[g, c].tolist(), blocks.context[g, s].tolist())
    assert sorted(blocked) == sorted(expected)


def test_learning_rate_follows_gensims_linear_decay():
    """gensim: ``alpha - (alpha - min_alpha) * progress`` with ``min_alpha = 1e-4``; graphflow
    decays to ``lr * 1e-4`` instead, within ``min_alpha`` of gensim's rate all along."""
    alpha, min_alpha, total = DEFAULT_LR, 1e-4, 1000
    for done in range(0, total + 1, 50):
        gensim = alpha - (alpha - min_alpha) * done / total
        assert abs(linear_lr(alpha, done, total) - gensim) <= min_alpha
    assert linear_lr(alpha, 0, total) == alpha


def test_noise_is_the_unigram_distribution_to_the_three_quarters():
    """gensim's ``make_cum_table``: P(v) = count_v^0.75 / sum count^0.75."""
    counts = torch.tensor([1.0, 10.0, 100.0, 0.0, 1000.0])
    draws = UnigramTable(counts).sample(400_000, torch.Generator().manual_seed(0))
    freq = torch.bincount(draws, minlength=5).double() / draws.numel()
    expected = counts.double() ** 0.75 / (counts.double() ** 0.75).sum()
    assert torch.allclose(freq, expected, atol=3e-3)
    assert int(freq[3] * draws.numel()) == 0  # a node never seen is never noise
