import pytest
import scipy.sparse
import torch

from graphflow.errors import ConfigError, DataError, DeviceError
from graphflow.sparse import SparseFeatures, as_features
from graphflow.sparse.features import density, dropout, linear, matmul, to_dense


def sparse_matrix(n: int = 9, f: int = 7, keep: float = 0.25, seed: int = 0) -> torch.Tensor:
    gen = torch.Generator().manual_seed(seed)
    x = torch.randn(n, f, generator=gen, dtype=torch.float64)
    x = x * (torch.rand(n, f, generator=gen) < keep)
    x[3] = 0  # an empty row
    return x


def test_from_dense_round_trip_and_facts():
    x = sparse_matrix()
    sf = SparseFeatures.from_dense(x)
    assert sf.shape == (9, 7) and sf.size(1) == 7 and len(sf) == 9 and sf.dim() == 2
    assert sf.nnz == int((x != 0).sum()) and sf.dtype == torch.float64
    assert sf.density == pytest.approx(density(x))
    assert torch.equal(sf.to_dense(), x)
    assert "SparseFeatures(shape=(9, 7)" in repr(sf)


def test_from_csr_matches_from_dense():
    x = sparse_matrix()
    csr = scipy.sparse.csr_matrix(x.numpy())  # e.g. Planetoid features
    parts = [torch.from_numpy(a) for a in (csr.indptr, csr.indices, csr.data)]
    sf = SparseFeatures.from_csr(*parts, 7)
    assert torch.equal(sf.to_dense(), x)
    with pytest.raises(DataError, match="column out of range for 5 features"):
        SparseFeatures.from_csr(*parts, 5)


def test_as_features_threshold():
    x = sparse_matrix(keep=0.25)  # density ~0.2
    assert isinstance(as_features(x, 0.5), SparseFeatures)
    assert as_features(x, 0.05) is x
    assert as_features(x, 0.0) is x  # 0 turns sparse input off
    sf = SparseFeatures.from_dense(x)
    assert as_features(sf, 0.5) is sf
    with pytest.raises(ConfigError, match=r"threshold must lie in \[0, 1\], got 1.5"):
        as_features(x, 1.5)


@pytest.mark.parametrize("bias", [True, False])
def test_linear_and_matmul_gradients_match_dense(bias):
    x = sparse_matrix()
    sf = SparseFeatures.from_dense(x)
    gen = torch.Generator().manual_seed(1)
    w = torch.randn(4, 7, generator=gen, dtype=torch.float64)
    b = torch.randn(4, generator=gen, dtype=torch.float64) if bias else None
    w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
    b1 = b2 = None
    if bias:
        b1, b2 = b.clone().requires_grad_(), b.clone().requires_grad_()
    out_s, out_d = linear(sf, w1, b1), linear(x, w2, b2)
    torch.testing.assert_close(out_s, out_d)
    out_s.square().sum().backward()
    out_d.square().sum().backward()
    torch.testing.assert_close(w1.grad, w2.grad)
    if bias:
        torch.testing.assert_close(b1.grad, b2.grad)
    wt = w.T.contiguous()
    torch.testing.assert_close(matmul(sf, wt), x @ wt)


def test_head_index_select_and_getitem():
    x = sparse_matrix()
    sf = SparseFeatures.from_dense(x)
    assert torch.equal(sf.head(5).to_dense(), x[:5])
    assert torch.equal(sf[:4].to_dense(), x[:4])
    assert sf[:] is sf and sf.head(9) is sf
    idx = torch.tensor([8, 3, 0, 3, 5])
    assert torch.equal(sf.index_select(idx).to_dense(), x[idx])
    assert torch.equal(sf[idx].to_dense(), x[idx])
    mask = torch.tensor([True, False] * 4 + [True])
    assert torch.equal(sf[mask].to_dense(), x[mask])
    assert sf[torch.zeros(0, dtype=torch.int64)].shape == (0, 7)
    with pytest.raises(DataError, match=r"support x\[:n\] and x\[index_tensor\] only"):
        sf[2:5]
    with pytest.raises(DataError, match="cannot take the first 10 rows of 9"):
        sf.head(10)


def test_dropout_touches_values_only():
    sf = SparseFeatures.from_dense(sparse_matrix())
    assert dropout(sf, 0.5, training=False) is sf
    torch.manual_seed(0)
    dropped = dropout(sf, 0.5, training=True)
    assert dropped.structure is sf.structure  # the cached transpose is shared
    kept = dropped.values != 0
    torch.testing.assert_close(dropped.values[kept], sf.values[kept] * 2)
    assert 0 < int(kept.sum()) < sf.nnz
    dense = torch.ones(3, 3)
    assert dropout(dense, 0.0, training=True).equal(dense)


def test_to_and_to_dense_helper():
    sf = SparseFeatures.from_dense(sparse_matrix())
    assert sf.to("cpu") is sf
    f32 = sf.to(dtype=torch.float32)
    assert f32.dtype == torch.float32 and f32.structure is sf.structure
    meta = sf.to("meta")
    assert meta.device.type == "meta" and meta.structure.indptr.device.type == "meta"
    t = torch.ones(2, 2)
    assert to_dense(t) is t and torch.equal(to_dense(sf), sf.to_dense())


def test_bad_inputs():
    with pytest.raises(DataError, match="made from a 2-D float tensor, got Tensor"):
        SparseFeatures.from_dense(torch.ones(3, dtype=torch.int64))
    sf = SparseFeatures.from_dense(sparse_matrix())
    with pytest.raises(DataError, match=f"need {sf.nnz} values, got"):
        sf.with_values(torch.ones(sf.nnz + 1))


def test_weight_device_and_width_are_checked():
    sf = SparseFeatures.from_dense(sparse_matrix())
    with pytest.raises(DeviceError, match="sparse features are on cpu but the layer weight is "
                                          "on meta"):
        linear(sf, torch.ones(4, 7, device="meta"))
    with pytest.raises(DataError, match="sparse features have 7 columns but the layer expects "
                                        "5 input features"):
        matmul(sf, torch.ones(5, 3, dtype=torch.float64))


def test_dense_linear_matches_torch_linear_with_its_weight_gradient_orientation(monkeypatch):
    """graphflow's dense linear (weight gradient as (x^T dY)^T on the CPU) gives F.linear's
    output and gradients, and passes gradcheck, with and without a bias."""
    from graphflow.sparse import features as feats
    from graphflow.sparse import gemm

    monkeypatch.setattr(gemm, "INPUT_MAJOR_MIN_MACS", 0)  # the custom orientation at any size

    g = torch.Generator().manual_seed(0)
    for bias in (True, False):
        x = torch.randn(30, 7, generator=g, dtype=torch.float64, requires_grad=True)
        w = torch.randn(5, 7, generator=g, dtype=torch.float64, requires_grad=True)
        b = torch.randn(5, generator=g, dtype=torch.float64, requires_grad=True) if bias else None
        out = feats.linear(x, w, b)
        assert out.grad_fn is not None and "_Linear" in type(out.grad_fn).__name__
        up = torch.randn(30, 5, generator=g, dtype=torch.float64)
        got = torch.autograd.grad((out * up).sum(), [t for t in (x, w, b) if t is not None])
        ref = torch.nn.functional.linear(x, w, b)
        want = torch.autograd.grad((ref * up).sum(), [t for t in (x, w, b) if t is not None])
        torch.testing.assert_close(out, ref)
        for a, c in zip(got, want):
            torch.testing.assert_close(a, c)
        torch.autograd.gradcheck(lambda x, w: feats.linear(x, w, b), (x, w))
    # no weight gradient wanted, or under autocast: torch's own linear
    w0 = torch.randn(5, 7, generator=g)
    assert feats.linear(torch.randn(3, 7), w0).grad_fn is None
    with torch.autocast("cpu", dtype=torch.bfloat16):
        out = feats.linear(torch.randn(3, 7), w0.requires_grad_())
    assert "_Linear" not in type(out.grad_fn).__name__
