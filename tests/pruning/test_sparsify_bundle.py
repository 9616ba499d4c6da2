"""A sparsify stage writes the pruned model's bundle, and ``graphflow predict`` / ``serve``
use it (the last stage's) unless ``--stage`` names another; sparsify on link and graph
models; stages it cannot follow are refused when the pipeline is read."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest
import torch

from graphflow.bundle.load import load_bundle
from graphflow.errors import ConfigError
from graphflow.pruning import two_four

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

NODES = """
[pipeline]
name = "sp"
seed = 0
device = "cpu"
[load]
type = "synthetic"
nodes = 120
classes = 3
features = 12
p_in = 0.08
p_out = 0.008
[model]
type = "gin"
hidden = 16
[[train]]
type = "node_classification"
epochs = 5
lr = 0.02
[[train]]
type = "sparsify"
min_features = 8
finetune_epochs = 2
timing_repeats = 1
"""


def groups_of_four(weight: torch.Tensor) -> torch.Tensor:
    full = weight.shape[1] // 4 * 4
    return (weight[:, :full] != 0).reshape(weight.shape[0], -1, 4).sum(-1)


def predicted_logits(cli, run_dir: Path, data: Path, out: Path, *stage: str) -> torch.Tensor:
    code, _, err = cli("predict", run_dir, "--data", data, "--out", out, "--what", "logits",
                       "--quiet", *stage)
    assert code == 0, err
    column = pq.read_table(out / "logits.parquet").column("logits").combine_chunks()
    return torch.tensor(column.flatten().to_numpy()).reshape(len(column), -1)  # (N, C)


def test_predict_uses_the_pruned_model_of_the_last_stage(run_toml, cli, tmp_path):
    result = run_toml(NODES)
    out = result.out_dir
    assert (out / "model-train.0" / "bundle.json").is_file()
    assert (out / "model-train.1" / "bundle.json").is_file()  # the pruned model's own bundle
    pruned, dense = result.ctx.artifacts.model, None
    bundle = load_bundle(out)  # the default: the last stage's
    assert bundle.path.name == "model-train.1"
    masked = dict(two_four.masked_layers(bundle.model))
    assert masked and set(masked) == set(dict(two_four.masked_layers(pruned)))
    for name, module in masked.items():
        assert (groups_of_four(module.weight) <= 2).all(), name
        assert torch.equal(module.weight, pruned.get_submodule(name).weight)
    dense = load_bundle(out, stage="train.0").model
    assert not two_four.masked_layers(dense)

    data = tmp_path / "pipeline.toml"  # the pipeline run_toml ran: its data sections
    logits = predicted_logits(cli, out, data, tmp_path / "p-last")
    assert torch.allclose(logits, result.ctx.artifacts.logits, atol=1e-5)
    dense_logits = predicted_logits(cli, out, data, tmp_path / "p-dense", "--stage", "train.0")
    assert not torch.allclose(dense_logits, logits, atol=1e-3)
    with torch.no_grad():  # the dense bundle is the dense model, not the pruned one
        assert any(not torch.equal(a, b) for a, b in zip(dense.state_dict().values(),
                                                         bundle.model.state_dict().values())
                   if a.shape == b.shape)

    code, _, err = cli("predict", out, "--data", data, "--stage", "train.7")
    assert code != 0
    assert "no model bundle of stage 'train.7'" in err and "train.0, train.1" in err


def test_serve_loads_the_last_stage_unless_told(run_toml):
    pytest.importorskip("starlette")
    from graphflow.serve.service import start_service

    result = run_toml(NODES.replace("finetune_epochs = 2", "finetune_epochs = 0"))
    last = start_service(result.out_dir)
    assert last.bundle.path.name == "model-train.1"
    assert two_four.masked_layers(last.bundle.model)
    first = start_service(result.out_dir, stage="train.0")
    assert first.bundle.path.name == "model-train.0"


LINKS = f"""
[pipeline]
name = "sp_links"
seed = 0
device = "cpu"
[load]
type = "edgelist"
path = "{(EXAMPLES / 'data' / 'papers.tsv').as_posix()}"
delimiter = "tab"
directed = false
nodes = "{(EXAMPLES / 'data' / 'papers_nodes.parquet').as_posix()}"
[[transform]]
type = "link_split"
val = 0.1
test = 0.1
[model]
type = "sage"
hidden = 16
[[train]]
type = "link_prediction"
epochs = 3
embedding_dim = 16
decoder = "mlp"
[[train]]
type = "sparsify"
min_features = 8
finetune_epochs = 2
timing_repeats = 1
"""


def test_sparsify_prunes_and_fine_tunes_a_link_model(run_toml):
    result = run_toml(LINKS)
    report = result.record["reports"]["train.1"]
    assert {"dense", "pruned", "finetuned"} <= set(report["accuracy"])
    assert "test_auc" in report["accuracy"]["finetuned"]
    model = result.ctx.artifacts.model
    masked = dict(two_four.masked_layers(model))
    assert masked, report["layers"]
    for name, module in masked.items():
        assert (module.weight[~module.weight_mask] == 0).all(), name  # held through the loop
    bundle = load_bundle(result.out_dir)
    assert bundle.kind == "link" and bundle.path.name == "model-train.1"
    assert set(dict(two_four.masked_layers(bundle.model))) == set(masked)


GRAPHS = f"""
[pipeline]
seed = 0
device = "cpu"
[load]
type = "tu"
path = "{(EXAMPLES / 'data' / 'rings_paths').as_posix()}"
name = "RP"
features = "degree"
[model]
type = "gin"
layers = 2
hidden = 16
[[train]]
type = "graph_classification"
epochs = 3
batch_size = 4
hidden = 16
{{extra}}
[[train]]
type = "sparsify"
min_features = 8
finetune_epochs = 2
timing_repeats = 1
"""


def test_sparsify_prunes_and_fine_tunes_a_graph_model(run_toml):
    result = run_toml(GRAPHS.format(extra=""))
    report = result.record["reports"]["train.1"]
    assert "test_acc" in report["accuracy"]["finetuned"]
    masked = dict(two_four.masked_layers(result.ctx.artifacts.model))
    assert masked
    for name, module in masked.items():
        assert (module.weight[~module.weight_mask] == 0).all(), name
    bundle = load_bundle(result.out_dir)
    assert bundle.kind == "graph" and bundle.path.name == "model-train.1"
    assert set(dict(two_four.masked_layers(bundle.model))) == set(masked)


def test_sparsify_after_cross_validation_is_refused_when_read(run_toml):
    with pytest.raises(ConfigError, match=r"\[train\.1\] sparsify: \[train\.0\] "
                                          r"graph_classification cross-validates \(folds\), so "
                                          r"its model is only the last fold's; train one split"):
        run_toml(GRAPHS.format(extra="folds = 2"))


def test_sparsify_after_a_stage_without_a_model_is_refused_when_read(run_toml):
    text = NODES.replace('[[train]]\ntype = "node_classification"\nepochs = 5\nlr = 0.02\n',
                         '[sample]\ntype = "deepwalk"\nwalk_length = 5\n'
                         '[[train]]\ntype = "skipgram"\ndim = 8\n')
    with pytest.raises(ConfigError, match=r"\[train\.1\] sparsify: the stage before it, "
                                          r"\[train\.0\] skipgram, trains no \[model\] that "
                                          r"sparsify can fine-tune"):
        run_toml(text)


def test_sparsify_after_typed_link_prediction_is_refused_when_read(tmp_path, host):
    from graphflow.config import load_config

    text = NODES.replace('type = "gin"\nhidden = 16', 'type = "rgcn"').replace(
        'type = "node_classification"\nepochs = 5', 'type = "link_prediction"\nepochs = 5')
    (tmp_path / "p.toml").write_text(text)
    with pytest.raises(ConfigError, match=r"\[train\.1\] sparsify: \[train\.0\] link_prediction "
                                          r"trains a typed rgcn model, whose link scores "
                                          r"sparsify cannot time yet"):
        load_config(tmp_path / "p.toml", host.registry)
