"""The compiled sampler kernels: picks and relabelling against the torch path and by hand."""

import threading

import pytest
import torch

from graphflow.sampling import native
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.neighbor import sample_blocks
from graphflow.sampling.relabel import relabel


def csc_of(src: list[int], dst: list[int], num_nodes: int, weights=None) -> CSCGraph:
    src_t, dst_t = torch.tensor(src), torch.tensor(dst)
    order = torch.argsort(dst_t, stable=True)
    indptr = torch.zeros(num_nodes + 1, dtype=torch.int64)
    indptr[1:] = torch.cumsum(torch.bincount(dst_t, minlength=num_nodes), 0)
    w = None if weights is None else torch.tensor(weights, dtype=torch.float32)[order]
    cumw = None if w is None else torch.cat([torch.zeros(1, dtype=torch.float64),
                                             torch.cumsum(w.double(), 0)])
    return CSCGraph(indptr=indptr, indices=src_t[order], eids=order, weights=w, cumw=cumw)


def random_csc(num_nodes: int, num_edges: int, seed: int) -> CSCGraph:
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_nodes, (num_edges,), generator=gen)
    # skewed in-degrees: a few hubs far above any fanout, many rows below it
    dst = (torch.rand(num_edges, generator=gen) ** 3 * num_nodes).long()
    return csc_of(src.tolist(), dst.tolist(), num_nodes)


def test_supports_the_default_layers_only():
    g = csc_of([0, 1], [1, 0], 2)
    assert native.supports(g, 10, False) and native.supports(g, native.MAX_FANOUT, False)
    assert not native.supports(g, native.MAX_FANOUT + 1, False)  # random keys instead
    assert not native.supports(g, -1, False)  # every edge
    assert not native.supports(g, 10, True)  # with replacement
    assert not native.supports(csc_of([0, 1], [1, 0], 2, weights=[1.0, 2.0]), 10, False)


def test_a_row_within_the_fanout_takes_all_its_edges_in_csc_order():
    # node 2 has in-edges from 0, 1, 3; node 0 has none
    g = csc_of([0, 1, 3, 2], [2, 2, 2, 1], 4)
    indptr, nbr, eids = native.pick(g, torch.tensor([2, 0, 1]), 5,
                                    torch.Generator().manual_seed(0))
    assert indptr.tolist() == [0, 3, 3, 4]
    assert nbr.tolist() == [0, 1, 3, 2] and eids.tolist() == [0, 1, 2, 3]


@pytest.mark.parametrize("threads", [1, 2])
def test_every_row_gets_distinct_edges_of_its_own(threads):
    g = random_csc(300, 6000, 0)
    dst = torch.randperm(300, generator=torch.Generator().manual_seed(1))[:250]
    k = 7
    with native.threads(threads):
        indptr, nbr, eids = native.pick(g, dst, k, torch.Generator().manual_seed(2))
    deg = g.in_degrees()[dst]
    assert torch.equal(indptr[1:] - indptr[:-1], deg.clamp(max=k))
    for r, v in enumerate(dst.tolist()):
        row = eids[indptr[r]:indptr[r + 1]]
        assert row.unique().numel() == row.numel()  # distinct
        lo, hi = int(g.indptr[v]), int(g.indptr[v + 1])
        own = set(g.eids[lo:hi].tolist())
        assert set(row.tolist()) <= own  # the row's own in-edges
        # each source is the source of its edge
        pos = {int(e): p for p, e in enumerate(g.eids[lo:hi].tolist(), start=lo)}
        assert [int(g.indices[pos[int(e)]]) for e in row] == nbr[indptr[r]:indptr[r + 1]].tolist()


def test_the_sample_depends_on_the_seed_alone_not_on_threads():
    g = random_csc(400, 12000, 3)
    dst = torch.arange(400)
    rows = native.PARALLEL_ROWS
    native.PARALLEL_ROWS = 1  # the parallel kernel for this small layer too
    try:
        with native.threads(2):
            two = native.pick(g, dst, 9, torch.Generator().manual_seed(5))
    finally:
        native.PARALLEL_ROWS = rows
    with native.threads(1):
        one = native.pick(g, dst, 9, torch.Generator().manual_seed(5))
        other = native.pick(g, dst, 9, torch.Generator().manual_seed(6))
    assert all(torch.equal(a, b) for a, b in zip(one, two))
    assert not torch.equal(one[2], other[2])


def test_picks_are_uniform_over_a_row():
    # one destination with 12 in-edges, fanout 4: each edge in 4/12 of the samples
    g = csc_of(list(range(1, 13)), [0] * 12, 13)
    gen = torch.Generator().manual_seed(0)
    counts = torch.zeros(12)
    trials = 6000
    for _ in range(trials):
        _, _, eids = native.pick(g, torch.tensor([0]), 4, gen)
        counts[eids] += 1
    expected = trials * 4 / 12
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    assert chi2 < 35.0  # 11 degrees of freedom: p < 0.001 above 31.3


def test_pairs_of_a_row_are_uniform_too():
    # Floyd's subsets are uniform, not only the marginals: all 10 pairs of 5 edges equally
    g = csc_of([1, 2, 3, 4, 5], [0] * 5, 6)
    gen = torch.Generator().manual_seed(1)
    seen: dict[tuple, int] = {}
    for _ in range(5000):
        _, _, eids = native.pick(g, torch.tensor([0]), 2, gen)
        key = tuple(sorted(eids.tolist()))
        seen[key] = seen.get(key, 0) + 1
    assert len(seen) == 10
    assert min(seen.values()) > 400 and max(seen.values()) < 600  # 500 expected


@pytest.mark.parametrize("how", ["relabel_scan", "relabel_sorted"])
@pytest.mark.parametrize("edges", [3000, 40])
def test_relabelling_gives_sorted_new_ids_and_restores_the_flags(how, edges):
    g = random_csc(500, 8000, 4)
    dst = torch.tensor([7, 3, 400, 250])
    nbr = torch.randint(0, 500, (edges,), generator=torch.Generator().manual_seed(0))
    nbr[:2] = torch.tensor([3, 3])  # a destination sampled as a source, twice
    flags = torch.zeros(500, dtype=torch.bool)
    table = torch.full((500,), -1, dtype=torch.int32)
    new, local = getattr(native, how)(flags, table, dst, nbr)
    expected_new = torch.tensor(sorted(set(nbr.tolist()) - set(dst.tolist())))
    assert torch.equal(new, expected_new)
    src_nodes = torch.cat([dst, new])
    assert torch.equal(src_nodes[local], nbr)
    assert not flags.any()
    # and relabel() itself (whichever path it takes for this size) gives the same
    src2, local2 = relabel(g, dst, nbr)
    assert torch.equal(src2, src_nodes) and torch.equal(local2, local)


def test_blocks_from_the_kernels_chain_and_keep_their_edges():
    g = random_csc(2000, 40000, 5)
    seeds = torch.randperm(2000, generator=torch.Generator().manual_seed(0))[:64]
    with native.threads(2):
        blocks = sample_blocks(g, seeds, [6, 4], generator=torch.Generator().manual_seed(0))
    assert torch.equal(blocks[-1].dst_nodes, seeds)
    assert torch.equal(blocks[0].dst_nodes, blocks[1].src_nodes)
    for b in blocks:
        dst_of_edge = torch.repeat_interleave(b.dst_nodes, b.indptr[1:] - b.indptr[:-1])
        src_of_edge = b.src_nodes[b.indices]
        # the original edge ids name exactly these (source, destination) pairs
        order = torch.argsort(g.eids)
        csc_dst = torch.repeat_interleave(torch.arange(2000), g.in_degrees())
        assert torch.equal(g.indices[order][b.eids], src_of_edge)
        assert torch.equal(csc_dst[order][b.eids], dst_of_edge)


def test_threads_calling_at_once_get_the_serial_results():
    g = random_csc(3000, 60000, 6)
    dst = torch.arange(3000)
    with native.threads(1):
        want = native.pick(g, dst, 8, torch.Generator().manual_seed(3))
    got: list = [None] * 4
    errors: list[BaseException] = []

    def work(i: int) -> None:
        try:
            with native.threads(2):
                for _ in range(5):
                    got[i] = native.pick(g, dst, 8, torch.Generator().manual_seed(3))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(timeout=60)
    assert not errors and all(not w.is_alive() for w in workers)
    for out in got:
        assert all(torch.equal(a, b) for a, b in zip(out, want))


def _pick_in_child(queue) -> None:
    torch.set_num_threads(1)  # torch's own OpenMP pool does not survive fork either
    g = random_csc(3000, 60000, 6)
    with native.threads(2):
        out = native.pick(g, torch.arange(3000), 8, torch.Generator().manual_seed(3))
    queue.put([t.tolist() for t in out])


def test_a_forked_child_samples_with_the_serial_kernels():
    import multiprocessing

    g = random_csc(3000, 60000, 6)
    with native.threads(2):  # the parent's parallel kernel (and thread pool) first
        want = native.pick(g, torch.arange(3000), 8, torch.Generator().manual_seed(3))
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_pick_in_child, args=(queue,))
    child.start()
    try:
        got = queue.get(timeout=60)
    finally:
        child.join(timeout=30)
        if child.is_alive():
            child.kill()
            child.join()
    assert child.exitcode == 0
    assert [t.tolist() for t in want] == got
