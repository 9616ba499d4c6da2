r"""2:4 semi-structured weight sparsity: prune, hold the masks through training, convert.

Torch only (no DGL), so that it runs and is tested anywhere torch does.

**Pattern.** In every group of 4 consecutive *input* weights of a layer (the weights one output
feature reads from 4 neighbouring input features) the 2 of largest magnitude are kept and the
other 2 are set to zero. For ``nn.Linear`` (weight ``(out, in)``) the groups run along dim 1;
for layers that multiply ``x @ W`` with a weight ``(in_dim, out_dim)`` (``GCNConv``) along
dim 0. When the input width is not a multiple of 4, the last ``in % 4`` columns form no group
and stay dense (:attr:`LayerReport.tail`).

**Masks.** A pruned layer holds its mask as the bool buffer ``weight_mask`` (the name
``torch.nn.utils.prune`` uses), so masks move with ``.to(device)``, travel in
``state_dict()`` and are found again by :func:`masked_layers`. :func:`hold_masks` keeps masked
weights exactly zero through optimizer steps: gradients are masked (so Adam's moments of the
pruned weights stay zero) and the masks are re-applied after every step (so weight decay, or
any optimizer that moves weights without a gradient, cannot revive them).

**Convert.** On CUDA devices of compute capability 8.0 or newer (A100, H100), :func:`convert`
replaces each 2:4 ``nn.Linear`` with a :class:`SemiStructuredLinear`, whose weight is a
``torch.sparse.SparseSemiStructuredTensor`` (cuSPARSELt or CUTLASS), or torchao's
``sparsify_`` weight when torchao is installed. Its input is made contiguous and cast to the
kernel's dtype before the sparse matmul (a strided input is what makes
``cusparseLtMatmulDescriptorInit`` fail with "operation not supported"). A layer the backend
rejects (shape, dtype, layout, an input width that is not a multiple of 4, or a result that
does not match the dense one) stays dense, with one :class:`SparsityFallbackWarning` naming
it and the reason; conversion never raises.
"""

from __future__ import annotations

import contextlib
import copy
import fnmatch
import statistics
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import torch
from torch import nn
from torch.optim.optimizer import register_optimizer_step_post_hook

PATTERN = "2:4"
GROUP, KEEP = 4, 2
MIN_CAPABILITY = (8, 0)
MASK = "weight_mask"
Backend = Literal["auto", "torch", "torchao"]
KernelDtype = Literal["float16", "bfloat16"]
DTYPES = {"float16": torch.float16, "bfloat16": torch.bfloat16}


class SparsityFallbackWarning(UserWarning):
    """A pruned layer stays dense: the semi-structured backend rejected it."""


@dataclass
class Layer:
    """A prunable layer: ``module.weight`` with the input features along ``axis``."""

    name: str
    module: nn.Module
    axis: int  # 1 for nn.Linear (out, in); 0 for x @ W layers (in, out)

    @property
    def in_features(self) -> int:
        return int(self.module.weight.shape[self.axis])

    @property
    def out_features(self) -> int:
        return int(self.module.weight.shape[1 - self.axis])

    def describe(self) -> str:
        return f"{self.name} ({self.in_features}->{self.out_features})"


@dataclass
class LayerReport:
    """What happened to one layer (a row of the run record)."""

    name: str
    in_features: int
    out_features: int
    status: str  # "pruned", "skipped" (then "converted" or "dense" after convert())
    reason: str = ""
    pruned_fraction: float = 0.0
    tail: int = 0  # input columns left dense because the input width is not a multiple of 4

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


# ---------------------------------------------------------------------------------------------
# finding and selecting layers


def linear_layers(model: nn.Module) -> list[Layer]:
    """Every ``nn.Linear`` of ``model``, and every layer with a 2-D ``weight`` laid out
    ``(in_dim, out_dim)`` that it multiplies as ``x @ W`` (it declares ``in_dim``/``out_dim``,
    as ``GCNConv`` does), in module order."""
    found = []
    for name, module in model.named_modules():
        weight = getattr(module, "weight", None)
        if isinstance(module, nn.Linear):
            found.append(Layer(name, module, axis=1))
        elif isinstance(weight, nn.Parameter) and weight.dim() == 2 \
                and getattr(module, "in_dim", None) == weight.shape[0] \
                and getattr(module, "out_dim", None) == weight.shape[1]:
            found.append(Layer(name, module, axis=0))
    return found


def select_layers(model: nn.Module, include: Sequence[str] = (), exclude: Sequence[str] = (),
                  min_features: int = 0) -> tuple[list[Layer], list[LayerReport]]:
    """The layers to prune, and a report of the linear layers left alone (and why).

    ``include`` / ``exclude`` are glob patterns (``fnmatch``) on qualified module names
    (``layers.0.mlp.0``); no ``include`` means every linear layer. Layers with fewer than
    ``min_features`` input or output features are skipped.

    :raises ValueError: an ``include`` pattern matches no linear layer; the message lists them.
    """
    layers = linear_layers(model)
    names = [layer.name for layer in layers]
    for pattern in include:
        if not fnmatch.filter(names, pattern):
            listing = ", ".join(layer.describe() for layer in layers) or "none"
            raise ValueError(f'include pattern "{pattern}" matches no linear layer of the '
                             f"model; its linear layers: {listing}")
    chosen, skipped = [], []
    for layer in layers:
        reason = ""
        if include and not any(fnmatch.fnmatchcase(layer.name, p) for p in include):
            reason = "not matched by include"
        elif any(fnmatch.fnmatchcase(layer.name, p) for p in exclude):
            reason = "matched by exclude"
        elif min(layer.in_features, layer.out_features) < min_features:
            reason = f"fewer than min_features = {min_features} input or output features"
        if reason:
            skipped.append(LayerReport(layer.name, layer.in_features, layer.out_features,
                                       "skipped", reason))
        else:
            chosen.append(layer)
    return chosen, skipped


# ---------------------------------------------------------------------------------------------
# pruning and masks


def two_four_mask(weight: torch.Tensor, axis: int = 1) -> torch.Tensor:
    """Bool mask of ``weight``'s shape keeping the 2 largest |w| of each 4 along ``axis``.

    Vectorised: the input axis is cut into groups of 4, ``topk(2)`` picks the survivors. The
    last ``in % 4`` inputs (no full group) are kept.
    """
    w = weight.detach().abs()
    if axis == 0:
        w = w.t()  # (out, in)
    rows, width = w.shape
    full = width - width % GROUP
    mask = torch.ones(rows, width, dtype=torch.bool, device=w.device)
    if full:
        groups = w[:, :full].reshape(rows, full // GROUP, GROUP)
        keep = groups.topk(KEEP, dim=-1).indices  # (rows, groups, 2)
        chosen = torch.zeros_like(groups, dtype=torch.bool).scatter_(-1, keep, True)
        mask[:, :full] = chosen.reshape(rows, full)
    return mask.t().contiguous() if axis == 0 else mask


def is_two_four(weight: torch.Tensor, axis: int = 1) -> bool:
    """Whether every full group of 4 inputs of ``weight`` has at most 2 nonzeros."""
    w = weight.detach()
    if axis == 0:
        w = w.t()
    rows, width = w.shape
    full = width - width % GROUP
    if not full:
        return True
    nonzeros = (w[:, :full] != 0).reshape(rows, full // GROUP, GROUP).sum(-1)
    return bool((nonzeros <= KEEP).all())


def prune(layers: Sequence[Layer]) -> list[LayerReport]:
    """Magnitude-prune each layer to 2:4 in place and attach its ``weight_mask`` buffer."""
    reports = []
    for layer in layers:
        module = layer.module
        mask = two_four_mask(module.weight, layer.axis)
        if hasattr(module, MASK):  # already pruned (a restored model): keep both constraints
            mask &= getattr(module, MASK)
            delattr(module, MASK)
        module.register_buffer(MASK, mask)
        with torch.no_grad():
            module.weight.mul_(mask)
        tail = layer.in_features % GROUP
        report = LayerReport(layer.name, layer.in_features, layer.out_features, "pruned",
                             pruned_fraction=1.0 - mask.float().mean().item(), tail=tail)
        if tail:
            report.reason = (f"input width {layer.in_features} is not a multiple of 4: the "
                             f"last {tail} input column(s) stay dense")
        reports.append(report)
    return reports


def masked_layers(model: nn.Module) -> list[tuple[str, nn.Module]]:
    """``(name, module)`` of every module that holds a ``weight_mask`` buffer."""
    return [(name, m) for name, m in model.named_modules()
            if isinstance(getattr(m, MASK, None), torch.Tensor) and hasattr(m, "weight")]


def apply_masks(model: nn.Module) -> None:
    """Zero every masked weight (in place, no autograd)."""
    with torch.no_grad():
        for _, module in masked_layers(model):
            module.weight.mul_(getattr(module, MASK))


def attach_masks(model: nn.Module, state: dict[str, torch.Tensor]) -> list[str]:
    """Register an empty ``weight_mask`` buffer on each module that has one in ``state`` (a
    state dict of a pruned model), so that ``load_state_dict(state)`` restores the masks."""
    modules = dict(model.named_modules())
    names = []
    suffix = "." + MASK
    for key, value in state.items():
        if not (key.endswith(suffix) or key == MASK):
            continue
        name = key[: -len(suffix)] if key.endswith(suffix) else ""
        module = modules.get(name)
        if module is None or getattr(module, "weight", None) is None:
            continue  # load_state_dict reports the unexpected key
        if not hasattr(module, MASK):
            module.register_buffer(MASK, torch.ones_like(value, dtype=torch.bool))
        names.append(name)
    return names


def hold_masks(model: nn.Module, optimizer: torch.optim.Optimizer) -> Callable[[], None]:
    """Keep ``model``'s masked weights at zero while ``optimizer`` trains it.

    Returns a function that removes the hooks. Gradients are multiplied by the masks (the
    optimizer's moments of pruned weights stay zero) and the masks are re-applied after each
    ``optimizer.step()`` (weight decay or momentum cannot revive a pruned weight).
    """
    handles = []
    for _, module in masked_layers(model):
        handles.append(module.weight.register_hook(
            lambda grad, m=module: grad * getattr(m, MASK)))
    handles.append(optimizer.register_step_post_hook(lambda *_: apply_masks(model)))
    apply_masks(model)

    def remove() -> None:
        for handle in handles:
            handle.remove()

    return remove


@contextlib.contextmanager
def masks_held(model: nn.Module) -> Iterator[None]:
    """Keep ``model``'s masked weights at zero through any optimizer a training loop makes
    inside the ``with`` block (the loop of whichever task fine-tunes the model).

    As :func:`hold_masks`, without the optimizer at hand: gradients are masked, and the masks
    are re-applied after every ``step()`` of every optimizer (a global step hook, removed on
    leaving; masks of a model that has none are a no-op).
    """
    layers = masked_layers(model)
    if not layers:
        yield
        return
    handles = [module.weight.register_hook(lambda grad, m=module: grad * getattr(m, MASK))
               for _, module in layers]
    handles.append(register_optimizer_step_post_hook(lambda *_: apply_masks(model)))
    apply_masks(model)
    try:
        yield
    finally:
        for handle in handles:
            handle.remove()


def pruned_fraction(model: nn.Module) -> float:
    """Fraction of zeros over the masks of ``model`` (0 without masks)."""
    total = zeros = 0
    for _, module in masked_layers(model):
        mask = getattr(module, MASK)
        total += mask.numel()
        zeros += int((~mask).sum())
    return zeros / total if total else 0.0


# ---------------------------------------------------------------------------------------------
# conversion to the semi-structured kernels


def sparse_support(device: torch.device) -> str | None:
    """None when ``device`` runs semi-structured sparse matmuls, else why not."""
    if device.type != "cuda":
        return (f"no semi-structured sparse kernels on {device.type}: the masked weights stay "
                f"dense there, so no speed-up is expected")
    if not torch.cuda.is_available():
        return "CUDA is not available"
    major, minor = torch.cuda.get_device_capability(device)
    if (major, minor) < MIN_CAPABILITY:
        name = torch.cuda.get_device_name(device)
        return (f"{name} is sm{major}{minor}; 2:4 sparse tensor cores need sm80 or newer "
                f"(A100, H100), so no speed-up is expected")
    return None


def torchao_available() -> bool:
    try:
        import torchao.sparsity  # noqa: F401
    except Exception:
        return False
    return True


class SemiStructuredLinear(nn.Module):
    """An ``nn.Linear`` with a 2:4 weight, run by the semi-structured sparse kernels.

    ``forward`` flattens the input to (rows, in_features), casts it to the kernel dtype, makes
    it contiguous (what cuSPARSELt accepts: a strided input silently gives wrong products
    through torch 2.11's semi-structured path) and pads the rows to a multiple of 16; it
    returns the input's dtype and shape. With ``sparse=False`` the same layer keeps a dense
    weight in ``dtype``: the like-for-like dense baseline of a timing.
    """

    ROW_MULTIPLE = 16

    def __init__(self, linear: nn.Linear, dtype: torch.dtype = torch.float16,
                 backend: Literal["torch", "torchao"] = "torch", *, sparse: bool = True):
        super().__init__()
        self.in_features, self.out_features = linear.in_features, linear.out_features
        self.dtype, self.backend, self.sparse = dtype, backend, sparse
        inner = nn.Linear(self.in_features, self.out_features, bias=linear.bias is not None,
                          device=linear.weight.device, dtype=dtype)
        with torch.no_grad():
            inner.weight.copy_(linear.weight.detach())
            if linear.bias is not None:
                inner.bias.copy_(linear.bias.detach())
        inner.requires_grad_(False)
        with warnings.catch_warnings():  # torch's "prototype stage" notice, once per layer
            warnings.filterwarnings("ignore", message=".*SparseSemiStructuredTensor is in "
                                                      "prototype stage")
            if not sparse:
                pass
            elif backend == "torchao":
                from torchao.sparsity import sparsify_
                sparsify_(inner, _torchao_config())
            else:
                inner.weight = nn.Parameter(
                    torch.sparse.to_sparse_semi_structured(inner.weight.contiguous()),
                    requires_grad=False)
        self.inner = inner

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        rows = x.reshape(-1, self.in_features).to(self.dtype).contiguous()  # (n, in)
        n = rows.shape[0]
        pad = -n % self.ROW_MULTIPLE
        if pad:
            rows = torch.cat([rows, rows.new_zeros(pad, self.in_features)])
        out = self.inner(rows)[:n]  # (n, out)
        return out.reshape(*x.shape[:-1], self.out_features).to(x.dtype)

    def extra_repr(self) -> str:
        kind = f"backend={self.backend}" if self.sparse else "dense"
        return f"{self.in_features}, {self.out_features}, dtype={self.dtype}, {kind}"


def _torchao_config() -> Any:
    import torchao.sparsity as ts
    for name in ("SemiSparseWeightConfig", "semi_sparse_weight"):
        factory = getattr(ts, name, None)
        if factory is not None:
            return factory()
    raise ImportError("torchao.sparsity has neither SemiSparseWeightConfig nor "
                      "semi_sparse_weight")


def convert(model: nn.Module, device: torch.device, *, dtype: KernelDtype = "float16",
            backend: Backend = "auto", check_rows: int = 64,
            tolerance: float = 2e-2) -> list[LayerReport]:
    """Swap each pruned ``nn.Linear`` of ``model`` (on ``device``) for a
    :class:`SemiStructuredLinear`; report every masked layer as converted or dense.

    Each converted layer is checked on a strided (non-contiguous) random input against its
    dense masked weights (relative error below ``tolerance``); a layer that fails any step
    stays dense with a :class:`SparsityFallbackWarning`. Nothing is converted (and nothing
    warned per layer) where :func:`sparse_support` says the device has no kernels.
    """
    reports = []
    unsupported = sparse_support(device)
    chosen: Literal["torch", "torchao"] = "torch"
    if backend == "torchao" or (backend == "auto" and torchao_available()):
        chosen = "torchao"
    modules = dict(model.named_modules())
    for name, module in masked_layers(model):
        weight = module.weight
        is_linear = isinstance(module, nn.Linear)
        report = LayerReport(name, int(weight.shape[1] if is_linear else weight.shape[0]),
                             int(weight.shape[0] if is_linear else weight.shape[1]), "dense")
        if unsupported:
            report.reason = unsupported
            reports.append(report)
            continue
        reason = _rejection(module, name, backend, chosen)
        if reason is None:
            try:
                sparse = SemiStructuredLinear(module, DTYPES[dtype], chosen)
                reason = _check(module, sparse, check_rows, tolerance)
            except Exception as exc:  # the backend's own refusal is the reason
                sparse = None
                reason = f"{type(exc).__name__}: {_first_line(exc)}"
        if reason is None:
            _set_module(model, modules, name, sparse)
            report.status, report.reason = "converted", f"{chosen} backend, {dtype}"
        else:
            report.reason = reason
            warnings.warn(f"2:4 layer {name} stays dense: {reason}", SparsityFallbackWarning,
                          stacklevel=2)
        reports.append(report)
    return reports


def _rejection(module: nn.Module, name: str, backend: str, chosen: str) -> str | None:
    if backend == "torchao" and not torchao_available():
        return "torchao is not installed (pip install 'graphflow[sparsity]')"
    if not isinstance(module, nn.Linear):
        return (f"{type(module).__name__} multiplies x @ W outside nn.Linear; only nn.Linear "
                f"layers are converted")
    if module.in_features % GROUP:
        return (f"not converted: the semi-structured layout needs an input width that is a "
                f"multiple of 4 (it is {module.in_features})")
    if not module.weight.is_cuda:
        return f"weight is on {module.weight.device}, not on the CUDA device"
    return None


@torch.no_grad()
def _check(dense: nn.Linear, sparse: SemiStructuredLinear, rows: int,
           tolerance: float) -> str | None:
    """None when ``sparse`` reproduces ``dense`` on a strided input, else why not."""
    w = dense.weight
    gen = torch.Generator(device=w.device).manual_seed(0)
    wide = torch.randn(rows, 2 * dense.in_features, device=w.device, generator=gen)
    x = wide[:, ::2].to(w.dtype)  # non-contiguous (rows, in), in the model's dtype
    ref = dense(x).float()
    out = sparse(x).float()
    err = ((out - ref).norm() / ref.norm().clamp_min(1e-12)).item()
    if not err < tolerance:
        return f"sparse result differs from dense (relative error {err:.2e})"
    return None


def _set_module(model: nn.Module, modules: dict[str, nn.Module], name: str,
                new: nn.Module) -> None:
    parent_name, _, child = name.rpartition(".")
    setattr(modules[parent_name] if parent_name else model, child, new)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0][:300] if text else ""


def converted_copy(model: nn.Module, device: torch.device, **kwargs: Any
                   ) -> tuple[nn.Module, list[LayerReport]]:
    """A deep copy of ``model`` on ``device`` with :func:`convert` applied."""
    clone = copy.deepcopy(model).to(device).eval()
    return clone, convert(clone, device, **kwargs)


def cast_copy(model: nn.Module, device: torch.device, names: Sequence[str], *,
              dtype: KernelDtype = "float16") -> nn.Module:
    """A deep copy of ``model`` on ``device`` whose layers ``names`` run dense in ``dtype``,
    through the same wrapper as the converted ones: the fair dense baseline for timing them."""
    clone = copy.deepcopy(model).to(device).eval()
    modules = dict(clone.named_modules())
    for name in names:
        _set_module(clone, modules, name,
                    SemiStructuredLinear(modules[name], DTYPES[dtype], sparse=False))
    return clone


# ---------------------------------------------------------------------------------------------
# timing


def time_call(fn: Callable[[], Any], device: torch.device, *, warmup: int = 3,
              repeats: int = 20) -> float:
    """Median seconds of ``fn()`` on ``device`` (CUDA synchronised around each call)."""
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    with torch.no_grad():
        for _ in range(warmup):
            fn()
        sync()
        times = []
        for _ in range(repeats):
            start = time.perf_counter()
            fn()
            sync()
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def linear_stack(width: int, depth: int = 3, *, device: torch.device | str = "cpu",
                 dtype: torch.dtype = torch.float32, seed: int = 0) -> nn.Sequential:
    """``depth`` ``nn.Linear(width, width)`` with ReLU between them (the benchmark's model)."""
    torch.manual_seed(seed)
    mods: list[nn.Module] = []
    for i in range(depth):
        mods.append(nn.Linear(width, width))
        if i < depth - 1:
            mods.append(nn.ReLU())
    return nn.Sequential(*mods).to(device=device, dtype=dtype).eval()

