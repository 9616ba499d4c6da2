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
