"""graphflow.pruning.two_four on its own (torch only): 2:4 masks, selection, holding masks through
optimizer steps, and conversion to the semi-structured kernels (CUDA sm80+, skipped elsewhere)."""

import warnings

import pytest
import torch
from torch import nn

from graphflow.pruning import two_four
from graphflow.nn.gcn import GCNConv


def groups_nonzeros(weight, axis=1):
    w = weight.detach() if axis == 1 else weight.detach().t()
    full = w.shape[1] // 4 * 4
    return (w[:, :full] != 0).reshape(w.shape[0], -1, 4).sum(-1)


def test_two_four_mask_keeps_the_two_largest_of_each_group():
    w = torch.tensor([[0.1, -3.0, 2.0, 0.5, 9.0, 8.0, -7.0, 6.0, 5.0]])
    mask = two_four.two_four_mask(w)
    assert mask.tolist() == [[False, True, True, False, True, True, False, False, True]]
    gcn_w = torch.randn(12, 5)  # (in, out): groups run down the columns
    m = two_four.two_four_mask(gcn_w, axis=0)
    assert (m.t().reshape(5, 3, 4).sum(-1) == 2).all()
    assert torch.equal(m, two_four.two_four_mask(gcn_w.t().contiguous()).t())


def test_prune_selects_by_name_and_size_and_leaves_the_rest_alone():
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(64, 64), nn.ReLU(), nn.Linear(64, 64), nn.Linear(64, 3))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    layers, skipped = two_four.select_layers(model, exclude=["2"], min_features=8)
    assert [layer.name for layer in layers] == ["0"]
    assert {s.name: s.reason for s in skipped} == {
        "2": "matched by exclude",
        "3": "fewer than min_features = 8 input or output features"}
    reports = two_four.prune(layers)
    assert (groups_nonzeros(model[0].weight) == 2).all() and reports[0].pruned_fraction == 0.5
    for key in ("2.weight", "3.weight", "2.bias", "0.bias"):
        assert torch.equal(model.state_dict()[key], before[key])
    assert not hasattr(model[2], "weight_mask")


def test_include_matching_nothing_lists_the_linear_layers():
    model = nn.Sequential(nn.Linear(8, 16), GCNConv(16, 4))
    with pytest.raises(ValueError, match=r'include pattern "mlp\.\*" matches no linear layer '
                                         r"of the model; its linear layers: 0 \(8->16\), "
                                         r"1 \(16->4\)"):
        two_four.select_layers(model, include=["mlp.*"])


def test_odd_input_width_keeps_its_tail_dense_and_says_so():
    layer = nn.Linear(10, 32)
    (report,) = two_four.prune(two_four.select_layers(layer)[0])
    assert report.tail == 2 and "input width 10 is not a multiple of 4" in report.reason
    assert (groups_nonzeros(layer.weight) == 2).all()
    assert (layer.weight[:, 8:] != 0).all()


@pytest.mark.parametrize("optimizer", ["adam", "adamw", "sgd"])
def test_masks_hold_through_optimizer_steps_with_weight_decay(optimizer):
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), GCNConv(32, 8))
    layers, _ = two_four.select_layers(model)
    two_four.prune(layers)
    zeros = [~m.weight_mask for _, m in two_four.masked_layers(model)]
    make = {"adam": torch.optim.Adam, "adamw": torch.optim.AdamW,
            "sgd": lambda p, **kw: torch.optim.SGD(p, momentum=0.9, **kw)}[optimizer]
    opt = make(model.parameters(), lr=0.05, weight_decay=0.1)
    remove = two_four.hold_masks(model, opt)
    x = torch.randn(20, 16)
    for _ in range(5):
        opt.zero_grad()
        model[0:2](x).matmul(model[2].weight).square().mean().backward()
        opt.step()
    remove()
    for (_, module), zero in zip(two_four.masked_layers(model), zeros):
        assert (module.weight[zero] == 0).all()
        if optimizer != "sgd":
            assert (opt.state[module.weight]["exp_avg"][zero] == 0).all()
    assert two_four.is_two_four(model[0].weight) and two_four.is_two_four(model[2].weight, 0)


def test_masks_travel_in_the_state_dict():
    model = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
    two_four.prune(two_four.select_layers(model, include=["1"])[0])
    fresh = nn.Sequential(nn.Linear(8, 8), nn.Linear(8, 8))
    assert two_four.attach_masks(fresh, model.state_dict()) == ["1"]
    fresh.load_state_dict(model.state_dict())
    assert torch.equal(fresh[1].weight_mask, model[1].weight_mask)


def test_conversion_on_the_cpu_keeps_every_layer_dense_and_says_why():
    model = nn.Sequential(nn.Linear(64, 64))
    two_four.prune(two_four.select_layers(model)[0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no per-layer warning on a device without kernels
        (report,) = two_four.convert(model, torch.device("cpu"))
    assert report.status == "dense" and "no speed-up is expected" in report.reason


def sm80() -> bool:
    return torch.cuda.is_available() and torch.cuda.get_device_capability() >= (8, 0)


@pytest.mark.cuda
@pytest.mark.skipif(not sm80(), reason="needs a CUDA device of sm80 or newer")
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("backend", ["torch", "torchao"])
def test_converted_linear_matches_dense_on_a_strided_input(dtype, backend):
    if backend == "torchao" and not two_four.torchao_available():
        pytest.skip("torchao is not installed")
    torch.manual_seed(0)
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Linear(256, 128)).to(dev)
    two_four.prune(two_four.select_layers(model)[0])
    dense = nn.Linear(256, 128).to(dev)
    dense.load_state_dict({k: v for k, v in model[0].state_dict().items() if k != "weight_mask"})
    (report,) = two_four.convert(model, dev, dtype=dtype, backend=backend)
    assert report.status == "converted", report.reason
    assert isinstance(model[0], two_four.SemiStructuredLinear)
    x = torch.randn(96, 512, device=dev)[:, ::2]  # non-contiguous (96, 256)
    assert not x.is_contiguous()
    out = model(x)
    assert out.dtype == torch.float32 and out.shape == (96, 128)
    torch.testing.assert_close(out, dense(x), atol=1e-2, rtol=1e-2)


@pytest.mark.cuda
@pytest.mark.skipif(not sm80(), reason="needs a CUDA device of sm80 or newer")
def test_unsupported_layers_fall_back_with_one_warning_each():
    dev = torch.device("cuda")
    model = nn.Sequential(nn.Linear(256, 7), nn.Linear(7, 256), nn.Linear(256, 256)).to(dev)
    two_four.prune(two_four.select_layers(model)[0])
    with pytest.warns(two_four.SparsityFallbackWarning) as caught:
        reports = two_four.convert(model, dev)
    status = {r.name: r.status for r in reports}
    assert status == {"0": "dense", "1": "dense", "2": "converted"}
    messages = [str(w.message) for w in caught]
    assert len(messages) == 2
    assert messages[0].startswith("2:4 layer 0 stays dense: ")
    assert "input width that is a multiple of 4 (it is 7)" in messages[1]
    x = torch.randn(5, 256, device=dev)
    assert model(x).shape == (5, 256)
