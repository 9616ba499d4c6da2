"""Graph-level models (a graph task's readout and head around a layer stack) export to ONNX
and TorchScript, run outside graphflow, and give graphflow's per-graph scores."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.model import GraphModel
from graphflow.portable import Unsupported, export_onnx, export_torchscript
from graphflow.portable.inputs import full_inputs
from graphflow.sparse import Adjacency
from graphflow_plugins.loaders.tu import TULoader, TUOptions
from graphflow_plugins.models.gine import GINEModel
from portable_cases import IN_DIM, build, run_exported

CLASSES = 3
CASES = {  # name: (layer stack, its options, readout, read-out layers)
    "gin_sum_all": ("gin", {"layers": 3, "norm": "batch"}, "sum", "all"),
    "gin_mean_last": ("gin", {}, "mean", "last"),
    "sage_max_all": ("sage", {"residual": True}, "max", "all"),
    "gcn_attention_all": ("gcn", {}, "attention", "all"),
    "gin_set2set_all": ("gin", {}, "set2set", "all"),
    # a regression head trained in standard units (scale_targets), not yet folded in
    "gin_sum_all_scaled": ("gin", {"layers": 3, "norm": "batch"}, "sum", "all"),
}
FORMATS = ("onnx", "torchscript")


def collection(seed: int = 1):
    """Four graphs of 2 to 6 nodes, edges inside each; the last graph's first node has no
    in-edge. Returns the whole collection as one batch and the raw inputs of the export."""
    gen = torch.Generator().manual_seed(seed)
    sizes = torch.tensor([3, 6, 2, 5])
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), torch.cumsum(sizes, 0)])
    owner = torch.arange(4).repeat(5)  # (20,) the graph of each edge
    src = ptr[owner] + (torch.rand(20, generator=gen) * sizes[owner]).long()
    dst = ptr[owner] + (torch.rand(20, generator=gen) * sizes[owner]).long()
    dst[dst == ptr[3]] = ptr[3] + 1  # node ptr[3] has no in-edge
    n = int(ptr[-1])
    x = torch.randn(n, IN_DIM, generator=gen)
    batch = GraphBatcher(Adjacency.from_edges(src, dst, n, n), ptr, x).batch(torch.arange(4))
    graph = torch.repeat_interleave(torch.arange(4), sizes)
    # the batch's CSR edges, as a client passes them: raw, unweighted
    adj = batch.adj
    inputs = [batch.x, adj.indices.long(), adj.row_index.long(), torch.ones(adj.nnz), graph,
              torch.tensor(4)]
    return batch, inputs


def graph_model(kind: str, options: dict, pooling: str, layers: str, batch) -> GraphModel:
    encoder = build(kind, **{"hidden": 8, **options})
    model = GraphModel.probe(encoder, batch, layers, CLASSES, pooling=pooling, dropout=0.5)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return model.eval()


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    folder = tmp_path_factory.mktemp("graph_level")
    batch, inputs = collection()
    cases, expected, keys = [], [], []
    for name, (kind, options, pooling, layers) in CASES.items():
        torch.manual_seed(0)
        model = graph_model(kind, options, pooling, layers, batch)
        if name.endswith("_scaled"):
            model.scale_targets(torch.tensor([500.0, -2.0, 0.0]), torch.tensor([30.0, 0.5, 1.0]))
        with torch.no_grad():
            ref = model(batch)[0]
        for fmt in FORMATS:
            path = folder / f"{name}.{'onnx' if fmt == 'onnx' else 'pt'}"
            export = export_onnx if fmt == "onnx" else export_torchscript
            assert export(model, path, model_info={"model": kind}) == \
                [path, path.with_name(path.name + ".json")]
            cases.append({"file": path, "format": fmt, "form": "full", "inputs": inputs})
            expected.append(ref)
            keys.append((name, fmt))
    return dict(zip(keys, zip(run_exported(cases, folder), expected))), folder


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", CASES)
def test_exported_graph_model_matches_graphflow(exported, name, fmt):
    results, _ = exported
    got, expected = results[(name, fmt)]
    assert got.shape == expected.shape == (4, CLASSES)
    assert (got - expected).abs().max().item() < 1e-4 * max(1.0, expected.abs().max().item())


def test_sidecar_names_the_graph_inputs(exported):
    _, folder = exported
    side = json.loads((folder / "gin_sum_all.onnx.json").read_text())
    assert side["inputs_form"] == "graphs"
    assert [i["name"] for i in side["inputs"]] == ["x", "src", "dst", "weight", "graph",
                                                   "num_graphs"]
    assert side["outputs"] == [{"name": "logits", "dtype": "float32",
                                "shape": ["G", CLASSES]}]
    assert "num_graphs" in side["preprocessing"]
    call = json.loads((folder / "gin_sum_all.pt.json").read_text())["call"]
    assert call.endswith("(x, src, dst, weight, graph, num_graphs)")


def test_graph_models_without_a_portable_form_fail_in_one_line(tmp_path):
    batch, _ = collection()
    model = graph_model("gin", {}, "sum", "all", batch)
    with pytest.raises(Unsupported, match='a graph-level model takes whole graphs: export it '
                                          'with inputs = "full"'):
        export_onnx(model, tmp_path / "m.onnx", inputs="block")
    for pooling in ("max", "set2set"):
        pooled = graph_model("gin", {}, pooling, "all", batch)
        with pytest.raises(Unsupported, match=f"with opset 16: the {pooling} read-out needs "
                                              "ScatterElements with reduction max"):
            export_onnx(pooled, tmp_path / "m.onnx", opset=16)
    assert not list(tmp_path.iterdir())  # nothing written


def gine_case(seed: int = 2):
    """A gine graph model on the collection with 2-wide edge features, its inputs (edge_feat
    in the order of src and dst) and graphflow's scores."""
    batch, inputs = collection()
    gen = torch.Generator().manual_seed(seed)
    adj = batch.adj
    adj.edge_feat = torch.randn(adj.nnz, 2, generator=gen)  # CSR order, as src / dst above
    torch.manual_seed(seed)
    encoder = GINEModel(GINEModel.Options(hidden=8, layers=2, norm="batch")).build(IN_DIM, 8)
    model = GraphModel.probe(encoder, batch, "all", CLASSES, pooling="sum", dropout=0.0)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.1 * torch.randn_like(p))
    model.eval()
    with torch.no_grad():
        ref = model(batch)[0]
    return model, [*inputs[:4], adj.edge_feat, *inputs[4:]], ref


def test_gine_exports_with_its_edge_features(tmp_path):
    model, inputs, ref = gine_case()
    cases = []
    for fmt, export in (("onnx", export_onnx), ("torchscript", export_torchscript)):
        path = tmp_path / f"gine.{'onnx' if fmt == 'onnx' else 'pt'}"
        export(model, path)
        cases.append({"file": path, "format": fmt, "form": "full", "inputs": inputs})
    for got in run_exported(cases, tmp_path):
        assert got.shape == ref.shape == (4, CLASSES)
        assert (got - ref).abs().max().item() < 1e-4
    side = json.loads((tmp_path / "gine.onnx.json").read_text())
    assert [i["name"] for i in side["inputs"]] == ["x", "src", "dst", "weight", "edge_feat",
                                                   "graph", "num_graphs"]
    assert side["inputs"][4] == {"name": "edge_feat", "dtype": "float32", "shape": ["E", 2]}


def test_a_graph_classification_run_exports_what_it_predicted(run_toml, tmp_path):
    """[[export]] onnx and torchscript after graph_classification: the files, run outside
    graphflow on the collection, give the run's own per-graph logits."""
    rings = (Path(__file__).resolve().parents[2] / "examples" / "data" / "rings_paths").as_posix()
    result = run_toml(f"""
[pipeline]
seed = 0
[load]
type = "tu"
path = "{rings}"
name = "RP"
features = "degree"
[model]
type = "gin"
layers = 2
hidden = 8
[train]
type = "graph_classification"
epochs = 3
batch_size = 4
readout = "mean"
[[export]]
type = "onnx"
[[export]]
type = "torchscript"
[[export]]
type = "parquet"
what = "logits"
""")
    out, data = result.out_dir, result.ctx.data
    logits = torch.tensor(np.stack(pq.read_table(out / "logits.parquet").column("logits")
                                   .to_pylist()))
    adj = Adjacency.from_graph(data.graph)
    inputs = [*full_inputs(adj, data.graph.ndata["feat"].float()), data.graphs.node_graph(),
              torch.tensor(data.graphs.num_graphs)]
    cases = [{"file": out / "model.onnx", "format": "onnx", "form": "full", "inputs": inputs},
             {"file": out / "model.torchscript.pt", "format": "torchscript", "form": "full",
              "inputs": inputs}]
    for got in run_exported(cases, tmp_path):
        assert got.shape == logits.shape == (24, 2)
        assert (got - logits).abs().max().item() < 1e-4


def test_the_numpy_graph_example_scores_the_collection_outside_graphflow(cli, tmp_path):
    """examples/portable/onnx_graphs_numpy.py, run as written in a fresh Python (numpy and
    onnxruntime only) on the bond-types collection with its edge features, gives the gine
    run's logits."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    folder = examples / "data" / "bond_types"
    text = (examples / "tu_bond_types.toml").read_text().replace(
        '"data/bond_types"', '"' + folder.as_posix() + '"')
    (tmp_path / "p.toml").write_text(text + '\n[[export]]\ntype = "onnx"\n\n[[export]]\n'
                                     'type = "npy"\nwhat = "logits"\n')
    code, out, err = cli("run", tmp_path / "p.toml", "--out-dir", tmp_path / "run", "--quiet")
    assert code == 0, err
    data = TULoader(TUOptions(path=folder, name="BT", features="labels")).load(None)
    work = tmp_path / "work"
    work.mkdir()
    src, dst = data.graph.edges()
    np.savetxt(work / "edges.tsv", torch.stack([src, dst], 1).numpy(), fmt="%d",
               delimiter="\t")
    np.save(work / "features.npy", data.graph.ndata["feat"].float().numpy())
    np.save(work / "graph.npy", data.graphs.node_graph().numpy())
    np.save(work / "edge_features.npy", data.graph.edata["edge_feat"].float().numpy())
    shutil.copy(tmp_path / "run" / "model.onnx", work / "model.onnx")
    script = (examples / "portable" / "onnx_graphs_numpy.py").read_text()
    check = "\nimport sys\nassert 'graphflow' not in sys.modules and 'dgl' not in sys.modules\n"
    proc = subprocess.run([sys.executable, "-I", "-c", script + check], cwd=work,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "24 graph predictions written" in proc.stdout
    expected = np.load(tmp_path / "run" / "logits.npy")
    assert np.abs(np.load(work / "logits.npy") - expected).max() < 1e-4
