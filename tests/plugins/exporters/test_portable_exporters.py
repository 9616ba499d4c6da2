"""``[[export]] type = "onnx"`` and ``"torchscript"`` end to end: a short Cora run, then the
exported files, run outside graphflow on the run's own features and edges, give the run's
logits within 1e-4."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "portable"))
from portable_cases import run_exported  # noqa: E402

PIPELINE = """
[pipeline]
name = "cora_portable"
seed = 0
[load]
type = "planetoid"
name = "cora"
root = "{root}"
download = false
[[transform]]
type = "normalize_features"
method = "row"
[model]
type = "gcn"
hidden = 16
[train]
type = "node_classification"
epochs = 3
[[export]]
type = "onnx"
[[export]]
type = "torchscript"
[[export]]
type = "npy"
what = "logits"
[[export]]
type = "pt"
what = "graph"
ids = false
"""


@pytest.fixture(scope="module")
def cora_run(tmp_path_factory):
    from graphflow.cli.main import main
    from graphflow.testing import shared_data

    planetoid_root = shared_data("planetoid")
    folder = tmp_path_factory.mktemp("cora_portable")
    path = folder / "pipeline.toml"
    path.write_text(PIPELINE.format(root=planetoid_root.as_posix()))
    out = folder / "run"
    code = main(["run", str(path), "--out-dir", str(out)])
    assert code == 0
    return out


def test_run_writes_both_files_and_sidecars(cora_run, capsys):
    record = json.loads((cora_run / "run.json").read_text())
    written = {Path(o["path"]).name for o in record["outputs"]}
    assert {"model.onnx", "model.onnx.json", "model.torchscript.pt",
            "model.torchscript.pt.json"} <= written
    side = json.loads((cora_run / "model.onnx.json").read_text())
    assert side["model_info"]["model"] == "gcn" and side["model_info"]["classes"] == 7
    assert side["inputs"][0] == {"name": "x", "dtype": "float32", "shape": ["N", 1433]}
    assert side["weight"] == "the model was trained without edge values: pass ones"
    assert not list(cora_run.glob("*.partial"))


def test_exports_match_the_runs_logits_outside_graphflow(cora_run, tmp_path):
    graph = torch.load(cora_run / "graph.pt", weights_only=True)
    x = graph["ndata"]["feat"].float()
    src, dst = graph["src"].long(), graph["dst"].long()
    inputs = [x, src, dst, torch.ones(src.shape[0])]
    cases = [{"file": cora_run / "model.onnx", "format": "onnx", "form": "full",
              "inputs": inputs},
             {"file": cora_run / "model.torchscript.pt", "format": "torchscript",
              "form": "full", "inputs": inputs}]
    expected = torch.from_numpy(np.load(cora_run / "logits.npy"))
    for got in run_exported(cases, tmp_path):
        assert got.shape == expected.shape == (2708, 7)
        assert (got - expected).abs().max().item() < 1e-4


SAGE_PIPELINE = """
[pipeline]
name = "cora_sage_portable"
seed = 0
[load]
type = "planetoid"
name = "cora"
root = "{root}"
download = false
[sample]
type = "neighbor"
fanouts = [5, 5]
batch_size = 256
[model]
type = "sage"
hidden = 32
[train]
type = "node_classification"
epochs = 2
[[export]]
type = "onnx"
inputs = "block"
path = "run/sage_block.onnx"
[[export]]
type = "torchscript"
path = "run/sage_full.pt"
[[export]]
type = "pt"
what = "model"
[[export]]
type = "npy"
what = "logits"
[[export]]
type = "pt"
what = "graph"
ids = false
"""


def test_sampled_sage_exports_match_outside_graphflow(tmp_path):
    """SAGE trained on sampled blocks: the full-graph TorchScript export gives the run's logits
    on Cora; the block ONNX export gives the trained model's output on blocks that graphflow's
    sampler draws from Cora."""
    from graphflow.cli.main import main
    from graphflow.compat.dgl import dgl
    from graphflow.portable.inputs import block_inputs
    from graphflow.sampling.csc import CSCGraph
    from graphflow.sampling.neighbor import sample_blocks
    from graphflow.sparse import Adjacency
    from graphflow.testing import shared_data
    from graphflow_plugins.models.sage import SAGEModel

    path = tmp_path / "pipeline.toml"
    path.write_text(SAGE_PIPELINE.format(root=shared_data("planetoid").as_posix()))
    out = tmp_path / "run"
    assert main(["run", str(path), "--out-dir", str(out), "--quiet"]) == 0
    saved = torch.load(out / "model.pt", weights_only=True)
    model = SAGEModel(SAGEModel.Options(hidden=32)).build(1433, 7)
    model.load_state_dict(saved["model"])
    model.eval()
    graph = torch.load(out / "graph.pt", weights_only=True)
    x, src, dst = graph["ndata"]["feat"].float(), graph["src"], graph["dst"]
    csc = CSCGraph.from_dgl(dgl.graph((src, dst), num_nodes=graph["num_nodes"]))
    gen = torch.Generator().manual_seed(0)
    blocks = sample_blocks(csc, torch.arange(0, 2708, 13), [5, 5], generator=gen)
    bx = x[blocks[0].src_nodes]
    with torch.no_grad():
        expected_blocks = model([Adjacency.from_block(b) for b in blocks], bx)
    cases = [{"file": out / "sage_block.onnx", "format": "onnx", "form": "block",
              "inputs": list(block_inputs(blocks, bx))},
             {"file": out / "sage_full.pt", "format": "torchscript", "form": "full",
              "inputs": [x, src.long(), dst.long(), torch.ones(src.shape[0])]}]
    got_blocks, got_full = run_exported(cases, tmp_path)
    assert got_blocks.shape == expected_blocks.shape == (len(range(0, 2708, 13)), 7)
    assert (got_blocks - expected_blocks).abs().max().item() < 1e-4
    expected_full = torch.from_numpy(np.load(out / "logits.npy"))
    assert (got_full - expected_full).abs().max().item() < 1e-4


SCRIPT = Path(__file__).resolve().parents[3] / "examples" / "portable" / "onnx_numpy.py"


def test_the_numpy_example_runs_an_export_outside_graphflow(cora_run, tmp_path):
    """examples/portable/onnx_numpy.py (the script docs/inference.md points to), run as
    written in a fresh Python (numpy and onnxruntime only) on files made from the run, gives
    the run's logits."""
    code = SCRIPT.read_text()
    graph = torch.load(cora_run / "graph.pt", weights_only=True)
    edges = torch.stack([graph["src"], graph["dst"]], 1).numpy()
    np.savetxt(tmp_path / "edges.tsv", edges, fmt="%d", delimiter="\t")
    np.save(tmp_path / "features.npy", graph["ndata"]["feat"].numpy())
    shutil.copy(cora_run / "model.onnx", tmp_path / "model.onnx")
    check = ("\nimport sys\nassert 'graphflow' not in sys.modules and 'dgl' not in "
             "sys.modules\n")
    proc = subprocess.run([sys.executable, "-I", "-c", code + check], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    expected = np.load(cora_run / "logits.npy")
    assert np.abs(np.load(tmp_path / "logits.npy") - expected).max() < 1e-4
    assert "predictions written to predictions.npy" in proc.stdout
