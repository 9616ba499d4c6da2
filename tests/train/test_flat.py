"""Optimizers over flat parameter groups: torch's update and semantics, one tensor a step."""

import copy

import pytest
import torch
from torch import nn

from graphflow.train.flat import ALIGN, flat
from graphflow.train.optim import make_optimizer


class Net(nn.Module):
    """Two linear maps and a scale; ``layers`` for ``decay_on = "first_layer"``. (No batch
    norm after a biased map: that bias's gradient is rounding noise, which Adam scales up.)"""

    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 16), nn.Linear(16, 3)])
        self.scale = nn.Parameter(torch.linspace(0.5, 1.5, 3))  # 3 entries: beside the buffer

    def __getitem__(self, i: int) -> nn.Module:
        return {0: self.layers[0], 2: self.layers[1]}[i]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers[1](torch.tanh(self.layers[0](x))) * self.scale


def model(seed: int = 0) -> nn.Module:
    torch.manual_seed(seed)
    return Net()


def train(m: nn.Module, opt: torch.optim.Optimizer, steps: int, seed: int = 1,
          unused_from: int | None = None) -> None:
    gen = torch.Generator().manual_seed(seed)
    for k in range(steps):
        x = torch.randn(6, 4, generator=gen)
        opt.zero_grad()
        if unused_from is not None and k >= unused_from:  # the last layer gets no gradient
            m[0](x).square().sum().backward()
        else:
            m(x).square().sum().backward()
        opt.step()


CASES = [("adam", {}), ("adamw", {}), ("sgd", {"momentum": 0.9}),
         ("adam", {"decay_on": "first_layer"})]


@pytest.mark.parametrize("name, extra", CASES)
def test_flat_groups_train_bit_for_bit_as_torch_does(name, extra):
    ours, ref = model(), model()
    opt = make_optimizer(name, ours, lr=0.05, weight_decay=1e-3, **extra)
    base = make_optimizer(name, ref, lr=0.05, weight_decay=1e-3, flat_groups=False, **extra)
    assert opt.is_flat and not hasattr(base, "is_flat")
    # one buffer per group, beside it the tensors that are not whole 64-byte lines
    # (first_layer: the first layer's two in one buffer; the second group has one tensor of
    # whole lines, too few to gather)
    expected = [1, 3] if extra.get("decay_on") == "first_layer" else [3]
    assert [len(g["params"]) for g in opt.param_groups] == expected
    train(ours, opt, 5)
    train(ref, base, 5)
    for a, b in zip(ours.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # bit for bit
    assert opt.is_flat


def test_parameters_are_aligned_views_of_one_buffer():
    m = model()
    opt = make_optimizer("adam", m, lr=0.1, weight_decay=0.0)
    buf = opt.param_groups[0]["params"][0]
    whole = [m.layers[0].weight, m.layers[0].bias, m.layers[1].weight]  # 64, 16, 48 floats
    for p in m.parameters():
        shared = p.untyped_storage().data_ptr() == buf.untyped_storage().data_ptr()
        assert shared == any(p is w for w in whole)
        assert p.data_ptr() % ALIGN == 0


def test_zero_grad_sets_none_like_torch():
    m = model()
    opt = make_optimizer("adam", m, lr=0.1, weight_decay=0.0)
    train(m, opt, 1)
    assert all(p.grad is not None for p in m.parameters())
    opt.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    train(m, opt, 1)
    opt.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.any() for p in m.parameters())


def test_a_parameter_without_gradient_is_skipped_as_torch_skips_it():
    ours, ref = model(), model()
    opt = make_optimizer("adam", ours, lr=0.05, weight_decay=0.0)
    base = make_optimizer("adam", ref, lr=0.05, weight_decay=0.0, flat_groups=False)
    last = ours[2].weight.detach().clone()
    train(ours, opt, 6, unused_from=2)
    train(ref, base, 6, unused_from=2)
    assert not opt.is_flat  # split into torch's per-parameter form at the first such step
    for a, b in zip(ours.parameters(), ref.parameters()):
        torch.testing.assert_close(a, b, rtol=0, atol=0)  # bit for bit
    assert not torch.equal(ours[2].weight, last)  # trained while it had gradients
    steps = {i: int(s["step"]) for i, s in opt.state_dict()["state"].items()}
    assert steps == {i: int(s["step"]) for i, s in base.state_dict()["state"].items()}
    assert set(steps.values()) == {2, 6}  # each its own count, as torch's


def test_state_dict_is_torch_form_and_loads_both_ways():
    a, b = model(), model()
    opt = make_optimizer("adam", a, lr=0.05, weight_decay=0.0)
    base = make_optimizer("adam", b, lr=0.05, weight_decay=0.0, flat_groups=False)
    train(a, opt, 3)
    train(b, base, 3)
    ours, theirs = opt.state_dict(), base.state_dict()
    assert ours["param_groups"][0]["params"] == theirs["param_groups"][0]["params"]
    for i, s in theirs["state"].items():
        for k, v in s.items():
            torch.testing.assert_close(ours["state"][i][k], v, rtol=0, atol=0)  # bit for bit
    # a torch checkpoint into a flat optimizer, and a flat one into torch's (copies, as a
    # checkpoint file holds: either optimizer's state_dict shares its live tensors)
    ours, theirs = copy.deepcopy(ours), copy.deepcopy(theirs)
    c, d = model(), model()
    c.load_state_dict(b.state_dict())
    d.load_state_dict(a.state_dict())
    opt_c = make_optimizer("adam", c, lr=0.05, weight_decay=0.0)
    opt_c.load_state_dict(theirs)
    assert opt_c.is_flat
    opt_d = make_optimizer("adam", d, lr=0.05, weight_decay=0.0, flat_groups=False)
    opt_d.load_state_dict(ours)
    for m, o in ((a, opt), (b, base), (c, opt_c), (d, opt_d)):
        train(m, o, 2, seed=7)
    for m in (b, c, d):
        for x, y in zip(a.parameters(), m.parameters()):
            torch.testing.assert_close(x, y, rtol=0, atol=0)  # bit for bit


def test_uneven_states_load_in_torch_form():
    a = model()
    opt = make_optimizer("adam", a, lr=0.05, weight_decay=0.0)
    train(a, opt, 4, unused_from=2)  # per-parameter step counts differ now
    saved = opt.state_dict()
    b = model()
    b.load_state_dict(a.state_dict())
    opt_b = make_optimizer("adam", b, lr=0.05, weight_decay=0.0)
    opt_b.load_state_dict(saved)
    assert not opt_b.is_flat
    assert {i: int(s["step"]) for i, s in opt_b.state_dict()["state"].items()} == \
        {i: int(s["step"]) for i, s in saved["state"].items()}


def test_a_replaced_parameter_is_copied_back_and_trained():
    m = model()
    opt = make_optimizer("adam", m, lr=0.05, weight_decay=0.0)
    train(m, opt, 1)
    fresh = torch.full_like(m[0].weight, 0.5)
    m[0].weight.data = fresh.clone()  # what module.to and module.float do
    assert m[0].weight.data_ptr() != opt.param_groups[0]["params"][0].data_ptr()
    train(m, opt, 1)
    w = m[0].weight
    assert not torch.equal(w, fresh) and (w - fresh).abs().max() < 0.06  # one step from 0.5
    buf = opt.param_groups[0]["params"][0]
    assert w.untyped_storage().data_ptr() == buf.untyped_storage().data_ptr()


def test_closure_and_added_groups():
    m = model()
    opt = make_optimizer("sgd", m, lr=0.1, weight_decay=0.0)
    x = torch.randn(4, 4)

    def closure():
        opt.zero_grad()
        loss = m(x).square().sum()
        loss.backward()
        return loss

    before = m[0].weight.detach().clone()
    assert float(opt.step(closure).detach()) > 0
    assert not torch.equal(m[0].weight, before)
    extra = nn.Parameter(torch.ones(2))
    opt.add_param_group({"params": [extra]})
    assert not opt.is_flat and len(opt.param_groups) == 2


def test_a_single_tensor_mixed_dtypes_or_large_tensors_stay_plain():
    one = nn.Linear(3, 1, bias=False)
    opt = flat(torch.optim.Adam)(one.parameters(), lr=0.1)
    assert opt.param_groups[0]["params"][0] is one.weight
    mixed = [nn.Parameter(torch.zeros(2)), nn.Parameter(torch.zeros(2, dtype=torch.float64))]
    opt = flat(torch.optim.Adam)(mixed, lr=0.1)
    assert opt.param_groups[0]["params"] == mixed
    large = [nn.Parameter(torch.zeros(256, 64)), nn.Parameter(torch.zeros(256, 64))]  # 64 KiB
    opt = flat(torch.optim.Adam)(large, lr=0.1)  # copying them costs more than it saves
    assert opt.param_groups[0]["params"] == large


def test_a_group_may_name_one_tensor_as_torch_allows():
    w = nn.Parameter(torch.randn(16, 4))
    b = nn.Parameter(torch.randn(16))
    opt = flat(torch.optim.SGD)([{"params": w}, {"params": [b]}], lr=0.1)
    assert [g["params"] for g in opt.param_groups] == [[w], [b]]


def test_make_optimizer_flattens_cpu_parameters_only():
    on_cpu = make_optimizer("adam", model(), lr=0.05, weight_decay=0.0)
    assert getattr(on_cpu, "is_flat", False)
    elsewhere = model().to("meta")  # any non-CPU device: a GPU's fused kernel is one launch
    opt = make_optimizer("adam", elsewhere, lr=0.05, weight_decay=0.0)
    assert type(opt) is torch.optim.Adam
    assert opt.param_groups[0]["params"][0] is next(elsewhere.parameters())
    wrapped = flat(torch.optim.Adam)(elsewhere.parameters(), lr=0.05)  # the class itself too
    assert wrapped._flat == [None]  # no group gathered
    assert wrapped.param_groups[0]["params"] == list(elsewhere.parameters())
