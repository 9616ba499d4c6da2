"""A model that cannot be exported stops with one line naming the part and what would work,
and writes nothing."""

from __future__ import annotations

from dataclasses import dataclass

import pytest
import torch
from torch import nn

from graphflow.components import Model
from graphflow.errors import ConfigError, GraphflowError
from graphflow.manager import create_host
from graphflow.nn.stack import GNNStack
from graphflow.plugin import hookimpl
from graphflow.portable import Unsupported, export_onnx, export_torchscript, portable_model
from graphflow.portable import register_twin
from graphflow.pruning.two_four import SemiStructuredLinear
from portable_cases import build, graph


class MeanConv(nn.Module):
    """A third-party layer without a portable twin."""

    def __init__(self, in_dim, out_dim):
        super().__init__()
        self.lin = nn.Linear(in_dim, out_dim)

    def forward(self, adj, x):
        return self.lin(x[: adj.num_dst])


def _stack():
    return GNNStack([MeanConv(5, 4), MeanConv(4, 3)], [5, 4, 3], dropout=0.0).eval()


def _nothing_written(tmp_path):
    return sorted(p.name for p in tmp_path.iterdir()) == []


@pytest.mark.parametrize("export,fmt", [(export_onnx, "ONNX"), (export_torchscript, "TorchScript")])
def test_layer_without_twin_names_it_and_the_fix(tmp_path, export, fmt):
    with pytest.raises(Unsupported) as info:
        export(_stack(), tmp_path / "m.out")
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith(f"cannot export the model to {fmt}: layers.0 (MeanConv, from package ")
    assert "register_twin" in msg and 'type = "pt"' in msg
    assert _nothing_written(tmp_path)


def test_a_model_that_is_no_layer_stack(tmp_path):
    with pytest.raises(Unsupported, match=r"the model \(Sequential, from package torch\) has "
                                          r"no portable form.*type = \"pt\""):
        export_torchscript(nn.Sequential(nn.Linear(3, 2)), tmp_path / "m.pt")
    assert _nothing_written(tmp_path)


def test_registered_twin_makes_a_layer_exportable(tmp_path):
    class Twin(nn.Module):
        def __init__(self, lin):
            super().__init__()
            self.lin = lin

        def forward(self, h: torch.Tensor, g: tuple[torch.Tensor, torch.Tensor, torch.Tensor,
                                                     torch.Tensor, torch.Tensor, torch.Tensor,
                                                     torch.Tensor]) -> torch.Tensor:
            return self.lin(h.index_select(0, g[6]))

    class OwnConv(MeanConv):
        pass

    register_twin(OwnConv, lambda layer, name, inputs: Twin(layer.lin))
    model = GNNStack([OwnConv(5, 4), OwnConv(4, 3)], [5, 4, 3], dropout=0.0).eval()
    x, src, dst, weight = graph()
    twin = portable_model(model)
    from portable_cases import reference_full
    assert torch.allclose(twin(x, src, dst, weight), reference_full(model, x, src, dst, weight))


def test_semi_structured_kernel_weights_have_no_portable_form(tmp_path):
    model = build("sage")
    conv = model.layers[0]
    conv.fc_self = SemiStructuredLinear(conv.fc_self, torch.float32, sparse=False)
    with pytest.raises(Unsupported) as info:
        export_onnx(model, tmp_path / "m.onnx")
    msg = str(info.value)
    assert "layers.0.fc_self (SemiStructuredLinear, from package graphflow) has no dense weight" \
        in msg
    assert "export the model before converting it to 2:4 kernels" in msg
    assert _nothing_written(tmp_path)


def test_sgc_with_several_hops_has_no_block_form(tmp_path):
    with pytest.raises(Unsupported, match=r'SGConv with k = 2\) has no block form.*inputs = '
                                          r'"full"'):
        export_torchscript(build("sgc", k=2), tmp_path / "m.pt", inputs="block")
    assert _nothing_written(tmp_path)


def test_gat_needs_opset_18(tmp_path):
    with pytest.raises(Unsupported, match="opset 16: GAT's attention softmax needs "
                                          "ScatterElements with reduction max.*opset = 18"):
        export_onnx(build("gat"), tmp_path / "m.onnx", opset=16)
    assert _nothing_written(tmp_path)


def test_opset_and_inputs_are_checked(tmp_path):
    with pytest.raises(ConfigError, match="opset must lie in 16..20"):
        export_onnx(build("gcn"), tmp_path / "m.onnx", opset=13)
    with pytest.raises(ConfigError, match='inputs must be "full" or "block"'):
        export_torchscript(build("gcn"), tmp_path / "m.pt", inputs="sampled")


@dataclass
class _Opts:
    hidden: int = 4


class MeanModel(Model):
    """A third-party model (``[model] type = "meanconv"``)."""

    name = "meanconv"
    summary = "test model without a portable twin"
    Options = _Opts

    def build(self, in_dim, out_dim):
        return GNNStack([MeanConv(in_dim, 4), MeanConv(4, out_dim)], [in_dim, 4, out_dim],
                        dropout=0.0)


class _Plugin:
    @hookimpl
    def graphflow_register_models(self, register):
        register(MeanModel)


PIPELINE = """
[pipeline]
name = "third_party"
seed = 0
[load]
type = "synthetic"
kind = "sbm"
nodes = 60
classes = 2
features = 4
[model]
type = "meanconv"
[train]
type = "node_classification"
epochs = 1
[[export]]
type = "onnx"
path = "out/model.onnx"
"""


def test_pipeline_with_a_third_party_model_stops_in_one_line(run_toml, tmp_path):
    host = create_host(plugins={"meanconv_models": _Plugin()})
    with pytest.raises(GraphflowError) as info:
        run_toml(PIPELINE, host=host)
    msg = str(info.value)
    assert "\n" not in msg
    assert msg.startswith("[export.0] onnx: cannot export the model to ONNX: layers.0 "
                          "(MeanConv, from package ")
    assert not (tmp_path / "out" / "model.onnx").exists()
    assert not list((tmp_path / "out").glob("*.partial"))


def test_cli_exits_1_with_one_line(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.replace('type = "meanconv"', 'type = "sgc"\nk = 2')
                    .replace('type = "onnx"', 'type = "torchscript"\ninputs = "block"'))
    code, out, err = cli("run", path, "--out-dir", tmp_path / "run")
    assert code == 1
    lines = [line for line in err.strip().splitlines() if line.startswith("graphflow:")]
    assert len(lines) == 1 and "Traceback" not in err
    assert "[export.0] torchscript: cannot export the model to TorchScript: layers.0 (SGConv " \
           "with k = 2) has no block form" in lines[0]
    assert not (tmp_path / "out").exists()


def test_validate_names_the_section_of_a_bad_opset(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.replace('type = "meanconv"', 'type = "gcn"')
                    .replace('type = "onnx"', 'type = "onnx"\nopset = 12'))
    code, _, err = cli("validate", path)
    assert code == 1
    assert err.strip().endswith("[export.0] onnx: opset must lie in 16..20 (scatter_add needs "
                                "ScatterElements with a reduction, opset 16), got 12")


@pytest.mark.parametrize("export,fmt", [(export_onnx, "ONNX"), (export_torchscript, "TorchScript")])
def test_gine_is_refused_rather_than_exported_as_its_gin_base(tmp_path, export, fmt):
    """GINEConv subclasses GINConv; GIN's twin would drop the edge features silently."""
    from graphflow.nn.gine import GINEConv

    stack = GNNStack([GINEConv(nn.Linear(5, 3), nn.Linear(2, 5))], [5, 3], dropout=0.0).eval()
    with pytest.raises(Unsupported, match=rf"cannot export the model to {fmt}: layers.0 "
                                          r"\(GINEConv, .*reads edge features.*type = \"pt\""):
        export(stack, tmp_path / "m.out")
    assert _nothing_written(tmp_path)
