"""Optimizers over flat parameters: one buffer per parameter group, one kernel per step.

torch's fused Adam runs one kernel per step, but still walks its parameter list in Python
first (state lookups, grouping by device and dtype), and ``zero_grad`` walks it again: for
the 24 tensors of a 5-layer GIN, 140-200 microseconds a step with warm caches against 70
here (``benchmarks/optimizer_step.py``, 2 threads of an AMD EPYC), beside a batch of 32
graphs of about 6 ms. :func:`flat` makes an optimizer class that keeps each parameter group
as views into one contiguous buffer (the module's parameters are those views) and its state in
buffers of the same length, so a step is one copy of the gradients in (``_foreach_copy_``)
and one update of one tensor (with the few tensors that are not whole 64-byte lines beside
it).

The semantics are torch's:

* the update is the wrapped optimizer's, bit for bit: a parameter goes into the buffer only
  when it fills whole 64-byte lines (:func:`in_buffer`), the others (a 10-entry bias) are
  stepped as tensors of their own beside it;
* ``zero_grad`` sets the parameters' gradients to None (or to zero), as torch's does;
* torch's optimizers skip a parameter without a gradient; the first step that finds one
  (while others have theirs) splits the state into torch's per-parameter form and steps as
  torch's optimizer from then on, so the skipped parameter keeps its own moments and count;
* ``state_dict`` is torch's per-parameter form, so a checkpoint loads into either;
* a parameter whose ``.data`` was replaced under the optimizer (``module.to``,
  ``module.float``) is copied back into the buffer at the next step.
"""

from __future__ import annotations

from typing import Any, Callable

import torch
from torch import nn

ALIGN = 64  # bytes: where every parameter starts in its buffer (a cache line)
STEP = "step"  # the per-parameter count: one value for the whole buffer


class FlatGroup:
    """Parameters as views into one buffer (``param``), each starting on a 64-byte boundary.

    ``members`` is the whole optimizer group in its order; ``params`` those in the buffer,
    ``rest`` the others, which the optimizer steps as tensors of their own (see
    :func:`in_buffer`).
    """

    def __init__(self, members: list[nn.Parameter]):
        self.members = members
        params = [p for p in members if in_buffer(p)]
        self.rest = [p for p in members if not in_buffer(p)]
        self.params = params
        self.shapes = [p.shape for p in params]
        self.numels = [p.numel() for p in params]
        self.offsets = [0]  # each piece starts on a 64-byte boundary, as an allocation does
        align = max(1, ALIGN // params[0].element_size())
        for n in self.numels:
            self.offsets.append(self.offsets[-1] + -(-n // align) * align)
        self.param = nn.Parameter(params[0].new_zeros(self.offsets[-1]))
        with torch.no_grad():
            for i, p in enumerate(params):
                self.piece(self.param, i).copy_(p.detach())
        self.grad: torch.Tensor | None = None  # the gathered gradients (see gather)
        self.grad_views: list[torch.Tensor] = []
        self.ptrs: list[int] = []
        self.rehome()

    def piece(self, flat: torch.Tensor, i: int) -> torch.Tensor:
        """Parameter ``i``'s view of a buffer as long as the group."""
        return flat[self.offsets[i]:self.offsets[i] + self.numels[i]].view(self.shapes[i])

    def rehome(self) -> None:
        """Point every parameter at its view of the buffer, copying in the values of a
        parameter that was replaced (``.data`` set, ``module.to``) since."""
        with torch.no_grad():
            device = self.params[0].device
            if self.param.device != device:  # the module moved: the buffer follows it
                self.param.data = self.param.data.to(device)
            for i, p in enumerate(self.params):
                view = self.piece(self.param.data, i)
                if p.data_ptr() != view.data_ptr():
                    view.copy_(p.detach())
                    p.data = view
        self.ptrs = [p.data_ptr() for p in self.params]

    def moved(self) -> bool:
        return [p.data_ptr() for p in self.params] != self.ptrs

    def gather(self) -> bool | None:
        """Copy the gradients into the buffer's gradient: True when every parameter has one,
        None when none has one, False otherwise (a sparse gradient counts as none)."""
        grads = [p.grad for p in self.params]
        have = [g is not None and g.layout == torch.strided for g in grads]
        if not all(have):
            return None if not any(have) else False
        if self.grad is None or self.grad.device != self.param.device:
            self.grad = torch.zeros_like(self.param)  # the padding stays zero: no update there
            self.grad_views = [self.piece(self.grad, i) for i in range(len(self.params))]
        torch._foreach_copy_(self.grad_views, grads)
        self.param.grad = self.grad
        return True

    def split_state(self, state: dict[str, Any], i: int, *, copy: bool) -> dict[str, Any]:
        """Parameter ``i``'s share of a flat state (torch's per-parameter form)."""
        out = {}
        for key, v in state.items():
            if torch.is_tensor(v) and key != STEP:
                v = self.piece(v, i)
                out[key] = v.clone() if copy else v
            else:
                out[key] = v.clone() if torch.is_tensor(v) else v
        return out

    def merge_state(self, states: list[dict[str, Any]]) -> dict[str, Any] | None:
        """The flat state of per-parameter ``states``, or None where they cannot be one (some
        parameters without state, different keys or step counts)."""
        keys = set(states[0])
        if any(set(s) != keys for s in states):
            return None
        out: dict[str, Any] = {}
        for key in keys:
            vs = [s[key] for s in states]
            if key == STEP or not torch.is_tensor(vs[0]):
                first = vs[0]
                if any(not _same(v, first) for v in vs[1:]):
                    return None
                out[key] = first
            elif all(torch.is_tensor(v) and v.shape == sh for v, sh in zip(vs, self.shapes)):
                flat = vs[0].new_zeros(self.offsets[-1])
                for i, v in enumerate(vs):
                    self.piece(flat, i).copy_(v)
                out[key] = flat
            else:
                return None
        return out


def in_buffer(p: torch.Tensor) -> bool:
    """Whether ``p`` goes into its group's buffer: a whole number of 64-byte lines.

    torch's fused kernels split a tensor into cache-line units and take each unit's elements
    in vector registers, and a tensor's last, partial unit element by element, whose rounding
    may differ in the last bit. A parameter of whole lines starting on a line gets the same
    arithmetic in the buffer as on its own; the others (a 10-entry bias) stay tensors of their
    own, so the flat optimizer's updates are bit for bit torch's.
    """
    return p.numel() % max(1, ALIGN // p.element_size()) == 0


def _same(a: Any, b: Any) -> bool:
    if torch.is_tensor(a) and torch.is_tensor(b):
        return a.shape == b.shape and bool(torch.equal(a.cpu(), b.cpu()))
    return a is b or a == b


MAX_MEAN_BYTES = 32 * 1024
"""A group is gathered into a buffer only when its tensors of whole lines average at most
this: for a few large tensors the copy of the gradients costs what torch's per-tensor walk
costs, or more. ``python benchmarks/optimizer_step.py`` times one Adam step both ways on four
models' shapes (on 2 threads of an AMD EPYC, torch's time over the flat one, three runs):
24 tensors of 1.3k floats (GIN) 2.0-3.0x warm, 1.4-1.65x cold; 40 of 8.2k (relation weights)
1.3-1.47x cold; 12 averaging 8.3k (attention) and 6 averaging 34k (a 3-layer GraphSAGE)
gain nothing or lose when gathered anyway (its ``gathered`` column), and stay torch's."""


def flattenable(params: list[torch.Tensor]) -> bool:
    """Whether ``params`` are worth one buffer: at least two of whole 64-byte lines, of at
    most :data:`MAX_MEAN_BYTES` on average, all plain dense tensors of one dtype on the CPU.
    On a GPU torch's fused kernel updates every tensor in one launch, and the buffer's gain
    (less Python work per tensor) was measured on CPUs only."""
    whole = [p for p in params if in_buffer(p)]
    return (len(whole) > 1
            and sum(p.numel() * p.element_size() for p in whole) <= MAX_MEAN_BYTES * len(whole)
            and len({(p.dtype, p.device) for p in params}) == 1
            and params[0].device.type == "cpu"
            and all(type(p) in (torch.Tensor, nn.Parameter) and p.layout == torch.strided
                    for p in params))


class FlatMixin:
    """Put before a torch optimizer class (see :func:`flat`)."""

    _flat: list[FlatGroup | None] | None

    def __init__(self, params: Any, *args: Any, **kwargs: Any):
        groups = list(params)
        groups = [dict(g) for g in groups] if groups and isinstance(groups[0], dict) \
            else [{"params": groups}]
        flats: list[FlatGroup | None] = []
        for g in groups:
            ps = [g["params"]] if isinstance(g["params"], torch.Tensor) else list(g["params"])
            flats.append(FlatGroup(ps) if flattenable(ps) else None)
            g["params"] = ps
        self._flat = None  # add_param_group, called by torch's __init__, sees plain groups
        super().__init__([{**g, "params": [f.param, *f.rest] if f else g["params"]}  # type: ignore[call-arg]
                          for g, f in zip(groups, flats)], *args, **kwargs)
        self._flat = flats

    @property
    def is_flat(self) -> bool:
        """Whether the state is still flat (no step has met a parameter without a gradient)."""
        return self._flat is not None

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        if getattr(self, "_flat", None) is not None:
            self.split()
        super().add_param_group(param_group)  # type: ignore[misc]

    def zero_grad(self, set_to_none: bool = True) -> None:
        if self._flat is None:
            return super().zero_grad(set_to_none)  # type: ignore[misc]
        for group, f in zip(self.param_groups, self._flat):  # type: ignore[attr-defined]
            for p in (f.members if f else group["params"]):
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    p.grad.detach_().zero_()
            if f is not None:
                f.param.grad = None

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if self._flat is not None:
            for f in self._flat:
                if f is not None and f.moved():
                    f.rehome()
            got = [f.gather() if f else True for f in self._flat]
            if False in got:  # some parameters without a gradient: torch's semantics
                self.split()
            else:
                for f, g in zip(self._flat, got):
                    if f is not None and g is None:  # no gradient in the buffer: skipped
                        f.param.grad = None
        super().step()  # type: ignore[misc]
        return loss

    def split(self) -> None:
        """Leave the flat form: torch's optimizer over the module's parameters (still views
        of the buffers), each with its share of the state."""
        if self._flat is None:
            return
        for group, f in zip(self.param_groups, self._flat):  # type: ignore[attr-defined]
            if f is None:
                continue
            state = self.state.pop(f.param, None)  # type: ignore[attr-defined]
            if state:
                for i, p in enumerate(f.params):
                    self.state[p] = f.split_state(state, i, copy=True)  # type: ignore[attr-defined]
            group["params"] = f.members
            f.param.grad = None
        self._flat = None

    def state_dict(self) -> dict[str, Any]:
        sd = super().state_dict()  # type: ignore[misc]
        if self._flat is None:
            return sd
        state: dict[int, Any] = {}
        groups, k = [], 0
        for g, f in zip(sd["param_groups"], self._flat):
            if f is None:
                ids = list(range(k, k + len(g["params"])))
                for old, new in zip(g["params"], ids):
                    if old in sd["state"]:
                        state[new] = sd["state"][old]
            else:  # g["params"]: the buffer's id, then the rest's, in f.rest's order
                ids = list(range(k, k + len(f.members)))
                flat_state = sd["state"].get(g["params"][0])
                rest = dict(zip(map(id, f.rest), g["params"][1:]))
                pieces = {id(p): i for i, p in enumerate(f.params)}
                for new, p in zip(ids, f.members):
                    if id(p) in pieces:
                        if flat_state:
                            state[new] = f.split_state(flat_state, pieces[id(p)], copy=False)
                    elif rest[id(p)] in sd["state"]:
                        state[new] = sd["state"][rest[id(p)]]
            groups.append({**g, "params": ids})
            k += len(ids)
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        if self._flat is None:
            return super().load_state_dict(state_dict)  # type: ignore[misc]
        groups = state_dict["param_groups"]
        sizes = [len(f.members) if f else len(g["params"])
                 for g, f in zip(self.param_groups, self._flat)]  # type: ignore[attr-defined]
        if [len(g["params"]) for g in groups] != sizes:
            raise ValueError("loaded state dict has a different number of parameter groups, or "
                             "of parameters in a group, than the optimizer")
        # Saved ids are matched to this optimizer's tensors by position: [buffer, *rest].
        state, saved_groups = {}, []
        saved = state_dict["state"]
        for g, f in zip(groups, self._flat):
            if f is None:
                state.update({i: saved[i] for i in g["params"] if i in saved})
                saved_groups.append(g)
                continue
            ids = dict(zip(map(id, f.members), g["params"]))
            flat_ids = [ids[id(p)] for p in f.params]
            rest_ids = [ids[id(p)] for p in f.rest]
            if any(i in saved for i in flat_ids):
                merged = f.merge_state([saved.get(i, {}) for i in flat_ids])
                if merged is None:  # per-parameter states that are not one: torch's form
                    self.split()
                    return super().load_state_dict(state_dict)  # type: ignore[misc]
                state[flat_ids[0]] = merged
            state.update({i: saved[i] for i in rest_ids if i in saved})
            saved_groups.append({**g, "params": [flat_ids[0], *rest_ids]})
        super().load_state_dict({"state": state, "param_groups": saved_groups})  # type: ignore[misc]


_CLASSES: dict[type, type] = {}


def flat(cls: type[torch.optim.Optimizer]) -> type[torch.optim.Optimizer]:
    """``cls`` over flat parameter groups (see the module docstring): ``flat(Adam)(groups,
    lr=...)`` takes what ``Adam`` takes."""
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"Flat{cls.__name__}", (FlatMixin, cls), {
            "__doc__": f"torch's {cls.__name__} over flat parameter groups "
                       f"(graphflow.train.flat)."})
    return _CLASSES[cls]
