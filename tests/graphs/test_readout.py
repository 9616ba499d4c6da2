"""Readouts against DGL's pooling layers and per-graph loops."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.graphs.readout import Readout, segment_softmax


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
