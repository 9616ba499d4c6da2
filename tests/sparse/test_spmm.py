import pytest
import torch

from graphflow.errors import DataError, DeviceError
from graphflow.sparse import Adjacency, sddmm, spmm, spmm_cat
from graphflow.sparse import ops as spmm_module


def random_edges(num_src: int, num_dst: int, edges: int, seed: int):
    gen = torch.Generator().manual_seed(seed)
    src = torch.randint(0, num_src, (edges,), generator=gen)
    dst = torch.randint(0, num_dst, (edges,), generator=gen)
    return src, dst, gen


def dense_reference(src, dst, num_src, num_dst, vals, x):
    """Dense autograd reference: A[dst, src] += vals (duplicates summed), then A @ x."""
    a = torch.zeros(num_dst, num_src, dtype=x.dtype).index_put((dst, src), vals, accumulate=True)
    return a @ x


CASES = {
    "square": (30, 30, 200),
    "bipartite": (40, 12, 90),  # more sources than destinations, like a block
    "duplicates+isolated": (10, 10, 60),  # 60 draws over 100 pairs: repeats, empty rows
    "one-edge": (3, 4, 1),
}


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("feats", [1, 7])
def test_spmm_matches_dense_autograd(case, feats):
    num_src, num_dst, edges = CASES[case]
    src, dst, gen = random_edges(num_src, num_dst, edges, seed=feats)
    vals = torch.rand(edges, generator=gen, dtype=torch.float64)
    x = torch.randn(num_src, feats, generator=gen, dtype=torch.float64)
    adj = Adjacency.from_edges(src, dst, num_src, num_dst)

    v1 = vals.clone().requires_grad_()
    x1 = x.clone().requires_grad_()
    out = spmm(adj, x1, v1[adj.eids])
    v2 = vals.clone().requires_grad_()
    x2 = x.clone().requires_grad_()
    ref = dense_reference(src, dst, num_src, num_dst, v2, x2)
    upstream = torch.randn(ref.shape, generator=gen, dtype=torch.float64)
    (out * upstream).sum().backward()
    (ref * upstream).sum().backward()
    assert out.shape == (num_dst, feats)
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(x1.grad, x2.grad, rtol=0, atol=1e-12)
    torch.testing.assert_close(v1.grad, v2.grad, rtol=0, atol=1e-12)


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("values_grad", [False, True])
def test_spmm_cat_matches_slice_cat_spmm(case, values_grad):
    """[x_dst | A x] and its gradients (to x, and to the values when they need one) equal
    the autograd of the slice + cat + spmm it replaces."""
    num_src, num_dst, edges = CASES[case]
    num_dst = min(num_dst, num_src)  # destinations are the first sources
    src, dst, gen = random_edges(num_src, num_dst, edges, seed=3)
    vals = torch.rand(edges, generator=gen, dtype=torch.float64)
    x = torch.randn(num_src, 5, generator=gen, dtype=torch.float64)
    upstream = torch.randn(num_dst, 10, generator=gen, dtype=torch.float64)
    adj = Adjacency.from_edges(src, dst, num_src, num_dst)
    results = []
    for fused in (True, False):
        xi = x.clone().requires_grad_()
        vi = vals.clone().requires_grad_(values_grad)
        out = spmm_cat(adj, xi, vi) if fused else \
            torch.cat([xi[:num_dst], spmm(adj, xi, vi)], 1)
        (out * upstream).sum().backward()
        results.append((out.detach(), xi.grad, vi.grad))
    (out_f, gx_f, gv_f), (out_r, gx_r, gv_r) = results
    torch.testing.assert_close(out_f, out_r)
    torch.testing.assert_close(gx_f, gx_r)
    if values_grad:
        torch.testing.assert_close(gv_f, gv_r)
    assert out_f.shape == (num_dst, 10)


@pytest.mark.parametrize("reduce", ["sum", "mean"])
def test_spmm_cat_writes_the_aggregate_in_place_bit_for_bit(reduce):
    """The aggregate is scaled straight into the right half (no concatenation): the same
    floats as the slice + spmm + cat it stands for, with and without a gradient, and when
    the rows are read from a feature table."""
    from graphflow.sparse.indexed_rows import IndexedRows

    src, dst, gen = random_edges(30, 12, 90, seed=5)
    adj = Adjacency.from_edges(src, dst, 30, 12)
    table = torch.randn(50, 7, generator=gen)
    index = torch.randperm(50, generator=gen)[:30]
    x = table[index]
    expect = torch.cat([x[:12], spmm(adj, x, reduce=reduce)], 1)
    assert torch.equal(spmm_cat(adj, x.clone().requires_grad_(), reduce=reduce).detach(), expect)
    assert torch.equal(spmm_cat(adj, IndexedRows(table, index), reduce=reduce), expect)
    assert spmm_cat(adj, IndexedRows(table, index), reduce=reduce).is_contiguous()


@pytest.mark.parametrize("path", ["plain", "rows", "grad", "values_grad"])
def test_spmm_cat_ones_appends_a_column_of_ones_on_every_path(path):
    from graphflow.sparse.indexed_rows import IndexedRows

    src, dst, gen = random_edges(20, 8, 50, seed=6)
    adj = Adjacency.from_edges(src, dst, 20, 8)
    x = torch.randn(20, 4, generator=gen)
    values = torch.rand(50, generator=gen, requires_grad=path == "values_grad")
    given = {"rows": IndexedRows(x, torch.arange(20)), "grad": x.clone().requires_grad_()}
    out = spmm_cat(adj, given.get(path, x), values, "mean", ones=True)
    plain = spmm_cat(adj, x, values.detach(), "mean")
    assert out.shape == (8, 9)
    torch.testing.assert_close(out[:, :8].detach(), plain, rtol=0, atol=0)
    assert torch.equal(out[:, 8], torch.ones(8))


def test_spmm_cat_without_grad_and_default_values():
    src, dst, gen = random_edges(8, 5, 20, seed=1)
    adj = Adjacency.from_edges(src, dst, 8, 5)
    x = torch.randn(8, 3, generator=gen)
    out = spmm_cat(adj, x)  # no grad anywhere: no autograd node
    assert out.grad_fn is None
    torch.testing.assert_close(out, torch.cat([x[:5], spmm(adj, x)], 1))


@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("weighted", [False, True])
def test_mean_reduce_matches_dense_row_normalised_autograd(case, weighted):
    """reduce="mean" is D^-1 A x (D: in-degrees counting edges, 0 -> 1), with gradients to x
    and to the edge values, as the dense autograd reference computes them."""
    num_src, num_dst, edges = CASES[case]
    src, dst, gen = random_edges(num_src, num_dst, edges, seed=5)
    vals = torch.rand(edges, generator=gen, dtype=torch.float64) if weighted \
        else torch.ones(edges, dtype=torch.float64)
    x = torch.randn(num_src, 4, generator=gen, dtype=torch.float64)
    adj = Adjacency.from_edges(src, dst, num_src, num_dst)
    deg = torch.bincount(dst, minlength=num_dst).clamp(min=1).to(torch.float64)
    upstream = torch.randn(num_dst, 4, generator=gen, dtype=torch.float64)

    x1 = x.clone().requires_grad_()
    v1 = vals.clone().requires_grad_(weighted)
    out = spmm(adj, x1, v1[adj.eids] if weighted else None, reduce="mean")
    x2 = x.clone().requires_grad_()
    v2 = vals.clone().requires_grad_(weighted)
    ref = dense_reference(src, dst, num_src, num_dst, v2, x2) / deg[:, None]
    (out * upstream).sum().backward()
    (ref * upstream).sum().backward()
    torch.testing.assert_close(out, ref, rtol=0, atol=1e-12)
    torch.testing.assert_close(x1.grad, x2.grad, rtol=0, atol=1e-12)
    if weighted:
        torch.testing.assert_close(v1.grad, v2.grad, rtol=0, atol=1e-12)
    # the same as a sum over the row-normalised values
    torch.testing.assert_close(out.detach(), spmm(adj, x, (vals[adj.eids] if weighted else 1)
                                                  * adj.norm("row", dtype=torch.float64)))


def test_mean_reduce_spmm_cat_multihead_and_gradcheck():
    src, dst, gen = random_edges(7, 4, 15, seed=6)
    adj = Adjacency.from_edges(src, dst, 7, 4)
    x = torch.randn(7, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda x: spmm_cat(adj, x, reduce="mean"), (x,))
    w = torch.rand(15, generator=gen, dtype=torch.float64, requires_grad=True)
    torch.autograd.gradcheck(lambda x, w: spmm(adj, x, w, reduce="mean"), (x, w))
    heads = torch.rand(15, 2, generator=gen, dtype=torch.float64)
    xh = torch.randn(7, 2, 3, generator=gen, dtype=torch.float64)
    out = spmm(adj, xh, heads, reduce="mean")  # (4, 2, 3)
    summed = spmm(adj, xh, heads)
    deg = torch.bincount(dst, minlength=4).clamp(min=1).to(torch.float64)
    torch.testing.assert_close(out, summed / deg[:, None, None])


def test_unknown_reduce_is_a_one_line_error():
    adj = Adjacency.from_edges(torch.tensor([0]), torch.tensor([1]), 2, 2)
    with pytest.raises(DataError, match='reduce must be one of .*"max"'):
        spmm(adj, torch.ones(2, 3), reduce="max")


def test_zero_in_degree_rows_are_zero_and_duplicates_sum():
    # 0 -> 1 twice, 2 -> 1 once; rows 0 and 2 have no in-edges.
    adj = Adjacency.from_edges(torch.tensor([0, 2, 0]), torch.tensor([1, 1, 1]), 3, 3)
    x = torch.tensor([[1.0], [10.0], [100.0]])
    assert spmm(adj, x).flatten().tolist() == [0.0, 102.0, 0.0]


def test_default_values_are_adjacency_values():
    src, dst, gen = random_edges(8, 8, 20, seed=3)
    w = torch.rand(20, generator=gen)
    adj = Adjacency.from_edges(src, dst, 8, 8, values=w)
    x = torch.randn(8, 3, generator=gen)
    torch.testing.assert_close(spmm(adj, x), dense_reference(src, dst, 8, 8, w, x))


def test_float32_and_trailing_dims():
    src, dst, gen = random_edges(9, 5, 30, seed=4)
    adj = Adjacency.from_edges(src, dst, 9, 5)
    x = torch.randn(9, 2, 3, generator=gen)
    out = spmm(adj, x, adj.norm("sym"))
    assert out.shape == (5, 2, 3) and out.dtype == torch.float32
    flat = spmm(adj, x.reshape(9, 6), adj.norm("sym")).reshape(5, 2, 3)
    torch.testing.assert_close(out, flat)


def test_multi_head_values():
    src, dst, gen = random_edges(12, 6, 40, seed=5)
    adj = Adjacency.from_edges(src, dst, 12, 6)
    x = torch.randn(12, 3, 4, generator=gen, dtype=torch.float64, requires_grad=True)
    vals = torch.rand(40, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    out = spmm(adj, x, vals)
    assert out.shape == (6, 3, 4)
    out.square().sum().backward()
    for h in range(3):
        xh = x.detach()[:, h].clone().requires_grad_()
        vh = vals.detach()[:, h].clone().requires_grad_()
        ref = spmm(adj, xh, vh)
        ref.square().sum().backward()
        torch.testing.assert_close(out[:, h], ref)
        torch.testing.assert_close(x.grad[:, h], xh.grad)
        torch.testing.assert_close(vals.grad[:, h], vh.grad)


def test_empty_graph_and_empty_sides():
    none = torch.zeros(0, dtype=torch.int64)
    adj = Adjacency.from_edges(none, none, 4, 3)
    x = torch.randn(4, 5, requires_grad=True)
    v = torch.zeros(0, requires_grad=True)
    out = spmm(adj, x, v)
    assert out.shape == (3, 5) and not out.any()
    out.sum().backward()
    assert x.grad.shape == (4, 5) and not x.grad.any() and v.grad.shape == (0,)
    zero = Adjacency.from_edges(none, none, 0, 0)
    assert spmm(zero, torch.zeros(0, 2)).shape == (0, 2)


def test_transpose_is_built_once_and_reused():
    src, dst, gen = random_edges(20, 20, 80, seed=6)
    adj = Adjacency.from_edges(src, dst, 20, 20)
    norm = adj.norm("sym")
    for _ in range(3):
        x = torch.randn(20, 4, generator=gen, requires_grad=True)
        spmm(adj, x, norm).sum().backward()
        if _ == 0:
            t, tv = adj.transposed(), adj._cache["t_values"]
    assert adj.transposed() is t and adj._cache["t_values"] is tv


def test_sddmm_chunks_give_the_same_answer(monkeypatch):
    src, dst, gen = random_edges(50, 40, 500, seed=7)
    adj = Adjacency.from_edges(src, dst, 50, 40)
    a = torch.randn(40, 6, generator=gen, dtype=torch.float64)
    b = torch.randn(50, 6, generator=gen, dtype=torch.float64)
    whole = sddmm(adj, a, b)
    torch.testing.assert_close(whole, (a @ b.T)[adj.row_index, adj.indices])
    monkeypatch.setattr(spmm_module, "SDDMM_CHUNK_ELEMENTS", 6 * 37)  # 37 edges per chunk
    torch.testing.assert_close(spmm_module.sddmm(adj, a, b), whole)


def test_sddmm_per_head_and_in_chunks(monkeypatch):
    src, dst, gen = random_edges(30, 20, 300, seed=9)
    adj = Adjacency.from_edges(src, dst, 30, 20)
    a = torch.randn(20, 3, 5, generator=gen, dtype=torch.float64)
    b = torch.randn(30, 3, 5, generator=gen, dtype=torch.float64)
    expected = torch.stack([(a[:, h] @ b[:, h].T)[adj.row_index, adj.indices] for h in range(3)],
                           dim=1)  # (nnz, 3)
    torch.testing.assert_close(sddmm(adj, a, b), expected)
    monkeypatch.setattr(spmm_module, "SDDMM_CHUNK_ELEMENTS", 15 * 41)  # 41 edges per chunk
    torch.testing.assert_close(spmm_module.sddmm(adj, a, b), expected)


def test_multi_head_scalar_features():
    src, dst, gen = random_edges(10, 6, 25, seed=10)
    adj = Adjacency.from_edges(src, dst, 10, 6)
    x = torch.randn(10, 4, generator=gen)
    vals = torch.rand(25, 4, generator=gen)
    out = spmm(adj, x, vals)
    assert out.shape == (6, 4)
    torch.testing.assert_close(out, spmm(adj, x[:, :, None], vals)[:, :, 0])
    torch.testing.assert_close(out[:, 1], spmm(adj, x[:, 1], vals[:, 1]))


def test_bad_inputs_have_clear_messages():
    adj = Adjacency.from_edges(torch.tensor([0, 1]), torch.tensor([1, 2]), 3, 3)
    with pytest.raises(DataError, match="features have 4 rows but the adjacency has 3 source"):
        spmm(adj, torch.zeros(4, 2))
    with pytest.raises(DeviceError, match="features are on meta but the adjacency is on cpu"):
        spmm(adj, torch.zeros(3, 2, device="meta"))
    with pytest.raises(DeviceError, match="edge values are on meta but the adjacency is on cpu"):
        spmm(adj, torch.zeros(3, 2), torch.ones(2, device="meta"))
    with pytest.raises(DataError, match="spmm got 5 edge values for 2 edges"):
        spmm(adj, torch.zeros(3, 2), torch.ones(5))
    with pytest.raises(DataError, match=r"values must have shape \(2,\) or \(2, H\)"):
        spmm(adj, torch.zeros(3, 2), torch.ones(2, 4))
    with pytest.raises(DataError, match="must be a floating-point tensor"):
        spmm(adj, torch.zeros(3, 2), torch.ones(2, dtype=torch.int64))
    with pytest.raises(DataError, match="spmm needs a dense tensor, got list"):
        spmm(adj, [[0.0]])  # type: ignore[arg-type]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_cuda_matches_cpu():
    src, dst, gen = random_edges(64, 64, 512, seed=8)
    vals = torch.rand(512, generator=gen)
    x = torch.randn(64, 8, generator=gen)
    cpu = Adjacency.from_edges(src, dst, 64, 64)
    gpu = cpu.to("cuda")
    results = []
    for adj in (cpu, gpu):
        # fresh leaves on each device (x.to("cpu") is x itself, which must not carry grad on)
        xs = x.to(adj.device, copy=True).requires_grad_()
        v = vals.to(adj.device, copy=True).requires_grad_()
        out = spmm(adj, xs, v)
        out.square().sum().backward()
        results.append([out.cpu(), xs.grad.cpu(), v.grad.cpu()])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CASES)
def test_edge_sum_adds_each_entrys_message_into_its_row(case):
    num_src, num_dst, edges = CASES[case]
    src, dst, gen = random_edges(num_src, num_dst, edges, seed=3)
    adj = Adjacency.from_edges(src, dst, num_src, num_dst)
    msg = torch.randn(adj.nnz, 2, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    out = spmm_module.edge_sum(adj, msg)
    ref = torch.zeros(num_dst, 2, 3, dtype=torch.float64).index_put(
        (adj.row_index,), msg, accumulate=True)
    torch.testing.assert_close(out, ref)
    up = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    (g,) = torch.autograd.grad((out * up).sum(), msg)
    torch.testing.assert_close(g, up[adj.row_index])  # each message gets its row's gradient


def test_edge_sum_and_gather_check_the_row_count_and_device():
    adj = Adjacency.from_edges(torch.tensor([0, 1]), torch.tensor([1, 0]), 3, 2)
    with pytest.raises(DataError, match=r"edge_sum: 3 rows of messages for an adjacency that "
                                        r"needs 2"):
        spmm_module.edge_sum(adj, torch.ones(3, 4))
    with pytest.raises(DeviceError, match=r"edge_sum: messages on meta, adjacency on cpu"):
        spmm_module.edge_sum(adj, torch.ones(2, 4, device="meta"))
    with pytest.raises(DataError, match=r"edge_gather: 2 rows of x for an adjacency that "
                                        r"needs 3"):
        spmm_module.edge_gather(adj, torch.ones(2, 4))


@pytest.mark.parametrize("case", CASES)
def test_edge_gather_takes_each_entrys_source_and_sums_gradients_per_source(case):
    num_src, num_dst, edges = CASES[case]
    src, dst, gen = random_edges(num_src, num_dst, edges, seed=4)
    adj = Adjacency.from_edges(src, dst, num_src, num_dst)
    x = torch.randn(num_src, 2, 3, generator=gen, dtype=torch.float64, requires_grad=True)
    out = spmm_module.edge_gather(adj, x)
    assert torch.equal(out, x[adj.indices])
    up = torch.randn(out.shape, generator=gen, dtype=torch.float64)
    (g,) = torch.autograd.grad((out * up).sum(), x)
    ref = torch.zeros_like(x).index_put((adj.indices,), up, accumulate=True)
    torch.testing.assert_close(g, ref)


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
def test_edge_ops_on_cuda_match_cpu():
    """edge_gather and edge_sum (the kernel over CSR positions, int32 on both devices) give the
    CPU's outputs and gradients on CUDA."""
    src, dst, gen = random_edges(64, 48, 512, seed=9)
    cpu = Adjacency.from_edges(src, dst, 64, 48)
    x = torch.randn(64, 8, generator=gen)
    up = torch.randn(48, 8, generator=gen)
    results = []
    for adj in (cpu, cpu.to("cuda")):
        xs = x.to(adj.device, copy=True).requires_grad_()
        msg = torch.relu(spmm_module.edge_gather(adj, xs))
        out = spmm_module.edge_sum(adj, msg)
        (out * up.to(adj.device)).sum().backward()
        results.append([out.cpu(), xs.grad.cpu()])
    for a, b in zip(*results):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
