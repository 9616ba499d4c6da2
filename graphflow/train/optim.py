"""Optimizers by name, with weight decay on every layer or on the first layer only.

Kipf & Welling (2017) regularise only the first GCN layer (``weight_decay`` 5e-4 on the
input-to-hidden weights, as in their ``gcn/models.py``); ``decay_on = "first_layer"``
reproduces that. ``"all"`` is the usual optimizer-wide L2 penalty.

Adam and AdamW run torch's fused kernel (one pass over each parameter per step) whenever every
parameter is a floating-point tensor on the CPU or a CUDA GPU, which is always the case for
graphflow's models: on a sampled 1M-node GraphSAGE batch (``benchmarks/batch_parts.py``) the
step took 0.71 ms with the default multi-tensor (``foreach``) kernels. The fused step computes
the same update; its rounding may differ from ``foreach`` in the last bit.

Each group's parameters live in one buffer (:mod:`graphflow.train.flat`), so that a step is
one gradient copy and one kernel call instead of torch's Python walk over every tensor; the
update is torch's fused one, bit for bit.
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.train.flat import flat, flattenable

OptimizerName = Literal["adam", "adamw", "sgd"]
DecayOn = Literal["all", "first_layer"]


def parameter_groups(model: nn.Module, weight_decay: float,
                     decay_on: DecayOn) -> list[dict[str, object]]:
    """Optimizer parameter groups: ``weight_decay`` on all parameters or on the first layer's.

    ``"first_layer"`` needs a model with a ``layers`` ``ModuleList`` (every
    :class:`graphflow.nn.stack.GNNStack` has one).
    """
    params = [p for p in model.parameters() if p.requires_grad]
    if decay_on == "all" or weight_decay == 0:
        return [{"params": params, "weight_decay": weight_decay}]
    layers = getattr(model, "layers", None)
    if not isinstance(layers, nn.ModuleList) or len(layers) == 0:
        raise ConfigError(f'decay_on = "first_layer" needs a layer stack, but the model is a '
                          f'{type(model).__name__} without .layers; use decay_on = "all"')
    first = {id(p) for p in layers[0].parameters()}
    decayed = [p for p in params if id(p) in first]
    rest = [p for p in params if id(p) not in first]
    return [{"params": decayed, "weight_decay": weight_decay},
            {"params": rest, "weight_decay": 0.0}]


FUSED_DEVICES = ("cpu", "cuda")
FUSED_DTYPES = (torch.float16, torch.bfloat16, torch.float32, torch.float64)


def fusable(params: list[torch.Tensor]) -> bool:
    """Whether torch's fused Adam / AdamW kernel takes every one of ``params``: plain dense
    floating-point tensors (no tensor subclass, such as a 2:4 semi-structured weight), all on
    the CPU or all on one CUDA device."""
    devices = {p.device for p in params}
    return (len(devices) == 1 and next(iter(devices)).type in FUSED_DEVICES
            and all(type(p) in (torch.Tensor, nn.Parameter) and p.dtype in FUSED_DTYPES
                    and p.layout == torch.strided for p in params))


def make_optimizer(name: OptimizerName, model: nn.Module, *, lr: float, weight_decay: float,
                   decay_on: DecayOn = "all", momentum: float = 0.0,
                   flat_groups: bool = True) -> torch.optim.Optimizer:
    """``adam`` (L2 added to the gradient, as in the GCN and GAT papers), ``adamw`` (decoupled
    decay) or ``sgd`` (with ``momentum``).

    With ``flat_groups`` (the default) each group of many small CPU tensors becomes views into
    one buffer and a step updates one tensor per group (:mod:`graphflow.train.flat`: torch's
    update and semantics, without its per-tensor Python work); where no group is worth it
    (few, large tensors, or parameters on a GPU: :func:`graphflow.train.flat.flattenable`)
    this is torch's optimizer itself. Turn it off for a ``GradScaler``, which unscales the
    gradients the optimizer holds before its step.
    """
    groups = parameter_groups(model, weight_decay, decay_on)
    fused = fusable([p for g in groups for p in g["params"]])  # type: ignore[attr-defined]
    classes = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW, "sgd": torch.optim.SGD}
    if name not in classes:
        raise ConfigError(f'unknown optimizer "{name}"; choices: adam, adamw, sgd')
    gather = flat_groups and any(flattenable(list(g["params"])) for g in groups)  # type: ignore[arg-type]
    cls = flat(classes[name]) if gather else classes[name]
    if name == "sgd":
        return cls(groups, lr=lr, momentum=momentum)
    return cls(groups, lr=lr, fused=fused or None)
