"""The dense products of a layer's linear map, ``x @ W^T + b``: one dispatch point.

On the CPU torch runs ``addmm`` / ``mm`` through MKL, whose sgemm takes its AVX2 path on AMD
processors. oneDNN (shipped inside torch as ``mkldnn``) picks its kernels by instruction set
instead. Which is faster depends on the CPU and the shape: on some products of some AVX-512
CPUs oneDNN wins, on others it lost by 1.1-2.8x; ``python benchmarks/gemm.py`` times both on
the machine at hand. Both compute in float32 (no reduced precision); the results differ in
rounding only (summation order).

Shapes, for ``x`` (M, K), ``W`` (N, K), ``b`` (N,), ``dY`` (M, N)::

    forward        Y  = x W^T + b          (M, N)   1x1 convolution over M channels-last rows
    input grad     dx = dY W               (M, K)   oneDNN inner product with weight W^T
    weight grad    dW = dY^T x             (N, K)   1x1 convolution's weight gradient
    bias grad      db = sum_rows dY        (N,)

The (M, C) row-major tensors are read as (1, C, M, 1) channels-last images without a copy.
oneDNN builds a kernel per shape and caches it, and a sampled batch has a new M every batch:
building the kernels cost more than the products (page faults and system time for their code,
and memory that grew by ~130 MB every 100 batches). So every product runs oneDNN on the first
``M - M % ROW_BUCKET`` rows (a few shapes per epoch, all cached) and torch on the last rows:
the weight gradient (a sum over rows) adds the two parts, the forward and the input gradient
stack them. A one-off same-process A/B over 400-batch partial epochs of
``benchmarks/sampling.py``'s graph: 39.1 ms a batch with a kernel per M, 34.5-37.3 with
buckets of 64 rows, 35.1-35.6 with 256, 36.9 with 1024, against 43.8-43.9 for torch.

**Which backend.** Which of the two is faster depends on the CPU: on an AVX2-only EPYC
(no AVX-512) oneDNN's products made a sampled batch 1.5x slower than MKL's. So ``"auto"``
(``[pipeline] gemm``, the default) is *measured*: :mod:`graphflow.runtime.calibrate` times one
representative product per shape bucket (:func:`bucket`: size x output width, see
:data:`BUCKETS`) with both backends on the machine that runs it, once, and caches the
choice; every product then goes to its bucket's winner. ``"onednn"`` or ``"torch"`` forces
one backend for every product (the runner records the choice and where it came from in
``run.json``). Products that are not float32 on the CPU, smaller than :data:`MIN_MACS`
multiply-adds (where oneDNN's fixed cost loses), under autocast, or on tensor subclasses (a
2:4-sparse weight) go to torch whatever the choice.

The two backends do not round alike (different summation order), so a seeded run repeats
bit for bit for the same choices; the cache keeps them stable on one machine, and an
explicit ``"torch"`` or ``"onednn"`` pins them anywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cache

import torch
import torch.nn.functional as F

from graphflow.errors import ConfigError, did_you_mean

CHOICES: tuple[str, ...] = ("auto", "onednn", "torch")

ROW_BUCKET = 256
"""oneDNN runs on a multiple of this many rows; torch takes the remaining ones."""
MIN_MACS = 1 << 20
"""Products of fewer multiply-adds (M K N) than this go to torch (oneDNN's fixed cost wins
there: 2708 x 16 -> 7 took 0.032 against 0.026 ms; 2708 x 64 -> 64 0.081 against 0.109)."""

LARGE_MACS = 1 << 25
"""Products of at least this many multiply-adds are the ``large`` buckets."""
NARROW = 64
"""Outputs narrower than this (N < 64: class scores) are the ``narrow`` buckets."""
BUCKETS: tuple[str, ...] = ("large-wide", "large-narrow", "small-wide", "small-narrow")

_backend: str = "auto"
_measured: dict[str, str] | None = None  # bucket -> backend, while a run applies its choices
_measured_threads: int | None = None  # the intra-op threads _measured was measured with
_lazy: dict[int, dict[str, str]] = {}  # threads -> the same, measured (or read) at first use


def bucket(m: int, k: int, n: int) -> str:
    """The shape bucket of an (M, K) x (K, N) product, one of :data:`BUCKETS`."""
    size = "large" if m * k * n >= LARGE_MACS else "small"
    return f"{size}-{'narrow' if n < NARROW else 'wide'}"


def onednn_available() -> bool:
    """Whether torch has oneDNN built in and enabled (``torch.backends.mkldnn``)."""
    return bool(torch.backends.mkldnn.enabled and _onednn_built())


@cache
def _onednn_built() -> bool:
    return bool(torch.backends.mkldnn.is_available()
                and hasattr(torch.ops.mkldnn, "_linear_pointwise"))


def resolve(choice: str) -> str:
    """``"onednn"``, ``"torch"`` or ``"per-bucket"``: what ``choice`` means on this machine
    (``"auto"``: the measured choice per bucket when torch has oneDNN, else torch). An
    unknown choice is a ConfigError."""
    if choice not in CHOICES:
        raise ConfigError(f'expected "auto" (measured per shape), "onednn" or "torch" '
                          f'for the CPU dense products, got "{choice}"'
                          f'{did_you_mean(choice.lower(), CHOICES)}')
    if choice == "auto":
        return "per-bucket" if onednn_available() else "torch"
    return choice


def validate(choice: str) -> str:
    """:func:`resolve`, refusing ``"onednn"`` where torch has no oneDNN enabled."""
    backend = resolve(choice)
    if backend == "onednn" and not onednn_available():
        raise ConfigError('"onednn" needs torch built with oneDNN (mkldnn) and '
                          'torch.backends.mkldnn.enabled; use "auto" or "torch"')
    return backend


def current() -> str:
    """The backend now in use for CPU products (resolved)."""
    return resolve(_backend)


@contextmanager
def applied(choice: str, measured: dict[str, str] | None = None, *,
            threads: int | None = None) -> Iterator[dict[str, object]]:
    """Use ``choice`` for the products inside the block, then restore the previous one.

    :param measured: for ``"auto"``: the backend of each bucket (``{bucket: "onednn" |
        "torch"}``, from :func:`graphflow.runtime.calibrate.gemm_choices`); None: measured (or read
        from the cache) at the first product that needs it.
    :param threads: the intra-op thread count ``measured`` holds for (default: torch's now).
        A product run with another thread count (a stage whose core plan gives it fewer
        threads) uses the table measured for that count (:func:`backend_for`).

    Yields what ``run.json`` records: ``{"requested": choice, "backend": resolved}``, plus
    ``"buckets"`` when the choice is per bucket.
    """
    global _backend, _measured, _measured_threads
    try:
        backend = validate(choice)
    except ConfigError as exc:
        raise ConfigError(f"gemm: {exc}") from None
    if measured is not None:
        unknown = set(measured) - set(BUCKETS) or {
            v for v in measured.values() if v not in ("onednn", "torch")}
        if unknown:
            raise ValueError(f"gemm: unknown buckets or backends {sorted(unknown)}")
    before = _backend, _measured, _measured_threads
    _backend = choice
    _measured = dict(measured) if measured is not None and backend == "per-bucket" else None
    _measured_threads = (threads or torch.get_num_threads()) if _measured is not None else None
    try:
        info: dict[str, object] = {"requested": choice, "backend": backend}
        if _measured is not None:
            info["buckets"] = dict(_measured)
        yield info
    finally:
        _backend, _measured, _measured_threads = before


def backend_for(m: int, k: int, n: int) -> str:
    """``"onednn"`` or ``"torch"``: the backend of an (M, K) x (K, N) float32 CPU product.

    Per bucket, from the table measured for the intra-op thread count in force: the run's
    applied table when it was measured with these threads, else the calibration's table for
    this count (measured, or read from the cache, at the first product that needs it)."""
    backend = current()
    if backend != "per-bucket":
        return backend
    threads = torch.get_num_threads()
    table = _measured if _measured is not None and _measured_threads == threads else None
    if table is None:
        table = _lazy.get(threads)
        if table is None:  # first product with this thread count: measure or read
            from graphflow.runtime import calibrate

            table = _lazy[threads] = dict(calibrate.gemm_choices(threads=threads)["buckets"])
    return table.get(bucket(m, k, n), "torch")


def forget() -> None:
    """Drop the choices measured at first use (the next product reads the cache again)."""
    _lazy.clear()


def linear(x: torch.Tensor, weight: torch.Tensor,
           bias: torch.Tensor | None = None) -> torch.Tensor:
    """``F.linear(x, weight, bias)``: ``x`` (M, K), ``weight`` (N, K), ``bias`` (N,) -> (M, N),
    through oneDNN where :func:`current` says so and the product qualifies."""
    if _onednn(x, weight, bias):
        if torch.is_grad_enabled() and (x.requires_grad or weight.requires_grad or (
                bias is not None and bias.requires_grad)):
            return _OneDNNLinear.apply(x, weight, bias)
        return _forward(x, weight, bias)
    if _input_major_weight_grad(x, weight, bias):
        return _Linear.apply(x, weight, bias)
    return F.linear(x, weight, bias)


def _plain(t: torch.Tensor | None) -> bool:
    return t is None or type(t) in (torch.Tensor, torch.nn.Parameter)


def _onednn(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None) -> bool:
    return (x.dim() == 2 and weight.dim() == 2 and x.device.type == "cpu"
            and x.dtype == weight.dtype == torch.float32
            and (bias is None or bias.dtype == torch.float32)
            and x.shape[0] * x.shape[1] * weight.shape[0] >= MIN_MACS
            and _plain(x) and _plain(weight) and _plain(bias)
            and not torch.is_autocast_enabled("cpu") and current() != "torch"
            and backend_for(x.shape[0], x.shape[1], weight.shape[0]) == "onednn")


def _nhwc(a: torch.Tensor) -> torch.Tensor:
    """(M, C) row-major as a (1, C, M, 1) channels-last image: the same memory."""
    return a.view(1, a.shape[0], 1, a.shape[1]).permute(0, 3, 1, 2)


def _rows(image: torch.Tensor) -> torch.Tensor:
    """A (1, C, M, 1) image as a fresh (M, C) row-major tensor (no copy when channels-last;
    not a view, so that callers may change it in place)."""
    image = image.contiguous(memory_format=torch.channels_last)
    return torch.ops.aten._unsafe_view(image.permute(0, 2, 3, 1),
                                       [image.shape[2], image.shape[1]])


def _forward(x: torch.Tensor, weight: torch.Tensor,
             bias: torch.Tensor | None) -> torch.Tensor:
    """(M, N) = x W^T + b."""
    x, weight = x.contiguous(), weight.contiguous()
    bias = None if bias is None else bias.contiguous()

    def onednn(rows: torch.Tensor) -> torch.Tensor:
        n = weight.shape[0]
        return _rows(F.conv2d(_nhwc(rows), weight.view(n, -1, 1, 1), bias))

    def rest(rows: torch.Tensor) -> torch.Tensor:
        return rows @ weight.t() if bias is None else torch.addmm(bias, rows, weight.t())

    return _by_rows(onednn, rest, x)


def _input_grad(grad: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """(M, K) = dY W: an inner product whose (K, N) weight is W^T (a view, no copy)."""
    return _by_rows(lambda rows: torch.ops.mkldnn._linear_pointwise(
        rows, weight.t(), None, "none", [], ""), lambda rows: rows @ weight, grad)


def _by_rows(onednn: Callable[[torch.Tensor], torch.Tensor],
             rest: Callable[[torch.Tensor], torch.Tensor], a: torch.Tensor) -> torch.Tensor:
    """A row-wise product of ``a`` (M, .): ``onednn`` on the first ``M - M % ROW_BUCKET``
    rows, ``rest`` (torch) on the others, the two stacked. The stacking copies the result
    once; a new oneDNN kernel for every M of a sampled epoch cost more (page faults and
    system time for the kernel code: a one-off A/B over 400-batch partial epochs, 39.1
    against 34.5-37.3 ms a batch)."""
    m = a.shape[0]
    head = m - m % ROW_BUCKET
    if head == m:
        return onednn(a)
    if head == 0:
        return rest(a)
    return torch.cat([onednn(a[:head]), rest(a[head:])])


def _weight_grad(grad: torch.Tensor, x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """(N, K) = dY^T x: oneDNN over a multiple of :data:`ROW_BUCKET` rows, torch the rest."""
    m = x.shape[0]
    n, k = weight.shape
    head = m - m % ROW_BUCKET
    if head == 0:
        return grad.t() @ x
    out = torch.ops.aten.convolution_backward(
        _nhwc(grad[:head]), _nhwc(x[:head]), weight.detach().contiguous().view(n, k, 1, 1),
        None, [1, 1], [0, 0], [1, 1], False, [0, 0], 1, [False, True, False])[1]
    out = out.reshape(n, k)
    if head < m:
        out = out.addmm_(grad[head:].t(), x[head:])
    return out


class _OneDNNLinear(torch.autograd.Function):
    """``x W^T + b`` with its three products in oneDNN (see the module docstring)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor,  # type: ignore[override]
                bias: torch.Tensor | None) -> torch.Tensor:
        x = x.contiguous()
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return _forward(x, weight, bias)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        x, weight = ctx.saved_tensors
        grad = grad.contiguous()
        grad_x = _input_grad(grad, weight) if ctx.needs_input_grad[0] else None
        grad_w = _weight_grad(grad, x, weight) if ctx.needs_input_grad[1] else None
        grad_b = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b


def _input_major_weight_grad(x: torch.Tensor, weight: torch.Tensor,
                             bias: torch.Tensor | None) -> bool:
    """Whether :class:`_Linear` applies: a CPU float product whose weight needs a gradient,
    on plain tensors (no subclass such as a 2:4-sparse weight), outside autocast, of at
    least :data:`INPUT_MAJOR_MIN_MACS` multiply-adds, or of inputs narrower than
    :data:`NARROW_INPUT` (and at least :data:`NARROW_INPUT_MIN_MACS`)."""
    macs = x.shape[0] * x.shape[1] * weight.shape[0] if x.dim() == 2 else 0
    return (torch.is_grad_enabled() and weight.requires_grad and x.dim() == 2
            and (macs >= INPUT_MAJOR_MIN_MACS
                 or (x.shape[1] < NARROW_INPUT and macs >= NARROW_INPUT_MIN_MACS))
            and x.device.type == "cpu" and not torch.is_autocast_enabled("cpu")
            and _plain(x) and _plain(weight) and _plain(bias)
            and x.dtype == weight.dtype and x.dtype in (torch.float32, torch.float64))


INPUT_MAJOR_MIN_MACS = 1 << 29
"""Products of fewer multiply-adds (M K N) than this take ``F.linear``'s own autograd, not
:class:`_Linear`: below it the Python Function's fixed cost and the weight gradient's
transposing copy outweigh the orientation. Forward + backward, 2 threads, Intel Xeon family 6
model 167 (median of 9 alternating rounds each): 2000 x 64 -> 64 0.41 ms with ``F.linear``
against 0.46, 1800 x 16 -> 64 0.19 against 0.23, 2900 x 512 -> 256 7.7 against 8.2, and a tie
at 15.9k x 200 -> 256 (18.0 against 17.8 ms), which on the AMD EPYC below measured 8.5 against
7.7 ms for the custom one. Under ``ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2`` on the
same Xeon: 0.27 against 0.31, 0.11 against 0.12, 6.6 against 6.9, and 16.7 against 15.9 ms
for the custom one at 15.9k x 200 -> 256."""


NARROW_INPUT = 16
"""Inputs narrower than this take :class:`_Linear` at any size above
:data:`NARROW_INPUT_MIN_MACS`: autograd's ``dY^T @ x`` with a handful of columns in ``x``
(GINE's edge maps from one-hot bond types) ran 1.25-2.6x slower than ``(x^T @ dY)^T`` in MKL,
with 1 and 2 threads and under the AVX2 caps, while at 16 columns the two tied
(``benchmarks/weight_grad.py``; docs/sparse.md)."""
NARROW_INPUT_MIN_MACS = 1 << 18
"""Below this the Python Function's fixed cost is a large share of the product."""


class _Linear(torch.autograd.Function):
    """``F.linear`` (``x @ W^T + b``) whose weight gradient is computed as ``(x^T @ dY)^T``:
    the torch backend's CPU path.

    Autograd's linear computes ``dW = dY^T @ x``, to return it in W's row-major layout. On
    the CPU (MKL, 2 threads) the other orientation is faster for the tall products of a
    sampled batch: 7.7 against 8.5 ms for a first SAGE layer's 15.9k x 200 inputs and 256
    outputs, 3.5 against 3.6 ms for the second layer's 2.9k x 512 (alternating, 55 calls
    each). The transposed result is what W's gradient becomes (AccumulateGrad copies it into
    W's layout, a (F_out, F_in) copy)."""

    @staticmethod
    def forward(ctx, x: torch.Tensor, weight: torch.Tensor,  # type: ignore[override]
                bias: torch.Tensor | None) -> torch.Tensor:
        ctx.save_for_backward(x, weight)
        ctx.has_bias = bias is not None
        return torch.addmm(bias, x, weight.t()) if bias is not None else x @ weight.t()

    @staticmethod
    def backward(ctx, grad: torch.Tensor):  # type: ignore[override]
        x, weight = ctx.saved_tensors
        grad_x = grad @ weight if ctx.needs_input_grad[0] else None  # (N, F_in)
        grad_w = (x.t() @ grad).t() if ctx.needs_input_grad[1] else None  # (F_out, F_in)
        grad_b = grad.sum(0) if ctx.has_bias and ctx.needs_input_grad[2] else None
        return grad_x, grad_w, grad_b
