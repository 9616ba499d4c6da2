import pytest
import torch
from torch import nn

from graphflow.nn import Linear
from graphflow.sparse import gemm


def test_linear_is_nn_linear_with_the_same_parameters_and_results():
    torch.manual_seed(0)
    ref = nn.Linear(128, 64)
    ours = Linear(128, 64)
    ours.load_state_dict(ref.state_dict())
    assert isinstance(ours, nn.Linear) and set(ours.state_dict()) == {"weight", "bias"}
    for shape in [(3000, 128), (7, 5, 128)]:  # 2-D: graphflow's products; other: torch's
        x = torch.randn(*shape)
        torch.testing.assert_close(ours(x), ref(x), rtol=1e-4, atol=1e-4)


@pytest.mark.skipif(not gemm.onednn_available(), reason="torch without oneDNN (mkldnn)")
def test_linear_products_follow_the_gemm_choice(monkeypatch):
    monkeypatch.setattr(gemm, "INPUT_MAJOR_MIN_MACS", 0)
    layer = Linear(256, 256)
    x = torch.randn(4096, 256)
    with gemm.applied("onednn"):
        assert type(layer(x).grad_fn).__name__.startswith("_OneDNNLinear")
    with gemm.applied("torch"):
        assert type(layer(x).grad_fn).__name__.startswith("_Linear")
