"""Readouts against DGL's pooling layers and per-graph loops."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.graphs.readout import Readout, segment_softmax, segment_sum


def setup():
    gen = torch.Generator().manual_seed(0)
    sizes = torch.tensor([3, 1, 5, 2])
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    seg = torch.repeat_interleave(torch.arange(4), sizes)
    h = torch.randn(int(sizes.sum()), 6, generator=gen)
    return h, seg, ptr, sizes


@pytest.mark.parametrize("pooling", ["sum", "mean", "max"])
def test_pooling_matches_dgl(pooling):
    from dgl.nn import AvgPooling, MaxPooling, SumPooling

    h, seg, ptr, sizes = setup()
    g = dgl.batch([dgl.graph(([], []), num_nodes=int(n)) for n in sizes])
    ref = {"sum": SumPooling(), "mean": AvgPooling(), "max": MaxPooling()}[pooling](g, h)
    out = Readout(pooling, 6)(h, seg, ptr)
    assert torch.allclose(out, ref, atol=1e-6)


def test_max_pooling_has_gradients():
    h, seg, ptr, _ = setup()
    h.requires_grad_()
    Readout("max", 6)(h, seg, ptr).sum().backward()
    assert h.grad.sum().item() == pytest.approx(4 * 6)  # one winner per graph and feature


def test_attention_pooling_matches_dgl_global_attention():
    from dgl.nn import GlobalAttentionPooling

    h, seg, ptr, sizes = setup()
    readout = Readout("attention", 6)
    ref_layer = GlobalAttentionPooling(readout.gate)
    g = dgl.batch([dgl.graph(([], []), num_nodes=int(n)) for n in sizes])
    assert torch.allclose(readout(h, seg, ptr), ref_layer(g, h), atol=1e-6)


def test_segment_softmax_sums_to_one_per_graph():
    h, seg, ptr, _ = setup()
    alpha = segment_softmax(h[:, 0] * 50, seg, ptr)  # large scores: max subtraction matters
    assert torch.allclose(torch.zeros(4).index_add(0, seg, alpha), torch.ones(4))


@pytest.mark.parametrize("pooling", ["sum", "mean", "attention"])
def test_pooling_gradients_match_dgl(pooling):
    from dgl.nn import AvgPooling, GlobalAttentionPooling, SumPooling

    h, seg, ptr, sizes = setup()
    h = h.double()
    readout = Readout(pooling, 6).double()
    ref_layer = {"sum": SumPooling(), "mean": AvgPooling(),
                 "attention": GlobalAttentionPooling(readout.gate)}[pooling]
    g = dgl.batch([dgl.graph(([], []), num_nodes=int(n)) for n in sizes])
    w = torch.randn(4, 6, dtype=torch.float64)
    h1, h2 = h.clone().requires_grad_(), h.clone().requires_grad_()
    (readout(h1, seg, ptr) * w).sum().backward()
    (ref_layer(g, h2) * w).sum().backward()
    torch.testing.assert_close(h1.grad, h2.grad)


def test_segment_sums_empty_segments_heads_and_other_dtypes():
    sizes = torch.tensor([2, 0, 3])  # a graph without nodes pools to zeros
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    seg = torch.repeat_interleave(torch.arange(3), sizes)
    h = torch.randn(5, 2, 3, dtype=torch.float64, requires_grad=True)  # (n, heads, F)
    out = Readout("sum", 3)(h, seg, ptr)
    assert out.shape == (3, 2, 3)
    torch.testing.assert_close(out[1], torch.zeros(2, 3, dtype=torch.float64))
    torch.testing.assert_close(out[2], h.detach()[2:].sum(0))
    assert torch.autograd.gradcheck(lambda t: Readout("mean", 3)(t, seg, ptr), (h,))
    none = Readout("sum", 4)(torch.zeros(0, 4, dtype=torch.float64), seg[:0],
                             torch.zeros(3, dtype=torch.int64))  # a batch without nodes
    assert torch.equal(none, torch.zeros(2, 4, dtype=torch.float64))
    half = h.detach()[:, 0].half()
    torch.testing.assert_close(Readout("sum", 3)(half, seg, ptr),
                               segment_sum(half.float(), seg, 3).half())


def test_set2set_matches_dgl_with_gradients():
    """The same LSTM in both: DGL's Set2Set (3 rounds, one layer) and ours, outputs and the
    gradients of the node vectors and of the LSTM's weights."""
    from dgl.nn import Set2Set

    h, seg, ptr, sizes = setup()
    torch.manual_seed(0)
    ref_layer = Set2Set(6, n_iters=3, n_layers=1)
    readout = Readout("set2set", 6)
    readout.lstm.load_state_dict(ref_layer.lstm.state_dict())
    assert readout.width == 12
    g = dgl.batch([dgl.graph(([], []), num_nodes=int(n)) for n in sizes])
    ours_h, ref_h = h.clone().requires_grad_(), h.clone().requires_grad_()
    out, ref = readout(ours_h, seg, ptr), ref_layer(g, ref_h)
    assert out.shape == ref.shape == (4, 12)
    torch.testing.assert_close(out, ref, atol=1e-6, rtol=1e-5)
    weights = torch.randn(4, 12)  # a loss that weighs every output differently
    (out * weights).sum().backward()
    (ref * weights).sum().backward()
    torch.testing.assert_close(ours_h.grad, ref_h.grad, atol=1e-6, rtol=1e-5)
    for (name, p), q in zip(readout.lstm.named_parameters(), ref_layer.lstm.parameters()):
        torch.testing.assert_close(p.grad, q.grad, atol=1e-6, rtol=1e-5, msg=name)
