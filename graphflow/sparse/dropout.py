r"""Dropout with a CPU mask that costs a fraction of torch's: ``dropout(x, p, training)``.

Same contract as ``torch.nn.functional.dropout``: in training, every element is kept with
probability :math:`1 - p` and scaled by :math:`1 / (1 - p)`, else zeroed; the gradient is the
output gradient times the same mask and scale.

.. math::
    y = x \odot m \,/\, (1 - p), \qquad m_i \sim \mathrm{Bernoulli}(1 - p), \qquad
    \partial \ell / \partial x = \partial \ell / \partial y \odot m \,/\, (1 - p)

**Why.** On the CPU, torch draws each Bernoulli from its Mersenne Twister one element at a
time: 76 ms for the 82k x 100 input features of a sampled 1M-node GraphSAGE batch, 40 ms for
its 16k x 256 hidden layer forward and backward (p = 0.5, 2 threads, this repository's 2-core
machine, ``benchmarks/dropout.py``), against ~47 ms for the whole batch without dropout. Here the mask comes from raw random bits: one
``random_raw`` call of NumPy's PCG64 fills 64 bits per draw; each element takes one bit
(``p = 0.5``) or compares a byte or 16-bit word with a threshold: 4.1 and 5.9 ms for the
two tensors above.

**Rate.** With ``t`` random bits per element (1 for ``p = 0.5``; 8 when ``256 p`` is a whole
number, as for 0.25 or 0.125; else 16), the drop probability is ``round(p 2^t) / 2^t``:
exactly ``p`` for those rates, within ``2^-17`` of it otherwise (torch's own draw compares a
24-bit float).

**Seeds.** PCG64 is seeded by one 63-bit draw from torch's default CPU generator (or the
``generator`` given), so ``torch.manual_seed`` makes the masks repeatable, as with torch's
dropout; the masks themselves differ from torch's. Other devices, and tensors below
:data:`MIN_ELEMENTS`, use ``torch.nn.functional.dropout``.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F

# Below this many elements torch's per-element draw costs less than a generator's set-up.
MIN_ELEMENTS = 1 << 12


def dropout(x: torch.Tensor, p: float, training: bool = True,
            generator: torch.Generator | None = None) -> torch.Tensor:
    """``x`` with each element zeroed with probability ``p`` and the rest scaled by
    ``1 / (1 - p)`` when ``training`` (see the module docstring); ``x`` itself otherwise.

    :param x: any-shape floating-point tensor.
    :param p: drop probability in ``[0, 1]``.
    :param generator: CPU generator that seeds the mask (default: torch's default one).
    """
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if x.device.type != "cpu" or p == 1.0 or x.numel() < MIN_ELEMENTS:
        return F.dropout(x, p, True)
    return _MaskScale.apply(x, keep_mask(x.shape, p, generator), 1.0 / (1.0 - p))


def keep_mask(shape: torch.Size, p: float, generator: torch.Generator | None = None) -> torch.Tensor:
    """A bool tensor of ``shape``, each element True with probability ``1 - p`` (rounded as
    in the module docstring), on the CPU."""
    n = int(np.prod(shape, dtype=np.int64))
    seed = int(torch.randint(0, 2**63 - 1, (1,), generator=generator))
    bits = np.random.PCG64(seed)
    if p == 0.5:  # one random bit per element: 0.4 ms for 8.2M against 2.8 ms for bytes
        raw = np.unpackbits(bits.random_raw(-(-n // 64)).view(np.uint8))[:n]  # (n,) 0 / 1
        return torch.from_numpy(raw).view(torch.bool).view(shape)
    byte_rate = p * 256
    if byte_rate == int(byte_rate):
        raw = bits.random_raw(-(-n // 8)).view(np.uint8)[:n]  # (n,) uniform bytes
        return torch.from_numpy(raw).view(shape) >= int(byte_rate)
    # 16 bits: a uniform int16 v in [-2^15, 2^15) is >= round(p 2^16) - 2^15 with probability
    # 1 - round(p 2^16) / 2^16
    raw = bits.random_raw(-(-n // 4)).view(np.int16)[:n]
    return torch.from_numpy(raw).view(shape) >= round(p * 65536) - 32768


class _MaskScale(torch.autograd.Function):
    """``x * keep * scale`` whose backward is ``grad * keep * scale`` (the mask is saved, one
    byte per element, as torch's dropout saves its own)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, keep: torch.Tensor, scale: float) -> torch.Tensor:
        ctx.save_for_backward(keep)
        ctx.scale = scale
        return x.mul(scale).mul_(keep)  # (x * scale) *= keep: faster than multiplying by the bools first

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> tuple[torch.Tensor, None, None]:
        (keep,) = ctx.saved_tensors
        return grad.mul(ctx.scale).mul_(keep), None, None
