"""Optimizers by name; weight decay on the first layer only, as Kipf & Welling did."""

import pytest
import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.train.optim import make_optimizer, parameter_groups


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 3), nn.Linear(3, 2)])


def test_first_layer_decay_splits_groups():
    model = TwoLayers()
    groups = parameter_groups(model, 5e-4, "first_layer")
    assert [g["weight_decay"] for g in groups] == [5e-4, 0.0]
    assert {id(p) for p in groups[0]["params"]} == {id(p) for p in model.layers[0].parameters()}
    assert len(groups[1]["params"]) == 2


@pytest.mark.parametrize("name, cls", [("adam", torch.optim.Adam), ("adamw", torch.optim.AdamW),
                                       ("sgd", torch.optim.SGD)])
def test_make_optimizer(name, cls):
    opt = make_optimizer(name, TwoLayers(), lr=0.1, weight_decay=1e-3, momentum=0.9)
    assert isinstance(opt, cls) and opt.param_groups[0]["weight_decay"] == 1e-3


def test_first_layer_decay_needs_a_stack():
    with pytest.raises(ConfigError, match='decay_on = "first_layer" needs a layer stack'):
        parameter_groups(nn.Linear(2, 2), 5e-4, "first_layer")


def test_unknown_optimizer_lists_the_choices():
    with pytest.raises(ConfigError, match='unknown optimizer "adagrad"; choices: adam, adamw'):
        make_optimizer("adagrad", TwoLayers(), lr=0.1, weight_decay=0.0)


@pytest.mark.parametrize("name", ["adam", "adamw"])
def test_adam_steps_fused_with_the_foreach_update(name):
    torch.manual_seed(0)
    model = TwoLayers()
    twin = TwoLayers()
    twin.load_state_dict(model.state_dict())
    opt = make_optimizer(name, model, lr=0.1, weight_decay=1e-3)
    cls = torch.optim.Adam if name == "adam" else torch.optim.AdamW
    ref = cls(twin.parameters(), lr=0.1, weight_decay=1e-3, foreach=True)
    assert opt.defaults["fused"] is True
    for _ in range(3):
        x = torch.randn(5, 4)
        for m, o in ((model, opt), (twin, ref)):
            o.zero_grad()
            m.layers[1](m.layers[0](x)).square().sum().backward()
            o.step()
    for a, b in zip(model.parameters(), twin.parameters()):
        torch.testing.assert_close(a, b, rtol=1e-5, atol=1e-6)


def test_mixed_devices_or_no_parameters_are_not_fused():
    from graphflow.train.optim import fusable
    assert not fusable([])
    assert not fusable([torch.zeros(2, dtype=torch.int64)])
    assert fusable([torch.zeros(2), torch.zeros(3, dtype=torch.float64)])
