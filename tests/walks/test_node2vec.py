"""Random walks, compiled and torch paths: edges only, the (p, q) law by chi-square, weights,
dead ends, seeds, threads, DGL parity."""

from __future__ import annotations

import pytest
import torch
from scipy import stats

from graphflow.compat.dgl import dgl
from graphflow.io.synthetic import rmat, sbm
from graphflow.sampling import native
from graphflow.walks.csr import from_edges
from graphflow.walks.node2vec import PAD, first_order_step, random_walks, second_order_step

ALPHA = 1e-3  # chi-square tests fail below this p-value (fixed seeds: deterministic)
PATHS = pytest.mark.parametrize("compiled", [True, False], ids=["compiled", "torch"])


def chisq(observed, expected):
    """Chi-square p-value of counts against expected proportions (rescaled to the same total)."""
    observed, expected = observed.double(), expected.double()
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


def undirected(src, dst):
    return torch.cat([src, dst]), torch.cat([dst, src])


def gen(seed=0):
    return torch.Generator().manual_seed(seed)


# Node 1 (the current node) has neighbors 0 (the previous node), 2, 3 (also neighbors of 0)
# and 4, 5 (two hops from 0). Extra edges keep every node walkable.
KITE = [(0, 1), (1, 2), (1, 3), (1, 4), (1, 5), (0, 2), (0, 3), (4, 5), (5, 6)]


def kite(weights=None):
    src = torch.tensor([a for a, _ in KITE])
    dst = torch.tensor([b for _, b in KITE])
    s, d = undirected(src, dst)
    w = None if weights is None else torch.cat([weights, weights]).double()
    return from_edges(s, d, 7, w)


def node2vec_law(p, q, weights=None):
    """Exact transition probabilities from node 1 having come from node 0, over nodes 0..6."""
    alpha = {0: 1 / p, 2: 1.0, 3: 1.0, 4: 1 / q, 5: 1 / q}
    w = {b: 1.0 for b in alpha} if weights is None else weights
    mass = torch.zeros(7, dtype=torch.float64)
    for x, a in alpha.items():
        mass[x] = a * w[x]
    return mass / mass.sum()


def second_steps(graph, p, q, n, seed, compiled):
    """Next nodes from node 1 having come from node 0: ``n`` torch steps of walkers at 1, or
    the third nodes of ``n`` compiled two-step walks from 0 that went to 1 first."""
    if compiled:
        walks = random_walks(graph, torch.zeros(n, dtype=torch.int64), 2, p=p, q=q,
                             generator=gen(seed), compiled=True)
        return walks[walks[:, 1] == 1, 2]
    return second_order_step(graph.with_edge_set(), torch.zeros(n, dtype=torch.int64),
                             torch.ones(n, dtype=torch.int64), p, q, gen(seed))


def edge_keys(graph):
    src, dst, _ = graph.edge_list()
    return src * graph.num_nodes + dst


def assert_walks_follow_edges(graph, walks):
    a, b = walks[:, :-1], walks[:, 1:]
    moved = b >= 0
    assert bool((a[moved] >= 0).all()), "a step after padding"
    keys = a[moved] * graph.num_nodes + b[moved]
    assert bool(torch.isin(keys, edge_keys(graph)).all()), "a step along a non-edge"
    # Padding is a suffix: once -1, always -1.
    assert bool((walks[:, 1:][~moved] == PAD).all())
    after = torch.cummax((walks == PAD).int(), dim=1).values.bool()
    assert bool((walks[after] == PAD).all())


@pytest.mark.parametrize("p,q", [(1.0, 1.0), (0.25, 4.0), (4.0, 0.25), (2.0, 0.5)])
@PATHS
def test_walks_only_follow_edges_on_a_power_law_graph(p, q, compiled):
    g = rmat(500, 3000, seed=1)  # duplicates, self-loops, hubs, dead ends (directed)
    graph = from_edges(g.src, g.dst, g.num_nodes)
    walks = random_walks(graph, torch.arange(500), 20, p=p, q=q, generator=gen(),
                         compiled=compiled)
    assert walks.shape == (500, 21) and walks.dtype == torch.int64
    assert torch.equal(walks[:, 0], torch.arange(500))
    assert_walks_follow_edges(graph, walks)


@pytest.mark.parametrize("first", [1, 8])  # the CPU's and the GPU's first-round proposals
@pytest.mark.parametrize("p,q", [(0.25, 4.0), (4.0, 0.25), (2.0, 0.5), (0.5, 2.0), (1.0, 3.0)])
def test_second_step_frequencies_match_the_node2vec_formula(p, q, first):
    graph = kite().with_edge_set()
    n = 60_000
    prev = torch.zeros(n, dtype=torch.int64)
    cur = torch.ones(n, dtype=torch.int64)
    nxt = second_order_step(graph, prev, cur, p, q, gen(3), first=first)
    observed = torch.bincount(nxt, minlength=7).double()
    expected = node2vec_law(p, q) * n
    support = expected > 0
    assert observed[~support].sum() == 0
    assert chisq(observed[support], expected[support]) > ALPHA


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("p,q", [(0.25, 4.0), (4.0, 0.25)])
def test_cuda_second_step_matches_the_formula(p, q):
    graph = kite().with_edge_set().to("cuda")
    n = 60_000
    prev = torch.zeros(n, dtype=torch.int64, device="cuda")
    cur = torch.ones(n, dtype=torch.int64, device="cuda")
    nxt = second_order_step(graph, prev, cur, p, q, torch.Generator("cuda").manual_seed(3))
    observed = torch.bincount(nxt.cpu(), minlength=7).double()
    expected = node2vec_law(p, q) * n
    support = expected > 0
    assert observed[~support].sum() == 0
    assert chisq(observed[support], expected[support]) > ALPHA


@PATHS
def test_full_walks_follow_the_formula_at_the_second_step(compiled):
    graph = kite()
    starts = torch.zeros(120_000, dtype=torch.int64)  # 0 -> {1, 2, 3} uniformly first
    walks = random_walks(graph, starts, 2, p=0.5, q=2.0, generator=gen(4), compiled=compiled)
    via1 = walks[walks[:, 1] == 1]  # condition on the first step 0 -> 1
    observed = torch.bincount(via1[:, 2], minlength=7).double()
    expected = node2vec_law(0.5, 2.0) * len(via1)
    support = expected > 0
    assert chisq(observed[support], expected[support]) > ALPHA
    first = torch.bincount(walks[:, 1], minlength=7)[[1, 2, 3]].double()
    assert chisq(first, torch.ones(3)) > ALPHA


@PATHS
@pytest.mark.parametrize("p,q", [(1.0, 1.0), (0.25, 4.0), (3.0, 0.5)])
def test_weighted_second_step_is_alpha_times_weight(p, q, compiled):
    # Edge weights of node 1's edges to 0, 2, 3, 4, 5 (same weight both directions).
    w = {0: 2.0, 2: 0.5, 3: 3.0, 4: 1.0, 5: 4.0}
    weights = torch.tensor([w[0], w[2], w[3], w[4], w[5], 1.0, 1.0, 1.0, 1.0])
    nxt = second_steps(kite(weights), p, q, 120_000 if compiled else 60_000, 5, compiled)
    observed = torch.bincount(nxt, minlength=7).double()
    expected = node2vec_law(p, q, w)
    support = expected > 0
    assert observed[~support].sum() == 0
    assert chisq(observed[support], expected[support]) > ALPHA


@PATHS
def test_weighted_first_step_is_weight_proportional_and_skips_zero_weights(compiled):
    src = torch.tensor([0, 0, 0, 0, 1, 2, 3, 4])
    dst = torch.tensor([1, 2, 3, 4, 0, 0, 0, 0])
    w = torch.tensor([1.0, 0.0, 2.0, 5.0, 1.0, 1.0, 1.0, 1.0])
    graph = from_edges(src, dst, 5, w)
    starts = torch.zeros(80_000, dtype=torch.int64)
    nxt = random_walks(graph, starts, 1, generator=gen(6), compiled=True)[:, 1] if compiled \
        else first_order_step(graph, starts, gen(6))
    observed = torch.bincount(nxt, minlength=5).double()
    assert observed[2] == 0  # zero weight: never taken
    expected = torch.tensor([1.0, 2.0, 5.0]) / 8 * 80_000
    assert chisq(observed[[1, 3, 4]], expected) > ALPHA


@PATHS
def test_parallel_edges_count_in_the_return_probability(compiled):
    # 1 -> 0 twice: with p = 0.25 the return edge is the outlier; its area must double.
    src = torch.tensor([0, 1, 1, 1, 2])
    dst = torch.tensor([1, 0, 0, 2, 1])
    nxt = second_steps(from_edges(src, dst, 3), 0.25, 1.0, 50_000, 7, compiled)
    observed = torch.bincount(nxt, minlength=3).double()
    expected = torch.tensor([2 * 4.0, 0.0, 1.0])  # two return edges at 1/p = 4, node 2 at 1/q
    assert observed[1] == 0
    assert chisq(observed[[0, 2]], expected[[0, 2]]) > ALPHA


@PATHS
def test_directed_graph_without_a_way_back_never_returns(compiled):
    src = torch.tensor([0, 1, 1, 2, 3])
    dst = torch.tensor([1, 2, 3, 1, 1])
    nxt = second_steps(from_edges(src, dst, 4), 0.1, 1.0, 20_000, 0, compiled)
    assert set(nxt.unique().tolist()) == {2, 3}


@PATHS
def test_dead_ends_and_isolated_nodes_pad_with_minus_one(compiled):
    # 0 -> 1 -> 2 (2 has no out-edges); 3 is isolated; 4 <-> 5 cycle.
    src = torch.tensor([0, 1, 4, 5])
    dst = torch.tensor([1, 2, 5, 4])
    graph = from_edges(src, dst, 6)
    for p, q in [(1.0, 1.0), (0.5, 2.0)]:
        walks = random_walks(graph, torch.tensor([0, 3, 4, 2]), 5, p=p, q=q, generator=gen(),
                             compiled=compiled)
        assert walks[0].tolist() == [0, 1, 2, -1, -1, -1]
        assert walks[1].tolist() == [3, -1, -1, -1, -1, -1]
        assert walks[2].tolist() == [4, 5, 4, 5, 4, 5]
        assert walks[3].tolist() == [2, -1, -1, -1, -1, -1]


@PATHS
def test_zero_weight_row_is_a_dead_end(compiled):
    graph = from_edges(torch.tensor([0, 1]), torch.tensor([1, 0]), 2, torch.tensor([1.0, 0.0]))
    walks = random_walks(graph, torch.tensor([0, 1]), 3, generator=gen(), compiled=compiled)
    assert walks.tolist() == [[0, 1, -1, -1], [1, -1, -1, -1]]


@PATHS
def test_graph_without_edges(compiled):
    graph = from_edges(torch.zeros(0, dtype=torch.int64), torch.zeros(0, dtype=torch.int64), 3)
    walks = random_walks(graph, torch.arange(3), 4, p=0.5, q=2.0, generator=gen(),
                         compiled=compiled)
    assert walks[:, 0].tolist() == [0, 1, 2] and bool((walks[:, 1:] == -1).all())


@pytest.mark.parametrize("p,q", [(1.0, 1.0), (0.25, 4.0)])
@PATHS
def test_same_seed_same_walks_other_seed_other_walks(p, q, compiled):
    g = sbm(300, 3, 0, p_in=0.05, p_out=0.005, seed=0)
    graph = from_edges(g.src, g.dst, g.num_nodes)
    starts = torch.arange(300).repeat(3)
    a = random_walks(graph, starts, 15, p=p, q=q, generator=gen(11), compiled=compiled)
    b = random_walks(graph, starts, 15, p=p, q=q, generator=gen(11), compiled=compiled)
    c = random_walks(graph, starts, 15, p=p, q=q, generator=gen(12), compiled=compiled)
    assert torch.equal(a, b)
    assert not torch.equal(a, c)


def test_bad_p_q_raise():
    with pytest.raises(ValueError, match="p > 0 and q > 0"):
        random_walks(kite(), torch.tensor([0]), 3, p=0.0, q=1.0)


@pytest.mark.parametrize("p,q", [(1.0, 1.0), (0.25, 4.0)])
@PATHS
def test_first_two_steps_match_dgl_in_distribution(p, q, compiled):
    graph = kite()
    src, dst, _ = graph.edge_list()
    g = dgl.graph((src, dst), num_nodes=7)
    starts = torch.zeros(30_000, dtype=torch.int64)
    dgl.seed(0)
    theirs = dgl.sampling.node2vec_random_walk(g, starts, p, q, 2)
    ours = random_walks(graph, starts, 2, p=p, q=q, generator=gen(8), compiled=compiled)
    for step in (1, 2):
        if step == 2:  # condition on the first step 0 -> 1
            a, b = ours[ours[:, 1] == 1, 2], theirs[theirs[:, 1] == 1, 2]
        else:
            a, b = ours[:, 1], theirs[:, 1]
        table = torch.stack([torch.bincount(a, minlength=7), torch.bincount(b, minlength=7)])
        table = table[:, table.sum(0) > 0]
        assert stats.chi2_contingency(table.numpy()).pvalue > ALPHA


@pytest.mark.parametrize("p,q", [(1.0, 1.0), (0.25, 4.0)])
def test_compiled_walks_are_the_same_on_any_number_of_threads(p, q):
    g = sbm(3000, 3, 0, p_in=0.01, p_out=0.001, seed=0)  # 9000 walkers: the parallel kernel
    graph = from_edges(g.src, g.dst, g.num_nodes)
    starts = torch.arange(3000).repeat(3)
    with native.threads(1):
        one = random_walks(graph, starts, 10, p=p, q=q, generator=gen(2))
    with native.threads(2):
        two = random_walks(graph, starts, 10, p=p, q=q, generator=gen(2))
    assert torch.equal(one, two)
    assert_walks_follow_edges(graph, two)


@pytest.mark.parametrize("p,q", [(0.25, 4.0), (4.0, 0.25), (2.0, 0.5), (0.5, 2.0), (1.0, 3.0)])
def test_compiled_second_step_matches_the_node2vec_formula(p, q):
    nxt = second_steps(kite(), p, q, 150_000, 3, compiled=True)
    observed = torch.bincount(nxt, minlength=7).double()
    expected = node2vec_law(p, q)
    support = expected > 0
    assert observed[~support].sum() == 0
    assert chisq(observed[support], expected[support]) > ALPHA
