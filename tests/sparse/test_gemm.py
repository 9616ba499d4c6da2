"""graphflow.sparse.gemm: the dense products of a linear map through oneDNN or torch."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from graphflow.errors import ConfigError
from graphflow.sparse import gemm
from graphflow.sparse.features import linear

needs_onednn = pytest.mark.skipif(not gemm.onednn_available(),
                                  reason="torch without oneDNN (mkldnn)")


def grads(fn, x, w, b, up):
    out = fn(x, w, b)
    ins = [t for t in (x, w, b) if t is not None and t.requires_grad]
    return out, torch.autograd.grad((out * up).sum(), ins)


B = gemm.ROW_BUCKET


@needs_onednn
@pytest.mark.parametrize("rows", [1, B - 1, B, 2 * B + 188, 16 * B + 3])  # torch only, oneDNN
# only, and both: oneDNN on the row buckets, torch on the rest
@pytest.mark.parametrize("bias", [True, False])
def test_onednn_linear_matches_float64_linear_with_every_gradient(rows, bias):
    g = torch.Generator().manual_seed(rows)
    x = torch.randn(rows, 96, generator=g, requires_grad=True)
    w = torch.randn(80, 96, generator=g, requires_grad=True)
    b = torch.randn(80, generator=g, requires_grad=True) if bias else None
    up = torch.randn(rows, 80, generator=g)
    with gemm.applied("onednn"), pytest.MonkeyPatch.context() as mp:
        mp.setattr(gemm, "MIN_MACS", 0)  # the small shapes too
        out, got = grads(gemm.linear, x, w, b, up)
        assert type(out.grad_fn).__name__.startswith("_OneDNNLinear")
    d = [t.detach().double().requires_grad_() if t is not None else None for t in (x, w, b)]
    ref, want = grads(F.linear, *d, up.double())
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-4)
    for a, c in zip(got, want):
        torch.testing.assert_close(a.double(), c, rtol=1e-5, atol=1e-3)


@needs_onednn
def test_onednn_output_is_fresh_contiguous_and_can_be_changed_in_place():
    """The (M, N) result is channels-last memory read as rows, not a view: a relu in place
    after it (as GNNStack does) keeps autograd's gradients right."""
    g = torch.Generator().manual_seed(0)
    for rows in (2 * B, 2 * B + 188):  # oneDNN only; oneDNN and torch stacked
        x = torch.randn(rows, 128, generator=g)
        w = torch.randn(64, 128, generator=g, requires_grad=True)
        with gemm.applied("onednn"):
            out = gemm.linear(x, w)
            assert out.is_contiguous() and out._base is None
            y = F.relu(out, inplace=True)
            (gw,) = torch.autograd.grad(y.sum(), [w])
        wd = w.detach().double().requires_grad_()
        (want,) = torch.autograd.grad(F.relu(F.linear(x.double(), wd)).sum(), [wd])
        torch.testing.assert_close(gw.double(), want, rtol=1e-5, atol=1e-3)


@needs_onednn
def test_onednn_takes_non_contiguous_operands():
    """A transposed weight (GCN's (F_in, F_out) parameter read as (F_out, F_in)) and a
    column slice of the input give the same products."""
    g = torch.Generator().manual_seed(1)
    big = torch.randn(500, 300, generator=g)
    x = big[:, 10:210]  # (500, 200), not contiguous
    w_in_out = torch.randn(200, 64, generator=g, requires_grad=True)
    with gemm.applied("onednn"):
        out = gemm.linear(x, w_in_out.t())
        (gw,) = torch.autograd.grad(out.square().sum(), [w_in_out])
    wd = w_in_out.detach().double().requires_grad_()
    ref = x.double() @ wd
    (want,) = torch.autograd.grad(ref.square().sum(), [wd])
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(gw.double(), want, rtol=1e-5, atol=1e-2)


@needs_onednn
def test_onednn_is_repeatable_bit_for_bit():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(3000, 200, generator=g)
    w = torch.randn(256, 200, generator=g, requires_grad=True)
    b = torch.randn(256, generator=g, requires_grad=True)
    up = torch.randn(3000, 256, generator=g)
    with gemm.applied("onednn"):
        first = grads(gemm.linear, x, w, b, up)
        second = grads(gemm.linear, x, w, b, up)
    assert torch.equal(first[0], second[0])
    assert all(torch.equal(a, c) for a, c in zip(first[1], second[1]))


def test_what_goes_to_torch_whatever_the_choice(monkeypatch):
    """float64, tiny products, autocast and the torch choice use torch's kernels; products
    below INPUT_MAJOR_MIN_MACS take F.linear's own autograd, larger ones the custom one."""
    g = torch.Generator().manual_seed(3)
    w = torch.randn(256, 200, generator=g, requires_grad=True)
    with gemm.applied("auto"):
        f64 = gemm.linear(torch.randn(3000, 200, dtype=torch.float64, generator=g),
                          w.detach().double().requires_grad_())
        assert "OneDNN" not in type(f64.grad_fn).__name__
        tiny = gemm.linear(torch.randn(3, 200, generator=g), w)
        assert "OneDNN" not in type(tiny.grad_fn).__name__
        with torch.autocast("cpu", dtype=torch.bfloat16):
            cast = gemm.linear(torch.randn(3000, 200, generator=g), w)
        assert "OneDNN" not in type(cast.grad_fn).__name__
    with gemm.applied("torch"):
        out = gemm.linear(torch.randn(3000, 200, generator=g), w)
        assert type(out.grad_fn).__name__ == "MmBackward0"  # 154M multiply-adds: F.linear
        monkeypatch.setattr(gemm, "INPUT_MAJOR_MIN_MACS", 3000 * 200 * 256)
        out = gemm.linear(torch.randn(3000, 200, generator=g), w)
        assert type(out.grad_fn).__name__.startswith("_Linear")


@pytest.mark.parametrize("rows, k, input_major", [
    (7000, 4, True),  # a GINE edge map: narrow input, the custom orientation
    (7000, 15, True),
    (7000, 16, False),  # 16 wide: F.linear's own (they tied there)
    (20, 4, False),  # too small for the Function's fixed cost
])
def test_narrow_inputs_take_the_input_major_weight_gradient(rows, k, input_major):
    g = torch.Generator().manual_seed(5)
    # float64, so the two summation orders agree to the test's tolerance
    x = torch.rand(rows, k, generator=g, dtype=torch.float64)
    w = torch.randn(64, k, generator=g, dtype=torch.float64, requires_grad=True)
    b = torch.randn(64, generator=g, dtype=torch.float64, requires_grad=True)
    dy = torch.randn(rows, 64, generator=g, dtype=torch.float64)
    with gemm.applied("torch"):
        out = gemm.linear(x, w, b)
    assert type(out.grad_fn).__name__.startswith("_Linear") is input_major
    out.backward(dy)
    w2, b2 = w.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    torch.nn.functional.linear(x, w2, b2).backward(dy)
    torch.testing.assert_close(w.grad, w2.grad)  # the same gradient, another product order
    torch.testing.assert_close(b.grad, b2.grad)


def test_applied_restores_the_previous_choice_and_names_bad_ones():
    before = gemm.current()
    with gemm.applied("torch") as info:
        assert info == {"requested": "torch", "backend": "torch"}
        assert gemm.current() == "torch"
    assert gemm.current() == before
    with pytest.raises(ConfigError, match='gemm: expected "auto" .*"onednn" or "torch" for the '
                                          'CPU dense products, got "mkl"'):
        with gemm.applied("mkl"):
            pass
    assert gemm.current() == before


@pytest.mark.filterwarnings("ignore:TF32 acceleration")
def test_onednn_disabled_in_torch_falls_back_or_refuses():
    """torch.backends.mkldnn.flags(enabled=False): "auto" means torch, "onednn" is refused
    with the fix."""
    with torch.backends.mkldnn.flags(enabled=False):
        assert gemm.resolve("auto") == "torch"
        with pytest.raises(ConfigError, match='gemm: "onednn" needs torch built with oneDNN '
                                              '.*; use "auto" or "torch"'):
            with gemm.applied("onednn"):
                pass


@needs_onednn
def test_sparse_features_linear_routes_dense_inputs_here(monkeypatch):
    """graphflow.sparse.features.linear (what the layers call) uses the same dispatch."""
    monkeypatch.setattr(gemm, "INPUT_MAJOR_MIN_MACS", 0)
    x = torch.randn(2000, 128)
    w = torch.randn(64, 128, requires_grad=True)
    with gemm.applied("onednn"):
        assert type(linear(x, w).grad_fn).__name__.startswith("_OneDNNLinear")
    with gemm.applied("torch"):
        assert type(linear(x, w).grad_fn).__name__.startswith("_Linear")


@needs_onednn
@pytest.mark.parametrize("k, n", [(3, 5), (1, 64), (1433, 7)])  # narrow and wide, off 16
def test_onednn_odd_widths_match_float64(k, n):
    g = torch.Generator().manual_seed(k * n)
    x = torch.randn(2 * B + 7, k, generator=g, requires_grad=True)
    w = torch.randn(n, k, generator=g, requires_grad=True)
    b = torch.randn(n, generator=g, requires_grad=True)
    up = torch.randn(x.shape[0], n, generator=g)
    with gemm.applied("onednn"), pytest.MonkeyPatch.context() as mp:
        mp.setattr(gemm, "MIN_MACS", 0)
        out, got = grads(gemm.linear, x, w, b, up)
        assert type(out.grad_fn).__name__.startswith("_OneDNNLinear")
    d = [t.detach().double().requires_grad_() for t in (x, w, b)]
    ref, want = grads(F.linear, *d, up.double())
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-4)
    for a, c in zip(got, want):
        torch.testing.assert_close(a.double(), c, rtol=1e-5, atol=1e-3)


def test_shape_buckets_split_at_size_and_width():
    assert gemm.bucket(1024, 1024, 32) == "large-narrow"  # 2^25 multiply-adds: large
    assert gemm.bucket(1023, 1024, 32) == "small-narrow"
    assert gemm.bucket(1024, 512, 64) == "large-wide"  # 64 outputs: wide
    assert gemm.bucket(16, 16, 64) == "small-wide"
    assert {gemm.bucket(*s) for s in [(4096, 256, 256), (4096, 1024, 16), (1024, 128, 128),
                                      (1024, 512, 16)]} == set(gemm.BUCKETS)
