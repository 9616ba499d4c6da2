"""graphflow.sparse.dropout: torch's dropout contract, with masks from raw random bits."""

import pytest
import torch
import torch.nn.functional as F

from graphflow.sparse.dropout import MIN_ELEMENTS, dropout, keep_mask


@pytest.mark.parametrize("p", [0.5, 0.25, 0.1, 0.3, 0.9])
def test_drop_rate_and_scale(p):
    torch.manual_seed(0)
    x = torch.rand(400, 500) + 0.5  # no zeros of its own
    y = dropout(x, p, True)
    dropped = (y == 0).float().mean().item()
    # 200k Bernoulli(p) draws: standard deviation below 0.0012
    assert abs(dropped - p) < 0.006
    kept = y != 0
    torch.testing.assert_close(y[kept], x[kept] / (1 - p))


def test_masks_of_one_bit_one_byte_and_16_bits():
    torch.manual_seed(1)
    for p in (0.5, 0.25, 0.3):  # one random bit, one byte, 16 bits per element
        mask = keep_mask(torch.Size([1 << 20]), p)
        assert mask.dtype == torch.bool and mask.shape == (1 << 20,)
        assert abs(mask.float().mean().item() - (1 - p)) < 0.003  # sd 0.0005
    assert abs(round(0.3 * 65536) / 65536 - 0.3) <= 2**-17
    # bool values are 0 / 1 bytes, so that arithmetic on the mask stays exact
    assert set(keep_mask(torch.Size([4096]), 0.5).view(torch.uint8).unique().tolist()) == {0, 1}


def test_gradient_is_the_same_mask_and_scale():
    torch.manual_seed(2)
    x = torch.randn(64, 128, dtype=torch.float64, requires_grad=True)
    y = dropout(x, 0.4, True)
    g = torch.randn_like(y)
    y.backward(g)
    keep = (y != 0).double()
    torch.testing.assert_close(x.grad, g * keep / 0.6)
    assert torch.autograd.gradcheck(lambda t: dropout(t, 0.4, True, torch.Generator().manual_seed(3)),
                                    (torch.randn(64, 80, dtype=torch.float64, requires_grad=True),))


def test_a_seed_repeats_the_mask_and_a_new_draw_changes_it():
    x = torch.randn(100, 100)
    torch.manual_seed(5)
    a, b = dropout(x, 0.5, True), dropout(x, 0.5, True)
    torch.manual_seed(5)
    assert torch.equal(dropout(x, 0.5, True), a)
    assert not torch.equal(a, b)
    g = torch.Generator().manual_seed(9)
    c = dropout(x, 0.5, True, g)
    assert torch.equal(c, dropout(x, 0.5, True, torch.Generator().manual_seed(9)))


def test_eval_zero_and_one_and_small_tensors():
    x = torch.randn(100, 100)
    assert dropout(x, 0.5, False) is x
    assert dropout(x, 0.0, True) is x
    assert torch.count_nonzero(dropout(x, 1.0, True)) == 0
    small = torch.ones(MIN_ELEMENTS - 1)
    torch.manual_seed(4)
    expected = F.dropout(small, 0.5, True)  # torch's own draw below MIN_ELEMENTS
    torch.manual_seed(4)
    assert torch.equal(dropout(small, 0.5, True), expected)
    with pytest.raises(ValueError, match=r"dropout probability must be in \[0, 1\], got 1.5"):
        dropout(x, 1.5, True)


def test_half_precision_and_non_contiguous_input():
    x = torch.randn(200, 300).t()  # (300, 200), not contiguous
    y = dropout(x, 0.5, True)
    assert y.shape == x.shape
    kept = y != 0
    torch.testing.assert_close(y[kept], 2 * x[kept])
    h = dropout(torch.ones(100, 100, dtype=torch.bfloat16), 0.25, True)
    scaled = torch.tensor(1 / 0.75, dtype=torch.bfloat16).item()  # 1.3359 in bfloat16
    assert h.dtype == torch.bfloat16 and set(h.unique().tolist()) == {0.0, scaled}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
def test_cuda_uses_torch_dropout():
    x = torch.ones(1000, 100, device="cuda")
    y = dropout(x, 0.5, True)
    assert y.device.type == "cuda" and abs((y == 0).float().mean().item() - 0.5) < 0.02
