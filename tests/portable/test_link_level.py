"""Link prediction models (a layer stack and its pair decoder) export to ONNX and
TorchScript, run outside graphflow, and give graphflow's embeddings and pair scores."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from graphflow.bundle.ids import lookup
from graphflow.linkpred.decoders import LinkModel, make_decoder
from graphflow.portable import Unsupported, export_onnx, export_torchscript
from graphflow.portable.inputs import full_inputs
from graphflow.sparse import Adjacency
from portable_cases import build, graph, reference_full, run_exported

CASES = {  # name: (layer stack, its options, decoder)
    "sage_dot": ("sage", {}, "dot"),
    "gcn_mlp": ("gcn", {"norm": "layer"}, "mlp"),
    "gin_bilinear": ("gin", {}, "bilinear"),
}
FORMATS = ("onnx", "torchscript")


def link_model(kind: str, options: dict, decoder: str) -> LinkModel:
    encoder = build(kind, **options)
    model = LinkModel(encoder, make_decoder(decoder, encoder.dims[-1]))
    with torch.no_grad():
        for p in model.decoder.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("link_level")
    x, src, dst, weight = graph(seed=3, n=11, e=30)
    pairs = torch.tensor([[0, 3, 10, 5, 5], [1, 9, 2, 5, 0]])
    inputs = [x, src, dst, weight, pairs[0], pairs[1]]
    cases, expected, keys = [], [], []
    for name, (kind, options, decoder) in CASES.items():
        torch.manual_seed(0)
        model = link_model(kind, options, decoder)
        with torch.no_grad():
            h = reference_full(model.encoder, x, src, dst, weight)
            scores = model.decoder(h[pairs[0]], h[pairs[1]])
        for fmt in FORMATS:
            path = folder / f"{name}.{'onnx' if fmt == 'onnx' else 'pt'}"
            export = export_onnx if fmt == "onnx" else export_torchscript
            export(model, path, model_info={"model": kind})
            cases.append({"file": path, "format": fmt, "form": "full", "inputs": inputs})
            expected.append((h, scores))
            keys.append((name, fmt))
    return dict(zip(keys, zip(run_exported(cases, folder), expected))), folder


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", CASES)
def test_exported_link_model_matches_graphflow(exported, name, fmt):
    results, _ = exported
    (h, scores), (h_ref, scores_ref) = results[(name, fmt)]
    assert h.shape == h_ref.shape and scores.shape == scores_ref.shape == (5,)
    assert (h - h_ref).abs().max().item() < 1e-4
    assert (scores - scores_ref).abs().max().item() < 1e-4


def test_sidecar_names_the_pair_inputs_and_both_outputs(exported):
    _, folder = exported
    side = json.loads((folder / "sage_dot.onnx.json").read_text())
    assert side["inputs_form"] == "pairs"
    assert [i["name"] for i in side["inputs"]] == ["x", "src", "dst", "weight", "pair_src",
                                                   "pair_dst"]
    assert [o["name"] for o in side["outputs"]] == ["embeddings", "scores"]
    call = json.loads((folder / "sage_dot.pt.json").read_text())["call"]
    assert call.startswith("embeddings, scores = ")


def test_link_models_without_a_portable_form_fail_in_one_line(tmp_path):
    model = link_model("sage", {}, "dot")
    with pytest.raises(Unsupported, match='a link prediction model takes whole graphs: '
                                          'export it with inputs = "full"'):
        export_onnx(model, tmp_path / "m.onnx", inputs="block")

    class Cosine(torch.nn.Module):
        def forward(self, hu, hv):
            return torch.cosine_similarity(hu, hv, dim=-1)

    odd = LinkModel(model.encoder, Cosine())
    with pytest.raises(Unsupported, match=r"decoder \(Cosine, from package .*\) has no "
                                          r"portable twin \(dot, mlp and bilinear have\)"):
        export_torchscript(odd, tmp_path / "m.pt")
    assert not list(tmp_path.iterdir())


def test_a_link_prediction_run_exports_what_it_scored(run_toml, tmp_path):
    """examples/edgelist_link_prediction.toml (sampled training) with an ONNX export: the
    file, run outside graphflow on the training graph, gives the run's own scores of its
    held-out test pairs."""
    example = Path(__file__).resolve().parents[2] / "examples" / "edgelist_link_prediction.toml"
    text = example.read_text().replace('"data/', '"' + (example.parent / "data").as_posix() + "/")
    result = run_toml(text + '\n[[export]]\ntype = "onnx"\n',
                      overrides=["train.epochs=1", "train.decoder=mlp"])
    out, data = result.out_dir, result.ctx.data
    links = pq.read_table(out / "links.parquet").to_pydict()
    test = [i for i, s in enumerate(links["split"]) if s == "test"]
    u = lookup(data.ids, [links["src"][i] for i in test])
    v = lookup(data.ids, [links["dst"][i] for i in test])
    inputs = [*full_inputs(Adjacency.from_graph(data.graph), data.graph.ndata["feat"].float()),
              u, v]
    (h, scores), = run_exported([{"file": out / "model.onnx", "format": "onnx",
                                  "form": "full", "inputs": inputs}], tmp_path)
    assert h.shape[0] == data.num_nodes
    expected = torch.tensor([links["score"][i] for i in test])
    assert scores.shape == expected.shape and (scores - expected).abs().max().item() < 1e-4
