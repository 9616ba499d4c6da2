"""Pair decoders: the positive and negative pairs scored in one pass equal two passes."""

import pytest
import torch

from graphflow.linkpred.decoders import decode, decode_pairs, make_decoder


@pytest.mark.parametrize("name", ["dot", "mlp", "bilinear"])
def test_decode_pairs_equals_two_decodes_with_their_gradients(name):
    torch.manual_seed(0)
    dec = make_decoder(name, 6)
    h = torch.randn(9, 6, requires_grad=True)
    pos = torch.tensor([[0, 3, 5, 8], [1, 2, 2, 7]])
    neg = torch.tensor([[0, 3, 5, 8, 0, 3, 5, 8], [4, 4, 6, 1, 2, 0, 8, 3]])  # k = 2
    p1, n1 = decode_pairs(dec, h, pos, neg)
    g1 = torch.autograd.grad((p1.sum() - 2 * n1.square().sum()), h)[0]
    p2, n2 = decode(dec, h, pos[0], pos[1]), decode(dec, h, neg[0], neg[1])
    g2 = torch.autograd.grad((p2.sum() - 2 * n2.square().sum()), h)[0]
    assert p1.shape == (4,) and n1.shape == (8,)
    torch.testing.assert_close(p1, p2)
    torch.testing.assert_close(n1, n2)
    torch.testing.assert_close(g1, g2)


def test_dot_pairs_with_one_gradient_buffer_equal_autograds_gather_and_product():
    """The dot decoder's pairs go through one autograd node whose backward adds both
    scatters into one buffer: the scores and the gradient equal the gathers' own autograd,
    repeated rows and a node on both sides of a pair included."""
    torch.manual_seed(1)
    dec = make_decoder("dot", 5)
    h = torch.randn(7, 5, dtype=torch.float64, requires_grad=True)
    u = torch.tensor([0, 3, 3, 6, 2, 2])
    v = torch.tensor([1, 3, 4, 6, 0, 5])
    s = decode(dec, h, u, v)
    assert type(s.grad_fn).__name__ == "_DotPairsBackward"
    g1 = torch.autograd.grad((s * torch.arange(6.0, dtype=torch.float64)).sum(), h)[0]
    ref = dec(h.index_select(0, u), h.index_select(0, v))
    g2 = torch.autograd.grad((ref * torch.arange(6.0, dtype=torch.float64)).sum(), h)[0]
    torch.testing.assert_close(s, ref)
    torch.testing.assert_close(g1, g2)
    torch.autograd.gradcheck(lambda t: decode(dec, t, u, v), (h,))
    with torch.no_grad():  # no autograd node without a gradient to give
        assert decode(dec, h, u, v).grad_fn is None
