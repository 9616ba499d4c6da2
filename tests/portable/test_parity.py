"""Exported files run outside graphflow (onnxruntime; plain torch for TorchScript, in a
process that imports neither graphflow nor DGL) and give graphflow's outputs within 1e-4."""

from __future__ import annotations

import json

import pytest
import torch

from graphflow.portable import export_onnx, export_torchscript
from graphflow.portable.inputs import block_inputs
from graphflow.pruning.two_four import linear_layers, prune
from graphflow.sparse import Adjacency
from portable_cases import (IN_DIM, OUT_DIM, blocks, build, graph, reference_blocks, reference_full,
                    run_exported)

MODELS = {
    "gcn": ("gcn", {}),
    "sage": ("sage", {"norm": "batch", "residual": True, "layers": 3}),
    "gin": ("gin", {"learn_eps": True, "eps": 0.2}),
    "sgc": ("sgc", {"k": 1}),
    "gat": ("gat", {"heads": 2, "hidden": 4}),
}
FORMATS = ("onnx", "torchscript")
FORMS = ("full", "block")


@torch.no_grad()
def _sampled_blocks(layers):
    from graphflow.compat.dgl import dgl
    from graphflow.sampling.csc import CSCGraph
    from graphflow.sampling.neighbor import sample_blocks

    gen = torch.Generator().manual_seed(5)
    src, dst = torch.randint(0, 40, (160,), generator=gen), torch.randint(0, 40, (160,),
                                                                          generator=gen)
    csc = CSCGraph.from_dgl(dgl.graph((src, dst), num_nodes=40))
    seeds = torch.tensor([3, 7, 11, 20, 31])
    blks = sample_blocks(csc, seeds, [3] * layers, generator=gen)
    x = torch.randn(40, IN_DIM, generator=gen)[blks[0].src_nodes]
    return x, blks


def _pruned_gcn():
    model = build("gcn", hidden=8)
    prune(linear_layers(model))
    return model


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    """Every model in every format and form, exported, run in one foreign process."""
    folder = tmp_path_factory.mktemp("portable")
    models = {name: build(kind, **opts) for name, (kind, opts) in MODELS.items()}
    models["gcn_2to4"] = _pruned_gcn()
    x, src, dst, weight = graph(seed=3, n=11, e=30)  # other sizes than the tracing example
    xb, blks = {}, {}
    cases, expected, keys = [], [], []
    for name, model in models.items():
        for form in FORMS:
            if form == "full":
                inputs, ref = [x, src, dst, weight], reference_full(model, x, src, dst, weight)
            else:
                bx, bb = blocks(model.num_layers, seed=4)
                inputs = [bx] + [t for b in bb for t in b]
                ref = reference_blocks(model, bx, bb)
            for fmt in FORMATS:
                path = folder / f"{name}_{form}.{'onnx' if fmt == 'onnx' else 'pt'}"
                export = export_onnx if fmt == "onnx" else export_torchscript
                written = export(model, path, inputs=form, model_info={"model": name})
                assert written == [path, path.with_name(path.name + ".json")]
                cases.append({"file": path, "format": fmt, "form": form, "inputs": inputs})
                expected.append(ref)
                keys.append((name, form, fmt))
    # Blocks as graphflow's neighbor sampler draws them, fed through block_inputs.
    model = models["sage"]
    bx, sampled = _sampled_blocks(model.num_layers)
    ref = model([Adjacency.from_block(b) for b in sampled], bx)
    for fmt in FORMATS:
        path = folder / f"sage_block.{'onnx' if fmt == 'onnx' else 'pt'}"
        cases.append({"file": path, "format": fmt, "form": "block",
                      "inputs": list(block_inputs(sampled, bx))})
        expected.append(ref)
        keys.append(("sage_sampled", "block", fmt))
    outputs = run_exported(cases, folder)
    return dict(zip(keys, zip(outputs, expected))), folder


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("name", [*MODELS, "gcn_2to4"])
def test_exported_model_matches_graphflow(exported, name, form, fmt):
    results, _ = exported
    got, expected = results[(name, form, fmt)]
    assert got.shape == expected.shape
    assert (got - expected).abs().max().item() < 1e-4


@pytest.mark.parametrize("fmt", FORMATS)
def test_blocks_of_the_neighbor_sampler(exported, fmt):
    """SAGE on blocks drawn by graphflow's sampler (graphflow.portable.inputs.block_inputs)."""
    results, _ = exported
    got, expected = results[("sage_sampled", "block", fmt)]
    assert got.shape == expected.shape == (5, OUT_DIM)
    assert (got - expected).abs().max().item() < 1e-4


def test_sidecar_describes_the_inputs(exported):
    _, folder = exported
    side = json.loads((folder / "sage_block.onnx.json").read_text())
    assert side["format"] == "onnx" and side["inputs_form"] == "block"
    names = [i["name"] for i in side["inputs"]]
    assert names == ["x"] + [f"{f}_{i}" for i in range(3)
                             for f in ("src", "dst", "weight", "num_dst")]
    assert side["inputs"][0] == {"name": "x", "dtype": "float32", "shape": ["num_src_0", IN_DIM]}
    assert side["outputs"] == [{"name": "logits", "dtype": "float32",
                                "shape": ["num_dst_2", OUT_DIM]}]
    assert side["model_info"] == {"model": "sage"} and side["opset"] >= 16
    full = json.loads((folder / "gcn_full.pt.json").read_text())
    assert [i["name"] for i in full["inputs"]] == ["x", "src", "dst", "weight"]
    assert full["self_loops_added_inside"] is True
    assert "computed inside the model" in full["preprocessing"]


def test_onnx_graph_ops_and_dynamic_sizes(exported):
    """Degrees by ScatterElements (add); messages gathered, sorted (TopK) and summed by
    segments (CumSum); no sparse or custom operator."""
    import onnx

    _, folder = exported
    proto = onnx.load(str(folder / "gcn_full.onnx"))
    ops = {n.op_type for n in proto.graph.node}
    assert {"ScatterElements", "Gather", "TopK", "CumSum"} <= ops
    assert all(n.domain in ("", "ai.onnx") for n in proto.graph.node)
    reductions = {a.s.decode() for n in proto.graph.node if n.op_type == "ScatterElements"
                  for a in n.attribute if a.name == "reduction"}
    assert reductions == {"add"}
    dims = {i.name: [d.dim_param or d.dim_value for d in i.type.tensor_type.shape.dim]
            for i in proto.graph.input}
    assert dims == {"x": ["N", IN_DIM], "src": ["E"], "dst": ["E"], "weight": ["E"]}


def test_pruned_weights_keep_their_zeros(exported):
    results, _ = exported
    model = _pruned_gcn()
    w = model.layers[1].weight  # (8, 3): two groups of 4 inputs per output
    assert float((w == 0).float().mean()) == 0.5
    got, expected = results[("gcn_2to4", "full", "onnx")]
    assert torch.allclose(got, expected, atol=1e-4)
