"""Skip-gram: gradients equal autograd's, sparse updates, no pair across padding, learning."""

from __future__ import annotations

import pytest
import torch

from graphflow.walks.csr import from_edges
from graphflow.walks.node2vec import random_walks
from graphflow.embeddings.context_pairs import context_pairs
from graphflow.embeddings.skipgram import SUM_LIMIT, SkipGram, SkipGramSettings, linear_lr, sparse_sgd

CPU = torch.device("cpu")


def two_cliques(k=8):
    """Two k-cliques joined by one edge, plus two isolated nodes at the end."""
    idx = torch.arange(k)
    a, b = torch.meshgrid(idx, idx, indexing="ij")
    keep = a != b
    src = torch.cat([a[keep], a[keep] + k, torch.tensor([0, k])])
    dst = torch.cat([b[keep], b[keep] + k, torch.tensor([k, 0])])
    return from_edges(src, dst, 2 * k + 2)


def test_step_is_sparse_sgd_along_the_autograd_gradient():
    graph = two_cliques()
    settings = SkipGramSettings(dim=8, window=2, negatives=3, dynamic_window=False,
                                shared_negatives=4, precision="float32")
    gen = torch.Generator().manual_seed(0)
    model = SkipGram(graph.num_nodes, settings, graph.in_strength(), CPU, gen, graph=graph)
    model.out_emb.normal_(0, 0.3, generator=torch.Generator().manual_seed(1))  # non-zero outputs
    walks = torch.tensor([[0, 1, 2, 3, 1, -1], [9, 10, 11, 8, 0, 1]])
    emb0, out0 = model.emb.clone(), model.out_emb.clone()
    state = gen.get_state()
    lr = 0.01
    loss, pairs = model.step(walks, lr)

    # Reference: explicit per-center sums with autograd, drawing the same noise nodes.
    gen.set_state(state)
    noise = model.noise.sample(2 * 4, gen).view(2, 4)
    e = emb0.clone().requires_grad_(True)
    c = out0.clone().requires_grad_(True)
    ref = torch.zeros((), dtype=torch.float64)
    n_pairs = 0
    for b in range(2):
        row = walks[b]
        for i in range(6):
            if row[i] < 0:
                continue
            ctx_nodes = [row[j] for j in range(6) if 1 <= abs(i - j) <= 2 and row[j] >= 0]
            n_pairs += len(ctx_nodes)
            v = e[row[i]]
            for u in ctx_nodes:
                ref = ref - torch.nn.functional.logsigmoid(v @ c[u])
            for nn in noise[b]:
                ref = ref - 3 * len(ctx_nodes) / 4 * torch.nn.functional.logsigmoid(-(v @ c[nn]))
    ref.backward()
    assert int(pairs) == n_pairs
    assert float(loss) == pytest.approx(ref.item(), rel=1e-5)
    # Occurrences of each row in the step: centers and context positions (padding excluded),
    # and noise draws for the output table.
    n = graph.num_nodes
    valid = walks[walks >= 0]
    center_count = torch.bincount(valid, minlength=n).double()
    out_count = torch.bincount(torch.cat([valid, noise.reshape(-1)]), minlength=n).double()
    for table, before, grad, count in ((model.emb, emb0, e.grad, center_count),
                                       (model.out_emb, out0, c.grad, out_count)):
        step = -lr * grad[:n] / (count / SUM_LIMIT).clamp(min=1)[:, None]
        assert torch.allclose(table[:n] - before[:n], step.float(), atol=1e-6)
        touched = count > 0
        assert torch.equal(table[:n][~touched], before[:n][~touched])


def test_sparse_sgd_sums_a_few_repeats_and_averages_many():
    param = torch.zeros(3, 2)
    index = torch.tensor([0] * 8 + [1] * 2)  # row 0 eight times, row 1 twice, row 2 never
    grad = torch.arange(20, dtype=torch.float32).view(10, 2)
    sparse_sgd(param, index, grad, lr=0.5, sum_limit=4)
    assert torch.allclose(param[0], -0.5 * grad[:8].sum(0) / 2)  # 8 repeats: 4 x their mean
    assert torch.allclose(param[1], -0.5 * grad[8:].sum(0))  # 2 <= 4: their sum
    assert torch.equal(param[2], torch.zeros(2))


def test_rows_never_seen_stay_unchanged():
    graph = two_cliques()  # nodes 16 and 17 are isolated: in no walk, never noise
    model = SkipGram(graph.num_nodes, SkipGramSettings(dim=8, window=3), graph.in_strength(),
                     CPU, torch.Generator().manual_seed(0), graph=graph)
    emb0, out0 = model.embeddings(), model.out_emb[:18].clone()
    walks = random_walks(graph, torch.arange(16), 10, generator=torch.Generator().manual_seed(0))
    for _ in range(3):
        model.step(walks, 0.1)
    emb1 = model.embeddings()
    assert torch.equal(emb1[16:], emb0[16:]) and torch.equal(model.out_emb[16:18], out0[16:])
    assert not torch.equal(emb1[:16], emb0[:16])


@pytest.mark.parametrize("chunk", [4, 128])
def test_pair_count_matches_explicit_pairs_and_ignores_padding(chunk):
    graph = two_cliques()
    model = SkipGram(graph.num_nodes, SkipGramSettings(dim=8, window=3, dynamic_window=False,
                                                       chunk=chunk),
                     graph.in_strength(), CPU, torch.Generator().manual_seed(0), graph=graph)
    walks = torch.tensor([[0, 1, 2, -1, -1, -1, -1], [16, -1, -1, -1, -1, -1, -1],
                          [3, 4, 5, 6, 7, 0, 8]])
    _, pairs = model.step(walks, 0.0)
    center, _ = context_pairs(walks, 3)
    assert int(pairs) == center.numel()


def test_same_seed_same_embeddings():
    graph = two_cliques()
    walks = random_walks(graph, torch.arange(16).repeat(2), 10,
                         generator=torch.Generator().manual_seed(0))
    out = []
    for _ in range(2):
        model = SkipGram(graph.num_nodes, SkipGramSettings(dim=8, subsample=0.05),
                         graph.in_strength(), CPU, torch.Generator().manual_seed(5), graph=graph)
        model.step(walks, 0.2)
        out.append(model.embeddings())
    assert torch.equal(out[0], out[1])


def test_training_separates_two_communities():
    graph = two_cliques()
    gen = torch.Generator().manual_seed(0)
    model = SkipGram(graph.num_nodes, SkipGramSettings(dim=16, window=3), graph.in_strength(),
                     CPU, gen, graph=graph)
    losses = []
    steps = 40
    for step in range(steps):
        walks = random_walks(graph, torch.arange(16), 10, generator=gen)
        loss, pairs = model.step(walks, linear_lr(0.2, step, steps))
        losses.append(float(loss / pairs))
    assert losses[-1] < losses[0] - 1.0
    z = torch.nn.functional.normalize(model.embeddings()[:16], dim=1)
    sim = z @ z.t()
    same = torch.block_diag(torch.ones(8, 8), torch.ones(8, 8)).bool()
    off = ~torch.eye(16, dtype=torch.bool)
    assert sim[same & off].mean() > sim[~same].mean() + 0.3


def test_bfloat16_products_track_float32():
    graph = two_cliques()
    walks = random_walks(graph, torch.arange(16).repeat(4), 12,
                         generator=torch.Generator().manual_seed(0))
    out = {}
    for precision in ("float32", "bfloat16"):
        model = SkipGram(graph.num_nodes, SkipGramSettings(dim=16, window=3, precision=precision),
                         graph.in_strength(), CPU, torch.Generator().manual_seed(2), graph=graph)
        assert model.matmul_dtype == getattr(torch, precision)
        for chunk in walks.split(16):
            model.step(chunk, 0.1)
        out[precision] = model.embeddings()
    diff = (out["float32"] - out["bfloat16"]).norm() / out["float32"].norm()
    assert 0 < float(diff) < 0.02


def test_auto_precision_follows_the_hardware():
    from graphflow.embeddings.skipgram import bf16_matmul_supported, matmul_dtype

    cpu = torch.device("cpu")
    expected = torch.bfloat16 if bf16_matmul_supported(cpu) else torch.float32
    assert matmul_dtype("auto", cpu) == expected
    with pytest.raises(ValueError, match="precision must be"):
        matmul_dtype("float16", cpu)


def test_linear_lr_schedule():
    assert linear_lr(0.2, 0, 10) == 0.2
    assert linear_lr(0.2, 5, 10) == pytest.approx(0.1)
    assert linear_lr(0.2, 10, 10) == pytest.approx(0.2 * 1e-4)


def test_fit_is_steps_on_chunks_with_the_decaying_rate():
    graph = two_cliques()  # 18 nodes
    walks = random_walks(graph, torch.arange(16).repeat(3), 6,
                         generator=torch.Generator().manual_seed(0))  # (48, 7)
    settings = SkipGramSettings(dim=8, window=2, negatives=2)

    def model() -> SkipGram:
        return SkipGram(18, settings, graph.in_strength(), CPU, torch.Generator().manual_seed(1),
                        graph=graph)

    fitted, stepped = model(), model()
    loss, pairs, done = fitted.fit(walks, 0.1, 10, 100, step_walks=20)
    assert done == 10 + 48
    manual_loss = manual_pairs = 0.0
    for i, chunk in enumerate(walks.split(20)):
        step_loss, step_pairs = stepped.step(chunk, linear_lr(0.1, 10 + 20 * i, 100))
        manual_loss += float(step_loss)
        manual_pairs += float(step_pairs)
    assert torch.equal(fitted.emb, stepped.emb) and torch.equal(fitted.out_emb, stepped.out_emb)
    assert float(loss) == pytest.approx(manual_loss) and float(pairs) == manual_pairs


def test_hogwild_workers_train_every_walk_and_separate_the_communities():
    graph = two_cliques()
    gen = torch.Generator().manual_seed(0)
    walks = random_walks(graph, torch.arange(16).repeat(40), 10, generator=gen)  # (640, 11)
    settings = SkipGramSettings(dim=16, window=3)
    one = SkipGram(graph.num_nodes, settings, graph.in_strength(), CPU,
                   torch.Generator().manual_seed(1), graph=graph)
    two = SkipGram(graph.num_nodes, settings, graph.in_strength(), CPU,
                   torch.Generator().manual_seed(1), graph=graph)
    _, pairs_one, _ = one.fit(walks, 0.2, 0, 640, step_walks=16)
    loss, pairs, done = two.fit(walks, 0.2, 0, 640, step_walks=16, workers=2)
    assert done == 640 and torch.isfinite(loss)
    # Every walk trained once: the same positive pairs in total (windows differ per worker).
    assert abs(float(pairs) - float(pairs_one)) < 0.1 * float(pairs_one)
    assert torch.isfinite(two.emb).all() and torch.isfinite(two.out_emb).all()
    z = torch.nn.functional.normalize(two.embeddings()[:16], dim=1)
    sim = z @ z.t()
    same = torch.block_diag(torch.ones(8, 8), torch.ones(8, 8)).bool()
    off = ~torch.eye(16, dtype=torch.bool)
    assert sim[same & off].mean() > sim[~same].mean() + 0.3
    assert torch.get_num_threads() >= 1  # the workers' thread settings stayed in the workers


def test_a_failing_hogwild_worker_raises_in_the_caller():
    graph = two_cliques()
    model = SkipGram(graph.num_nodes, SkipGramSettings(dim=8, window=2), graph.in_strength(),
                     CPU, torch.Generator().manual_seed(0), graph=graph)
    walks = torch.full((64, 5), 999)  # node ids past the table
    with pytest.raises(IndexError):
        model.fit(walks, 0.1, 0, 64, step_walks=8, workers=2)


def test_small_graphs_train_on_one_hogwild_worker_unless_forced():
    from graphflow.embeddings.skipgram import hogwild_workers

    assert hogwild_workers(2, 10_000, 64 * 81) == 2
    assert hogwild_workers(2, 2_000, 64 * 81) == 1  # every row in every step
    assert hogwild_workers(2, 2_000, 64 * 81, forced=True) == 2


def test_one_worker_left_of_a_plan_takes_the_dropped_workers_cores():
    from graphflow.embeddings.skipgram import hogwild_threads

    assert hogwild_threads(2, 1, 1) == 2  # 2 workers x 1 thread planned, one trains: 2 threads
    assert hogwild_threads(4, 2, 1) == 8
    assert hogwild_threads(1, 2, 1) == 2  # as planned
    assert hogwild_threads(2, 1, 2) == 1
    assert hogwild_threads(2, 1, 1, forced=True) == 1  # the user's thread count stands


def test_hogwild_split_is_what_the_task_trains_with():
    from graphflow.embeddings.skipgram import hogwild_split

    cpu, gpu = torch.device("cpu"), torch.device("cuda")  # a device object needs no GPU
    assert hogwild_split(2, 1, cpu, 10_000, 64 * 81) == (2, 1)
    assert hogwild_split(2, 1, cpu, 2_000, 64 * 81) == (1, 2)  # small graph: one worker, 2 threads
    assert hogwild_split(2, 1, cpu, 2_000, 64 * 81, forced_workers=True) == (2, 1)
    assert hogwild_split(8, 2, gpu, 10_000, 512 * 81) == (1, 2)  # a GPU: one worker, plan's threads


def test_hogwild_workers_count_the_other_workers_expected_occurrences_in_the_row_cap():
    """A row's cap holds across workers: ``max(1, (n + m) / R)`` with ``m`` its expected
    occurrences in the other workers' concurrent steps, from its token and noise shares."""
    graph = two_cliques()
    n = graph.num_nodes
    model = SkipGram(n, SkipGramSettings(dim=4, window=2, chunk=8, init_hops=0),
                     graph.in_strength(), CPU, torch.Generator().manual_seed(0))
    share = graph.in_strength().double() / graph.in_strength().double().sum()
    noise = graph.in_strength().double() ** 0.75
    noise = noise / noise.sum()
    busy_e, busy_x = model.concurrent_occurrences(60.0, 6, 10, 1)  # walks of one block
    assert busy_e.shape == (n + 1,) and float(busy_e[n]) == float(busy_x[n]) == 0.0
    assert torch.allclose(busy_e[:n].double(), 60 * share, rtol=1e-6)
    m = model.settings.noise_per_block()
    assert torch.allclose(busy_x[:n].double(), 60 * share + 10 * m * noise, rtol=1e-6)
    busy_e3, busy_x3 = model.concurrent_occurrences(200.0, 20, 10, 3)  # 3 others, 3 blocks
    assert torch.allclose(busy_e3[:n].double(), 3 * 200 * share, rtol=1e-6)
    assert torch.allclose(busy_x3[:n].double(),
                          3 * 200 * (1 + 2 * 2 / 8) * share + 3 * 30 * m * noise, rtol=1e-6)
    # The rule itself: 3 gradients of 1 with 3 expected elsewhere step 3 * 4 / 6 = 2.
    param = torch.zeros(2, 1)
    sparse_sgd(param, torch.tensor([0, 0, 0, 1]), torch.ones(4, 1), lr=1.0, sum_limit=4,
               concurrent=torch.tensor([3.0, 0.0]))
    assert param.flatten().tolist() == [-2.0, -1.0]


def test_default_lr_trains_stably_on_walks_that_step_back_on_hogwild_workers():
    """The task's default rate (word2vec's 0.025, see DEFAULT_LR) stays stable where
    p = 0.25 walks keep returning, so that rows repeat within a step and hit the row cap,
    with two Hogwild workers, as on the benchmark's SBM: finite tables, communities apart."""
    from graphflow.io.synthetic import sbm
    from graphflow.embeddings.skipgram import DEFAULT_LR
    from graphflow_plugins.embeddings.skipgram import SkipGramOptions

    assert SkipGramOptions().lr == DEFAULT_LR
    data = sbm(1200, 2, 0, p_in=8 / 600, p_out=0.5 / 600, seed=0)
    graph = from_edges(data.src, data.dst, 1200)
    gen = torch.Generator().manual_seed(0)
    starts = torch.arange(1200).repeat(10)
    walks = random_walks(graph, starts[torch.randperm(12000, generator=gen)], 20, p=0.25,
                         q=4.0, generator=gen)  # (12000, 21)
    valid = walks[:16].reshape(-1)
    counts = torch.bincount(valid[valid >= 0])
    assert int(counts.max()) > SUM_LIMIT  # rows repeat within one 16-walk step
    model = SkipGram(1200, SkipGramSettings(dim=16, window=5), graph.in_strength(), CPU, gen,
                     graph=graph)
    loss, pairs, _ = model.fit(walks, DEFAULT_LR, 0, 12000, step_walks=16, workers=2)
    assert torch.isfinite(model.emb).all() and torch.isfinite(model.out_emb).all()
    # Mean loss per pair well below the untrained (1 + K) log 2 = 4.2 (2.3 measured; at lr
    # 0.1 it was 32 on these walks, at 0.2 NaN).
    assert float(loss / pairs) < 3.0
    z = torch.nn.functional.normalize(model.embeddings(), dim=1)
    centroid = torch.stack([z[data.label == c].mean(0) for c in range(2)])  # (2, 16)
    guess = (z @ centroid.t()).argmax(1)
    agree = float((guess == data.label).float().mean())
    assert max(agree, 1 - agree) > 0.95  # 0.99 measured


def test_readouts_are_the_input_vectors_or_input_plus_output():
    graph = two_cliques()
    model = SkipGram(graph.num_nodes, SkipGramSettings(dim=8, window=3), graph.in_strength(),
                     CPU, torch.Generator().manual_seed(0), graph=graph)
    walks = random_walks(graph, torch.arange(16), 10, generator=torch.Generator().manual_seed(0))
    model.step(walks, 0.1)
    n = graph.num_nodes
    assert torch.equal(model.embeddings(), model.emb[:n])
    assert torch.equal(model.embeddings("input"), model.emb[:n])
    assert torch.allclose(model.embeddings("sum"), model.emb[:n] + model.out_emb[:n])
    assert not torch.equal(model.embeddings("sum"), model.embeddings("input"))
    with pytest.raises(ValueError, match=r"readout = 'both': must be one of input, sum"):
        model.embeddings("both")


def test_two_hogwild_workers_stay_stable_on_hubs_where_a_per_worker_cap_diverged():
    """An R-MAT graph with hubs (max degree 7227 of 3000 nodes) that every step of both
    workers touches. With the row cap per worker alone, lr = 0.05 blew up (mean loss per pair
    66.4 and 64.0 for seeds 0 and 1, float32 products); with the cap across workers it trains
    (2.72 for both; untrained 4.16)."""
    from graphflow.io.synthetic import rmat

    data = rmat(3000, 100_000, seed=0)
    keep = data.src != data.dst
    src, dst = data.src[keep], data.dst[keep]
    graph = from_edges(torch.cat([src, dst]), torch.cat([dst, src]), 3000)
    assert int(graph.out_degrees().max()) > 3000  # hubs
    gen = torch.Generator().manual_seed(0)
    starts = torch.arange(3000).repeat(4)
    walks = random_walks(graph, starts[torch.randperm(12000, generator=gen)], 40, p=0.25,
                         q=4.0, generator=gen)  # (12000, 41)
    model = SkipGram(3000, SkipGramSettings(precision="float32"), graph.in_strength(), CPU,
                     torch.Generator().manual_seed(0), graph=graph)
    loss, pairs, _ = model.fit(walks, 0.05, 0, walks.shape[0], step_walks=64, workers=2)
    assert torch.isfinite(model.emb).all() and torch.isfinite(model.out_emb).all()
    assert float(loss / pairs) < 3.2
