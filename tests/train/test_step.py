"""The one training Step: precision (fp32, bf16 autocast, fp16 refused on the CPU, auto),
and gradient clipping."""

from pathlib import Path

import pytest
import torch
from torch import nn

from graphflow.errors import ConfigError
from graphflow.train import step as step_module
from graphflow.train.optim import make_optimizer
from graphflow.train.step import Step, Tally, check_precision, resolve_precision

CPU = torch.device("cpu")


def model_and_batch(seed=0):
    torch.manual_seed(seed)
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3))
    gen = torch.Generator().manual_seed(1)
    return model, torch.randn(32, 8, generator=gen), torch.randint(0, 3, (32,), generator=gen)


def one_step(precision, clip=0.0, lr=0.1):
    model, x, y = model_and_batch()
    before = [p.detach().clone() for p in model.parameters()]
    step = Step(model, make_optimizer("adam", model, lr=lr, weight_decay=0.0), CPU, precision,
                clip_grad_norm=clip)
    with step.autocast():
        out = model(x)
        loss = nn.functional.cross_entropy(out.float(), y)
    step.step(loss)
    return out.dtype, before, [p.detach() for p in model.parameters()], step


@pytest.mark.parametrize("precision, dtype", [("fp32", torch.float32),
                                              ("bf16-mixed", torch.bfloat16)])
def test_a_step_changes_the_parameters_in_either_precision(precision, dtype):
    out_dtype, before, after, step = one_step(precision)
    assert out_dtype == dtype  # the forward ran under bf16 autocast, or not at all
    assert all(not torch.equal(a, b) for a, b in zip(before, after))
    assert all(p.dtype == torch.float32 for p in after)  # master weights stay float32
    assert step.scaler is None


def test_bf16_and_fp32_steps_agree_to_bf16_rounding():
    _, _, fp32, _ = one_step("fp32", lr=1e-3)
    _, _, bf16, _ = one_step("bf16-mixed", lr=1e-3)
    for a, b in zip(fp32, bf16):
        torch.testing.assert_close(a, b, atol=2e-3, rtol=0)


def test_clipping_bounds_the_gradient_norm():
    model, x, y = model_and_batch()
    step = Step(model, torch.optim.SGD(model.parameters(), lr=0.0), CPU, clip_grad_norm=0.05)
    loss = nn.functional.cross_entropy(model(x) * 100, y)  # large gradients
    step.step(loss)
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
    assert step.grad_norm > 0.05  # the norm before clipping, recorded
    assert float(norm) == pytest.approx(0.05, rel=1e-4)
    with pytest.raises(ConfigError, match="clip_grad_norm must be >= 0"):
        Step(model, None, CPU, clip_grad_norm=-1)


def test_clipping_works_with_flat_optimizer_groups():
    model, x, y = model_and_batch()
    optimizer = make_optimizer("adam", model, lr=0.01, weight_decay=0.0)
    step = Step(model, optimizer, CPU, clip_grad_norm=0.01)
    step.step(nn.functional.cross_entropy(model(x) * 100, y))
    norm = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()
                                                 if p.grad is not None]))
    assert float(norm) <= 0.01 * (1 + 1e-4)


def test_fp16_on_the_cpu_is_refused_in_one_line():
    with pytest.raises(ValueError) as err:
        check_precision("fp16-mixed", cuda_available=False)
    assert "\n" not in str(err.value) and 'use "bf16-mixed"' in str(err.value)
    with pytest.raises(ConfigError, match='needs a CUDA device.*use "bf16-mixed"'):
        Step(nn.Linear(2, 2), None, CPU, "fp16-mixed")
    with pytest.raises(ValueError, match="precision must be one of"):
        check_precision("fp8")


@pytest.mark.parametrize("native", [True, False])
def test_auto_picks_bf16_only_where_the_cpu_runs_it(monkeypatch, native):
    monkeypatch.setattr(step_module, "cpu_has_native_bf16", lambda: native)
    used, why = resolve_precision("auto", CPU)
    assert used == ("bf16-mixed" if native else "fp32") and why
    assert resolve_precision("bf16-mixed", CPU) == ("bf16-mixed", "")


def test_the_cpu_flags_are_read():
    path = Path("/proc/cpuinfo")
    if not path.exists():
        pytest.skip("no /proc/cpuinfo")
    flags = next((line.split(":", 1)[1].split() for line in path.read_text().splitlines()
                  if line.startswith("flags")), [])
    capability = str(torch.backends.cpu.get_cpu_capability()).upper()
    expected = "avx512_bf16" in flags or "amx_bf16" in flags or "AMX" in capability \
        or "BF16" in capability
    assert step_module.cpu_has_native_bf16() == expected


def test_tally_weighs_batches_by_size():
    tally = Tally()
    tally.add(3, loss=1.0)
    tally.add(1, loss=5.0)
    assert tally.means() == {"loss": 2.0}
