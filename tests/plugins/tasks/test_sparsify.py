"""The sparsify task end to end: 2:4 pruning of a trained model, layer selection, fine-tuning
through node_classification's loop, the run record, export and restore, bad input; and the
Cora acceptance figure (GCN, hidden 256, within 1 point of dense after 50 fine-tuning epochs)."""

import json
from pathlib import Path

import pytest
import torch

from graphflow.pruning import two_four
from graphflow.errors import ConfigError, DataError
from graphflow.manager import create_host
from graphflow.plugin import hookimpl

SBM = """
[pipeline]
name = "sp"
seed = 0
[load]
type = "synthetic"
nodes = 200
classes = 3
features = 10
p_in = 0.08
p_out = 0.008
signal = 0.8
[model]
type = "gin"
hidden = 32
dropout = 0.2
[[train]]
type = "node_classification"
epochs = 12
lr = 0.02
checkpoint = false
[[train]]
type = "sparsify"
min_features = 8
{sparsify}
"""


def pipeline(sparsify=""):
    return SBM.format(sparsify=sparsify)


class Snapshot:
    """Keeps the trained model's weights as they were when the first training stage ended."""

    def __init__(self):
        self.state = None

    @hookimpl
    def graphflow_stage_end(self, ctx, stage, seconds):
        if stage.section == "train.0":
            self.state = {k: v.clone() for k, v in ctx.artifacts.model.state_dict().items()}


def groups_of_four(weight):
    full = weight.shape[1] // 4 * 4
    return (weight[:, :full] != 0).reshape(weight.shape[0], -1, 4).sum(-1)


def test_selected_layers_are_2_4_and_the_others_untouched(run_toml):
    snap = Snapshot()
    result = run_toml(pipeline('exclude = ["layers.1.mlp.0"]'),
                      host=create_host(plugins={"snap": snap}))
    model = result.ctx.artifacts.model
    weights = dict(model.named_parameters())
    for name in ("layers.0.mlp.0", "layers.0.mlp.2"):
        w = weights[f"{name}.weight"]
        assert (groups_of_four(w) == 2).all(), name
        assert torch.equal(w, snap.state[f"{name}.weight"] * (w != 0))  # kept weights as trained
    for name in ("layers.1.mlp.0", "layers.1.mlp.2"):  # excluded, and too small (32->3)
        assert torch.equal(weights[f"{name}.weight"], snap.state[f"{name}.weight"])
        assert not hasattr(model.get_submodule(name), "weight_mask")
    report = result.record["reports"]["train.1"]
    rows = {row["name"]: row for row in report["layers"]}
    assert rows["layers.0.mlp.0"]["tail"] == 2  # 10 input features: 8 in groups, 2 left dense
    assert "input width 10 is not a multiple of 4" in rows["layers.0.mlp.0"]["reason"]
    assert rows["layers.0.mlp.2"]["pruned_fraction"] == 0.5
    assert rows["layers.1.mlp.0"] == {**rows["layers.1.mlp.0"], "status": "skipped",
                                      "reason": "matched by exclude"}
    assert rows["layers.1.mlp.2"]["reason"].startswith("fewer than min_features = 8")
    assert set(report["accuracy"]) == {"dense", "pruned"}
    assert report["inference"]["dense_ms"] > 0 and report["inference"]["sparse_ms"] > 0
    if two_four.sparse_support(result.ctx.device) is None:  # CUDA sm80+ (the device run)
        assert rows["layers.0.mlp.2"]["status"] == "converted"
        assert rows["layers.0.mlp.0"]["status"] == "dense"  # 10 inputs: not a multiple of 4
        assert report["inference"]["converted_prediction_agreement"] > 0.95
        assert report["inference"]["dense_float16_ms"] > 0
    else:
        assert report["speedup_expected"] is False
        assert "no speed-up is expected" in report["inference"]["note"]
        assert all(row["status"] in ("dense", "skipped") for row in report["layers"])
    m = result.record["metrics"]
    assert m["sparsity_pruned_fraction"] == pytest.approx(report["pruned_fraction"])
    assert m["test_acc"] == m["sparsity_pruned_test_acc"]


def test_fine_tuning_keeps_the_pattern_and_the_model_exports_and_restores(run_toml, tmp_path):
    text = pipeline("finetune_epochs = 6\n[[export]]\ntype = \"pt\"\nwhat = \"model\"")
    result = run_toml(text)
    model = result.ctx.artifacts.model
    masked = dict(two_four.masked_layers(model))
    assert set(masked) == {"layers.0.mlp.0", "layers.0.mlp.2", "layers.1.mlp.0"}
    for name, module in masked.items():
        assert (module.weight[~module.weight_mask] == 0).all(), name
        assert (groups_of_four(module.weight) <= 2).all(), name
    assert set(result.record["reports"]["train.1"]["accuracy"]) == {"dense", "pruned",
                                                                   "finetuned"}
    epochs = [json.loads(line) for line in (result.out_dir / "metrics.jsonl").read_text()
              .splitlines()]
    assert [e["epoch"] for e in epochs if e["stage"] == "train.1"] == list(range(1, 7))
    saved = torch.load(result.out_dir / "model.pt", weights_only=True)
    assert saved["what"] == "model" and sorted(saved["masks"]) == sorted(masked)
    assert saved["model_info"]["model"] == "gin" and saved["model_info"]["in_dim"] == 10

    # A later run starts from the export: epochs = 0 only predicts, with the same figures.
    restore = SBM.split("[[train]]")[0] + (
        f'[train]\ntype = "node_classification"\nepochs = 0\n'
        f'restore_model = "{result.out_dir / "model.pt"}"\n')
    again = run_toml(restore, out_dir=tmp_path / "again")
    assert again.record["metrics"]["test_acc"] == result.record["metrics"]["test_acc"]
    assert torch.equal(again.ctx.artifacts.predictions, result.ctx.artifacts.predictions)
    assert set(dict(two_four.masked_layers(again.ctx.artifacts.model))) == set(masked)
    with pytest.raises(ConfigError, match=r"restore_model: .*model\.pt was trained with "
                                          r"another setup: model_options"):
        run_toml(restore.replace("hidden = 32", "hidden = 16"), out_dir=tmp_path / "bad")


def test_sparsify_without_a_trained_model_says_where_to_put_it(run_toml):
    text = SBM.split("[[train]]")[0] + '[[train]]\ntype = "sparsify"\n'
    with pytest.raises(ConfigError, match=r'\[train\.0\] sparsify needs a trained model from '
                                          r'an earlier stage; put it after one that trains it '
                                          r'\(e\.g\. \[\[train\]\] type = "node_classification"'
                                          r'\); the stages before it: none'):
        run_toml(text)


def test_a_pattern_other_than_2_4_is_refused(run_toml):
    with pytest.raises(ConfigError, match=r'train\.1.*pattern must be "2:4" \(2 of every 4 '
                                          r'consecutive input weights kept.*got "4:8"'):
        run_toml(pipeline('pattern = "4:8"'))


def test_include_matching_nothing_lists_the_linear_layers(run_toml):
    with pytest.raises(ConfigError, match=r'\[train\.1\] sparsify: include pattern "mlp\.\*" '
                                          r"matches no linear layer of the model; its linear "
                                          r"layers: layers\.0\.mlp\.0 \(10->32\), "
                                          r"layers\.0\.mlp\.2 \(32->32\), layers\.1\.mlp\.0 "
                                          r"\(32->32\), layers\.1\.mlp\.2 \(32->3\); fix include"):
        run_toml(pipeline('include = ["mlp.*"]'))


@pytest.mark.slow
def test_cora_gcn_256_keeps_test_accuracy_within_one_point(run_toml, planetoid_root):
    text = f"""
[pipeline]
name = "cora_gcn_2_4"
seed = 0
[load]
type = "planetoid"
name = "cora"
root = "{planetoid_root}"
download = false
[[transform]]
type = "normalize_features"
method = "row"
[model]
type = "gcn"
hidden = 256
[[train]]
type = "node_classification"
epochs = 60
lr = 0.01
checkpoint = false
[[train]]
type = "sparsify"
finetune_epochs = 50
timing_repeats = 3
"""
    result = run_toml(text)
    acc = result.record["reports"]["train.1"]["accuracy"]
    print(f"Cora GCN-256 2:4 test_acc {acc}")
    assert acc["dense"]["test_acc"] > 0.79
    assert acc["finetuned"]["test_acc"] >= acc["dense"]["test_acc"] - 0.01
    layers = {row["name"]: row for row in result.record["reports"]["train.1"]["layers"]}
    assert layers["layers.0"]["pruned_fraction"] == pytest.approx(0.5, abs=1e-3)
    assert layers["layers.1"]["status"] == "skipped"  # 256 -> 7 classes: below min_features


def test_the_shipped_example_runs_shortened(cli, tmp_path, planetoid_root):
    example = Path(__file__).resolve().parents[3] / "examples" / "cora_gin_sparsify.toml"
    code, out, err = cli("run", example, "--out-dir", tmp_path,
                         "--set", f"load.root={planetoid_root}", "--set", "model.hidden=32",
                         "--set", "train.0.epochs=3", "--set", "train.1.finetune_epochs=2",
                         "--set", "train.1.timing_repeats=1")
    assert code == 0, err
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["reports"]["train.1"]["pruned_fraction"] > 0.49
    assert (tmp_path / "model.pt").exists() and "2:4:" in err


def test_restore_model_names_a_missing_file_or_one_that_holds_no_model(run_toml, tmp_path):
    base = SBM.split("[[train]]")[0] + '[train]\ntype = "node_classification"\nepochs = 0\n'
    missing = tmp_path / "nope.pt"
    with pytest.raises(DataError, match=rf'restore_model: {missing} not found; write one with '
                                        r'\[\[export\]\] type = "pt", what = "model"'):
        run_toml(base + f'restore_model = "{missing}"\n')
    other = tmp_path / "emb.pt"
    torch.save({"what": "embeddings", "embeddings": torch.zeros(2, 2)}, other)
    with pytest.raises(DataError, match=rf"restore_model: {other} holds 'embeddings', not a "
                                        r"model"):
        run_toml(base + f'restore_model = "{other}"\n')


def test_nothing_left_to_prune_lists_why_each_layer_was_skipped(run_toml):
    with pytest.raises(ConfigError, match=r"\[train\.1\] sparsify: no layer left to prune "
                                          r"\(layers\.0\.mlp\.0 \(10->32\): fewer than "
                                          r"min_features = 64 .*; lower min_features"):
        run_toml(pipeline().replace("min_features = 8", "min_features = 64"))
