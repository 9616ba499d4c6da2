"""Typed models (R-GCN, the hetero wrapper) export to ONNX and TorchScript with one input per
node type and per relation, and run outside graphflow with the trained model's logits."""

import json
from pathlib import Path

import pytest
import torch

from graphflow.errors import ConfigError
from graphflow.nn.typed import TypedAdjacency, TypedSchema, full_input
from graphflow.options import parse_options
from graphflow.portable import export_onnx, export_torchscript
from graphflow.portable.convert import Unsupported
from graphflow.portable.typed import typed_model
from graphflow.testing import make_typed_graph
from portable_cases import run_exported

pytest.importorskip("onnxruntime")

CASES = [
    ("rgcn", {"hidden": 8, "regularizer": "basis", "num_bases": 2}),
    ("rgcn", {"hidden": 8, "regularizer": "bdd", "num_bases": 2, "self_loop": False}),
    ("rgcn", {"hidden": 8, "regularizer": "none", "onehot_input": True}),
    ("hetero", {"hidden": 8, "layer": "sage", "aggregate": "sum"}),
    ("hetero", {"hidden": 8, "layer": "gcn", "aggregate": "stack"}),
    ("hetero", {"hidden": 8, "layer": "gat", "aggregate": "mean",
                "layer_options": {"heads": 2}}),
]


def typed_feeds(side: dict, g) -> dict:
    """What a caller passes, from an exported model's sidecar and the typed graph: each
    type's features (or node positions when featureless), each relation's edges."""
    xs = [torch.arange(g.num_nodes(t["type"])) if t["featureless"]
          else g.nodes[t["type"]].data["feat"].float() for t in side["node_types"]]
    rels, names = [], [t["input"] for t in side["node_types"]]
    for k, rel in enumerate(side["relations"]):
        src, dst = g.edges(etype=tuple(rel["relation"]))
        rels.append([src, dst, torch.ones(src.shape[0])])
        names += [f"src_{k}", f"dst_{k}", f"weight_{k}"]
    return {"xs": xs, "rels": rels, "names": names, "form": "typed"}


def build(host, name: str, options: dict, data):
    info = host.registry.get("model", name)
    component = info.cls(parse_options(info.cls.Options, options, section="model",
                                       component=name, source="test", base_dir=Path.cwd()))
    g = data.graph
    feats = {t: g.nodes[t].data["feat"] for t in g.ntypes if "feat" in g.nodes[t].data}
    torch.manual_seed(0)
    model = component.build_typed(TypedSchema.of(g, feats), 3, host.registry).eval()
    with torch.no_grad():  # non-zero biases, so that they are checked too
        for name_, p in model.named_parameters():
            if name_.endswith("bias"):
                p.uniform_(-0.5, 0.5)
    reference = model.inference(TypedAdjacency.from_graph(g), full_input(g, feats))["paper"]
    return model, reference


def test_typed_models_run_outside_graphflow(host, tmp_path):
    """Every case exported to both formats, run in one process without graphflow."""
    data = make_typed_graph(num_papers=30)
    info = {"node_type": "paper"}
    cases, references = [], []
    for i, (name, options) in enumerate(CASES):
        model, reference = build(host, name, options, data)
        onnx_file, onnx_side = export_onnx(model, tmp_path / f"m{i}.onnx", model_info=info)
        ts_file, ts_side = export_torchscript(model, tmp_path / f"m{i}.pt", model_info=info)
        side = json.loads(onnx_side.read_text())
        assert side["inputs_form"] == "typed" and side["target"] == "paper"
        assert [t["type"] for t in side["node_types"]] == list(data.graph.ntypes)
        assert [tuple(r["relation"]) for r in side["relations"]] == list(
            data.graph.canonical_etypes)
        assert {"x_paper", "x_author"} <= {i["name"] for i in side["inputs"]}
        assert next(t for t in side["node_types"] if t["type"] == "venue")["featureless"]
        assert json.loads(ts_side.read_text())["call"].startswith("torch.jit.load(file)([x_")
        feeds = typed_feeds(side, data.graph)
        twin = typed_model(model, "paper")
        assert torch.allclose(twin(feeds["xs"], feeds["rels"]), reference, atol=1e-5), name
        cases += [{"file": onnx_file, "format": "onnx", **feeds},
                  {"file": ts_file, "format": "torchscript", **feeds}]
        references += [reference, reference]
    outs = run_exported(cases, tmp_path)
    for case, out, reference in zip(cases, outs, references):
        assert out.shape == reference.shape
        assert (out - reference).abs().max().item() <= 1e-4, case["file"]


def test_typed_export_refuses_block_inputs_and_a_missing_target(host, tmp_path):
    data = make_typed_graph(num_papers=20)
    model, _ = build(host, "rgcn", {"hidden": 4}, data)
    with pytest.raises(Unsupported, match='typed model takes the whole typed graph; export it '
                                          'with inputs = "full"'):
        export_torchscript(model, tmp_path / "m.pt", inputs="block",
                           model_info={"node_type": "paper"})
    with pytest.raises(ConfigError, match="target node type None is not one of its node types"):
        export_onnx(model, tmp_path / "m.onnx", model_info={})
    assert not (tmp_path / "m.onnx").exists() and not (tmp_path / "m.pt").exists()


AIFB = Path(__file__).resolve().parents[2] / "examples" / "aifb_rgcn.toml"


@pytest.mark.slow
def test_aifb_rgcn_bundle_predict_and_portable_exports(run_toml, shared_data, cli, tmp_path):
    """examples/aifb_rgcn.toml (a few epochs) writes a bundle; predict reproduces the run's
    predictions, and its ONNX and TorchScript files give the run's logits outside graphflow."""
    root = shared_data("aifb")
    text = AIFB.read_text().replace("../../shared/data/aifb", str(root)) + (
        '\n[[export]]\ntype = "onnx"\n\n[[export]]\ntype = "torchscript"\n')
    result = run_toml(text, overrides=["train.epochs=3"])
    ctx, out = result.ctx, tmp_path / "out"
    bundle = json.loads((out / "model" / "bundle.json").read_text())
    assert bundle["typed"]["target"] == "Personen"
    assert bundle["ids"]["node_type"] == "Personen" and bundle["ids"]["count"] == 237

    code, _, err = cli("predict", out, "--data", tmp_path / "pipeline.toml")
    assert code == 0, err
    import pyarrow.parquet as pq

    trained = pq.read_table(out / "predictions.parquet")
    again = pq.read_table(out / "predict" / "predictions.parquet")
    assert again.column("id").equals(trained.column("id"))
    assert again.column("prediction").equals(trained.column("prediction"))
    assert trained.column("id")[0].as_py().startswith("http://www.aifb.uni-karlsruhe.de/")

    logits = ctx.artifacts.logits  # (237, 4): the run's own
    side = json.loads((out / "model.onnx.json").read_text())
    feeds = typed_feeds(side, ctx.data.graph)
    outs = run_exported([{"file": out / "model.onnx", "format": "onnx", **feeds},
                         {"file": out / "model.torchscript.pt", "format": "torchscript",
                          **feeds}], tmp_path)
    for got in outs:
        assert got.shape == logits.shape
        assert (got - logits).abs().max().item() <= 1e-4


def test_hetero_on_typed_tables_exports_the_runs_logits(run_toml, tmp_path):
    """examples/typed_tables.toml with the hetero wrapper (sage per relation): its ONNX and
    TorchScript exports give the run's logits outside graphflow."""
    examples = AIFB.parent
    text = (examples / "typed_tables.toml").read_text().replace(
        'path = "data/', f'path = "{examples}/data/').replace(
        'type = "rgcn"            # or type = "hetero" with layer = "sage" (any homogeneous '
        'model)', 'type = "hetero"\nlayer = "sage"\naggregate = "sum"').replace(
        'regularizer = "basis"\nnum_bases = 4\n', '') + (
        '\n[[export]]\ntype = "onnx"\n\n[[export]]\ntype = "torchscript"\n')
    assert 'type = "hetero"' in text
    result = run_toml(text, overrides=["train.epochs=3"])
    ctx, out = result.ctx, tmp_path / "out"
    side = json.loads((out / "model.torchscript.pt.json").read_text())
    assert side["target"] == "paper" and len(side["relations"]) == 8
    feeds = typed_feeds(side, ctx.data.graph)
    outs = run_exported([{"file": out / "model.onnx", "format": "onnx", **feeds},
                         {"file": out / "model.torchscript.pt", "format": "torchscript",
                          **feeds}], tmp_path)
    for got in outs:
        assert (got - ctx.artifacts.logits).abs().max().item() <= 1e-4
