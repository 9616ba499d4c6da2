"""node_classification end to end on seeded SBM graphs: full-batch and sampled training,
metrics and artifacts, checkpoints, early stopping, --resume, features, errors."""

import json
import re
from dataclasses import dataclass

import pytest
import torch

from graphflow.components import Loader, Model, Sampler, Task
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData
from graphflow.manager import create_host
from graphflow.options import option
from graphflow.plugin import hookimpl
from graphflow.sampling.block import MiniBatch
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.neighbor import sample_blocks
from graphflow.testing import NODE_SAMPLER as SAMPLER
from graphflow.testing import node_pipeline as pipeline
from graphflow.train import checkpoint as ckpt

def epochs_logged(out_dir):
    """The epoch log's figures, without the wall-clock seconds (which no rerun repeats)."""
    lines = (out_dir / "metrics.jsonl").read_text().splitlines()
    return [{k: v for k, v in json.loads(line).items() if k not in ("train_s", "eval_s")}
            for line in lines]


def test_full_batch_training_learns_and_reports(run_toml, tmp_path):
    result = run_toml(pipeline())
    ctx, m = result.ctx, result.ctx.metrics
    labels = ctx.data.graph.ndata["label"]
    assert m["train_acc"] > 0.9 and m["val_acc"] > 0.8 and m["test_acc"] > 0.8
    assert {"train_f1_macro", "val_f1_macro", "test_f1_macro", "best_epoch"} <= set(m)
    art = ctx.artifacts
    assert art.logits.shape == (300, 3) and art.predictions.dtype == torch.int64
    assert torch.equal(art.predictions, art.logits.argmax(1))
    test = ctx.data.graph.ndata["test_mask"]
    assert (art.predictions[test] == labels[test]).float().mean().item() == m["test_acc"]
    records = epochs_logged(result.out_dir)
    assert [r["epoch"] for r in records] == list(range(1, 31))
    assert {"loss", "train_acc", "val_loss", "val_acc"} <= set(records[0])
    assert records[-1]["loss"] < records[0]["loss"]
    assert result.record["metrics"]["test_acc"] == m["test_acc"]
    # The checkpoint holds the best-validation model, which the artifact model is.
    saved = ckpt.load(result.out_dir / "checkpoint.pt")
    assert saved["epoch"] == m["best_epoch"]
    assert all(torch.equal(v, art.model.state_dict()[k]) for k, v in saved["model"].items())
    assert (result.out_dir / "train_state.pt").exists()


def test_same_seed_same_result_and_another_seed_differs(run_toml, tmp_path):
    a = run_toml(pipeline(seed=1, epochs=5)).ctx.artifacts.logits
    b = run_toml(pipeline(seed=1, epochs=5), out_dir=tmp_path / "b").ctx.artifacts.logits
    c = run_toml(pipeline(seed=2, epochs=5), out_dir=tmp_path / "c").ctx.artifacts.logits
    assert torch.equal(a, b) and not torch.equal(a, c)


def test_minibatch_training_with_the_neighbor_sampler(run_toml):
    result = run_toml(pipeline(model="sage", epochs=8, sample=SAMPLER,
                               train="inference_batch_size = 70"))
    m = result.ctx.metrics
    assert m["train_acc"] > 0.9 and m["test_acc"] > 0.8
    assert result.ctx.artifacts.logits.shape == (300, 3)


def test_restore_best_off_keeps_the_last_model_and_early_stopping_stops(run_toml, tmp_path):
    last = run_toml(pipeline(epochs=12, train="restore_best = false\ncheckpoint = false"))
    assert not (last.out_dir / "checkpoint.pt").exists()
    # lr so small that validation stops improving almost at once: patience ends the run.
    stop = run_toml(pipeline(epochs=200, lr=1e-6, train="patience = 3"),
                    out_dir=tmp_path / "stop")
    records = epochs_logged(stop.out_dir)
    best = int(stop.ctx.metrics["best_epoch"])
    assert records[-1]["epoch"] == best + 3 < 200
    # Resuming a run that stopped early trains no further.
    again = run_toml(pipeline(epochs=200, lr=1e-6, train="patience = 3"),
                     out_dir=tmp_path / "stop", resume=True)
    assert epochs_logged(again.out_dir) == records and again.ctx.metrics == stop.ctx.metrics


class Interrupt:
    """A plugin that presses Ctrl-C after a given epoch (a real KeyboardInterrupt)."""

    def __init__(self, after: int):
        self.after = after

    @hookimpl
    def graphflow_epoch_end(self, ctx, stage, epoch, metrics):
        if epoch == self.after:
            raise KeyboardInterrupt


@pytest.mark.parametrize("sample", ["", SAMPLER], ids=["full-batch", "sampled"])
def test_resume_after_an_interruption_ends_as_an_uninterrupted_run(run_toml, tmp_path, sample):
    text = pipeline(model="sage", epochs=9, sample=sample, train="eval_every = 2")
    whole = run_toml(text, out_dir=tmp_path / "whole")
    out = tmp_path / "cut"
    with pytest.raises(KeyboardInterrupt):
        run_toml(text, out_dir=out, host=create_host(plugins={"ctrl_c": Interrupt(after=5)}))
    # The state was saved at epoch 4 (eval_every = 2): epoch 5 is run again, and logged once.
    resumed = run_toml(text, out_dir=out, resume=True)
    assert resumed.ctx.metrics == whole.ctx.metrics
    assert torch.equal(resumed.ctx.artifacts.logits, whole.ctx.artifacts.logits)
    assert [r["epoch"] for r in epochs_logged(out)] == list(range(1, 10))
    assert epochs_logged(out) == epochs_logged(whole.out_dir)


def test_resume_with_more_epochs_continues_a_shorter_run(run_toml, tmp_path):
    full = run_toml(pipeline(epochs=12), out_dir=tmp_path / "full")
    run_toml(pipeline(epochs=7), out_dir=tmp_path / "short")
    more = run_toml(pipeline(epochs=12), out_dir=tmp_path / "short", resume=True)
    assert more.ctx.metrics == full.ctx.metrics
    assert torch.equal(more.ctx.artifacts.logits, full.ctx.artifacts.logits)


def test_resume_refuses_a_changed_model_or_no_checkpoints(run_toml, tmp_path):
    run_toml(pipeline(epochs=2))
    with pytest.raises(ConfigError, match=r"cannot resume from .*train_state.pt: the pipeline "
                                          r"changed \(model_options\)"):
        run_toml(pipeline(epochs=4).replace("hidden = 16", "hidden = 8"), resume=True)
    with pytest.raises(ConfigError, match=r"the pipeline changed \(monitor\)"):
        run_toml(pipeline(epochs=4, train='monitor = "val_loss"'), resume=True)
    with pytest.raises(ConfigError, match="--resume needs checkpoint = true"):
        run_toml(pipeline(epochs=4, train="checkpoint = false"), resume=True)


@dataclass
class EmbedOptions:
    dim: int = option(4, "Width.")


class LabelEmbeddings(Task):
    """Test stage: embeddings that encode the label (what an embedding stage hands on)."""

    name = "label_embeddings"
    summary = "test"
    Options = EmbedOptions

    def run(self, ctx):
        label = ctx.graph().graph.ndata["label"]
        emb = torch.nn.functional.one_hot(label, self.options.dim).float()
        ctx.artifacts.embeddings = emb + 0.1 * torch.randn(emb.shape, generator=ctx.rng)


class EmbeddingPlugin:
    @hookimpl
    def graphflow_register_tasks(self, register):
        register(LabelEmbeddings)


def test_features_from_an_earlier_embedding_stage(run_toml):
    text = pipeline(epochs=20).replace("[train]\n", "[[train]]\ntype = \"label_embeddings\"\n"
                                       "[[train]]\n")
    host = create_host(plugins={"embed": EmbeddingPlugin()})
    emb = run_toml(text + 'features = "embeddings"', host=host).ctx
    assert emb.metrics["test_acc"] > 0.95  # the embeddings all but give the labels away
    assert emb.artifacts.model.in_dim == 4
    host = create_host(plugins={"embed": EmbeddingPlugin()})
    both = run_toml(text + 'features = "feat+embeddings"', host=host).ctx
    assert both.artifacts.model.in_dim == 12
    with pytest.raises(ConfigError, match=r"no 'embeddings' artifact to use; the stages "
                                          r"before it produced: none"):
        run_toml(pipeline(epochs=1, train='features = "embeddings"'))


class MultiLabelSBM(Loader):
    """Test loader: an SBM whose nodes carry their class and the next one as two labels."""

    name = "multilabel_sbm"
    summary = "test"

    def load(self, ctx):
        from graphflow.compat.dgl import dgl
        from graphflow.io.synthetic import sbm
        from graphflow.graph import NodeIds

        gen = sbm(300, 4, 8, p_in=0.06, p_out=0.006, seed=0, signal=1.0)
        g = dgl.graph((gen.src, gen.dst), num_nodes=300)
        g.ndata["feat"] = gen.feat
        hot = torch.nn.functional.one_hot(gen.label, 4).float()
        g.ndata["label"] = (hot + hot.roll(1, dims=1)).clamp(max=1)  # (N, 4), two labels each
        order = torch.randperm(300, generator=torch.Generator().manual_seed(0))
        for name, part in zip(("train_mask", "val_mask", "test_mask"),
                              (order[:180], order[180:240], order[240:])):
            g.ndata[name] = torch.zeros(300, dtype=torch.bool).index_fill_(0, part, True)
        return GraphData(graph=g, ids=NodeIds.identity(300))


class MultiLabelPlugin:
    @hookimpl
    def graphflow_register_loaders(self, register):
        register(MultiLabelSBM)


def test_multilabel_targets_train_one_vs_rest(run_toml):
    text = """
[load]
type = "multilabel_sbm"
[model]
type = "gcn"
hidden = 16
[train]
type = "node_classification"
epochs = 40
lr = 0.02
"""
    ctx = run_toml(text, host=create_host(plugins={"ml": MultiLabelPlugin()})).ctx
    assert ctx.metrics["test_f1_micro"] > 0.8 and "test_f1_macro" in ctx.metrics
    pred = ctx.artifacts.predictions
    assert pred.shape == (300, 4) and set(pred.unique().tolist()) <= {0.0, 1.0}
    assert torch.equal(pred, (ctx.artifacts.logits > 0).float())


def test_amp_on_the_cpu_warns_and_trains_in_float32(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(pipeline(epochs=2, train="amp = true").replace('seed = 0',
                                                                   'seed = 0\ndevice = "cpu"'))
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 0, err
    assert err.count("amp = true needs CUDA") == 1


@pytest.mark.parametrize("load, message", [
    ('type = "synthetic"\nkind = "powerlaw"\nnodes = 50\nedges = 200\nfeatures = 4',
     r'no labels \(ndata\["label"\]\)'),
    ('type = "synthetic"\nnodes = 60\nfeatures = 0', r'no node features \("feat"\)'),
])
def test_missing_data_is_one_clear_error(cli, tmp_path, load, message):
    text = f"""
[load]
{load}
[model]
type = "gcn"
[train]
type = "node_classification"
epochs = 1
"""
    path = tmp_path / "p.toml"
    path.write_text(text)
    code, out, err = cli("run", path, "--out-dir", tmp_path / "out")
    assert code == 1 and "Traceback" not in err
    assert "[train] node_classification:" in err
    assert re.search(message, err), err


def test_bad_task_options_name_the_key(run_toml):
    with pytest.raises(ConfigError, match=r"train.optimizer: expected \"adam\" \| \"adamw\" \| "
                                          r"\"sgd\", got \"adagrad\""):
        run_toml(pipeline(train='optimizer = "adagrad"'))
    with pytest.raises(ConfigError, match="eval_every must be >= 1"):
        run_toml(pipeline(train="eval_every = 0"))
    with pytest.raises(ConfigError, match=r"\[sample\] fanouts = \[5, 5, 5\] has 3 entries but "
                                          r"\[model\] gcn has 2 message-passing layers"):
        run_toml(pipeline(sample=SAMPLER.replace("[5, 5]", "[5, 5, 5]")))


def test_unlabelled_nodes_inside_a_mask_are_refused(run_toml):
    class Unlabel:
        @hookimpl
        def graphflow_stage_end(self, ctx, stage, seconds):
            if stage.section == "load":
                ctx.data.graph.ndata["label"][ctx.data.graph.ndata["train_mask"].nonzero()[0]] = -1

    with pytest.raises(DataError, match=r"labels of the split nodes must lie in \[0, 3\)"):
        run_toml(pipeline(epochs=1), host=create_host(plugins={"unlabel": Unlabel()}))


def test_monitor_val_loss_keeps_the_lowest_validation_loss(run_toml):
    result = run_toml(pipeline(epochs=15, train='monitor = "val_loss"'))
    records = epochs_logged(result.out_dir)
    losses = [r["val_loss"] for r in records]
    best = int(result.ctx.metrics["best_epoch"])
    assert best == 1 + losses.index(min(losses))
    saved = ckpt.load(result.out_dir / "checkpoint.pt")
    assert saved["monitor"] == "val_loss" and saved["score"] == min(losses)


@dataclass
class PlainSamplerOptions:
    batch_size: int = option(50, "Seeds per batch.")
    broken: bool = option(False, "Return something that is not a MiniBatch.")


class PlainSampler(Sampler):
    """Test sampler with only the base contract, sample(graph, seeds): no iterate()."""

    name = "plain"
    summary = "test"
    Options = PlainSamplerOptions

    def prepare(self, data, device):
        return CSCGraph.from_dgl(data.graph), data.graph.ndata["feat"]

    def sample(self, graph, seeds):
        if self.options.broken:
            return {"seeds": seeds}
        csc, feat = graph
        blocks = sample_blocks(csc, seeds, [4, 4])
        return MiniBatch(seeds=seeds, input_nodes=blocks[0].src_nodes, blocks=blocks,
                         features=feat[blocks[0].src_nodes])


class PlainSamplerPlugin:
    @hookimpl
    def graphflow_register_samplers(self, register):
        register(PlainSampler)


def test_a_sampler_with_only_sample_gets_batched_seeds(run_toml):
    text = pipeline(model="sage", epochs=5, sample='[sample]\ntype = "plain"')
    ctx = run_toml(text, host=create_host(plugins={"plain": PlainSamplerPlugin()})).ctx
    assert ctx.metrics["train_acc"] > 0.8
    with pytest.raises(DataError, match=r'\[sample\] "plain" returned dict, not a MiniBatch '
                                        r"of blocks; this task needs a block sampler"):
        run_toml(text.replace('"plain"', '"plain"\nbroken = true'),
                 host=create_host(plugins={"plain": PlainSamplerPlugin()}))


@pytest.mark.parametrize("override, message", [
    ("train.epochs=-1", "epochs must be >= 0"),
    ("train.lr=0.0", "lr must be > 0"),
    ("train.weight_decay=-1.0", "weight_decay must be >= 0"),
    ("train.patience=-2", r"patience must be >= 0 \(0 = no early stopping\)"),
    ("train.inference_batch_size=-5", "inference_batch_size must be >= 0"),
    ("train.sparse_threshold=1.5", r"sparse_threshold must lie in \[0, 1\]"),
    ('train.monitor="val_f1"', r'train.monitor: expected "val_acc" \| "val_loss"'),
])
def test_out_of_range_options_are_config_errors(run_toml, override, message):
    with pytest.raises(ConfigError, match=message):
        run_toml(pipeline(), overrides=[override])


@pytest.mark.cuda
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")
@pytest.mark.parametrize("sample", ["", SAMPLER], ids=["full-batch", "sampled"])
def test_cuda_training_with_amp(run_toml, sample):
    text = pipeline(model="gat", epochs=20, sample=sample, train="amp = true")
    ctx = run_toml(text.replace("seed = 0", 'seed = 0\ndevice = "cuda"')).ctx
    assert ctx.device.type == "cuda" and ctx.metrics["test_acc"] > 0.8
    assert ctx.artifacts.logits.device.type == "cpu"


class EdgeWeights:
    """Give the loaded graph edge weights (constant or random)."""

    def __init__(self, constant: float | None):
        self.constant = constant

    @hookimpl
    def graphflow_stage_end(self, ctx, stage, seconds):
        if stage.section == "load":
            g = ctx.data.graph
            w = torch.rand(g.num_edges(), generator=torch.Generator().manual_seed(0))
            g.edata["weight"] = w if self.constant is None else torch.full_like(w, self.constant)


@pytest.mark.parametrize("sample", ["", SAMPLER], ids=["full-batch", "sampled"])
def test_edge_weights_reach_every_layer(run_toml, tmp_path, sample):
    text = pipeline(model="sage", epochs=3, sample=sample)
    plain = run_toml(text, out_dir=tmp_path / "plain").ctx.artifacts.logits
    weighted = text + "edge_weights = true"
    ones = run_toml(weighted, out_dir=tmp_path / "ones",
                    host=create_host(plugins={"w": EdgeWeights(1.0)})).ctx.artifacts.logits
    rand = run_toml(weighted, out_dir=tmp_path / "rand",
                    host=create_host(plugins={"w": EdgeWeights(None)})).ctx.artifacts.logits
    assert torch.equal(ones, plain) and not torch.allclose(rand, plain)
    with pytest.raises(DataError, match='edge field "weight" not found'):
        run_toml(weighted, out_dir=tmp_path / "none")


class MLPModel(Model):
    """Test model without layer-wise inference: an MLP that ignores the graph."""

    name = "mlp"
    summary = "test"

    def build(self, in_dim, out_dim):
        class MLP(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.lin = torch.nn.Linear(in_dim, out_dim)

            def forward(self, adj, x):
                return self.lin(x.to_dense() if hasattr(x, "to_dense") else x)

        return MLP()


class MLPPlugin:
    @hookimpl
    def graphflow_register_models(self, register):
        register(MLPModel)


def test_any_model_trains_full_batch_but_batches_need_layerwise_inference(run_toml):
    text = pipeline(model="mlp", epochs=5).replace("hidden = 16\n", "")
    ctx = run_toml(text, host=create_host(plugins={"mlp": MLPPlugin()})).ctx
    assert ctx.metrics["train_acc"] > 0.5
    with pytest.raises(ConfigError, match="model 'mlp' has no layer-wise inference"):
        run_toml(text, overrides=["train.inference_batch_size=10"],
                 host=create_host(plugins={"mlp": MLPPlugin()}))


NODE2VEC_THEN_GCN = """
[pipeline]
seed = 0
[load]
type = "synthetic"
nodes = 400
classes = 4
features = 8
p_in = 0.05
p_out = 0.004
signal = 0.3
[model]
type = "gcn"
hidden = 16
[[train]]
type = "skipgram"
dim = 16
window = 5
epochs = 3                # a 400-node graph: rows repeat in every batch, so a few passes
[train.sample]
type = "node2vec"
walk_length = 20
walks_per_node = 10
[[train]]
type = "node_classification"
features = "{features}"
epochs = 40
"""


@pytest.mark.parametrize("features, in_dim", [("embeddings", 16), ("feat+embeddings", 24)])
def test_a_node2vec_stage_chains_into_a_gcn_stage(run_toml, host, features, in_dim):
    if "skipgram" not in host.registry.names("task"):
        pytest.skip("the skipgram task (plugin embeddings) is not installed")
    ctx = run_toml(NODE2VEC_THEN_GCN.format(features=features)).ctx
    # The GCN stage has no [sample]: it trains full-batch, not on node2vec's walks.
    assert ctx.artifacts.model.in_dim == in_dim
    assert ctx.metrics["test_acc"] > 0.7


class ImbalancedGraph(Loader):
    """Test loader: 600 nodes, 1 in 12 of class 1; each node has 3 neighbours of its class
    and 1 of any; its 8 features carry its class weakly."""

    name = "imbalanced"
    summary = "test"

    def load(self, ctx):
        from graphflow.compat.dgl import dgl
        from graphflow.graph import NodeIds

        gen = torch.Generator().manual_seed(0)
        n = 600
        label = (torch.arange(n) % 12 == 0).long()
        members = [label.eq(c).nonzero().squeeze(1) for c in (0, 1)]
        same = torch.cat([members[c][torch.randint(members[c].numel(), (3,), generator=gen)]
                          for c in label.tolist()])  # 3 of its class per node
        src = torch.cat([same, torch.randint(n, (n,), generator=gen)])
        dst = torch.cat([torch.arange(n).repeat_interleave(3), torch.arange(n)])
        g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=n)
        g.ndata["feat"] = torch.randn(n, 8, generator=gen) + 0.4 * label[:, None]
        g.ndata["label"] = label
        order = torch.randperm(n, generator=gen)
        for name, part in zip(("train_mask", "val_mask", "test_mask"),
                              (order[:300], order[300:400], order[400:])):
            g.ndata[name] = torch.zeros(n, dtype=torch.bool).index_fill_(0, part, True)
        return GraphData(graph=g, ids=NodeIds.identity(n))


class ImbalancedPlugin:
    @hookimpl
    def graphflow_register_loaders(self, register):
        register(ImbalancedGraph)


IMBALANCED = """
[load]
type = "imbalanced"
[model]
type = "gcn"
hidden = 16
[train]
type = "node_classification"
epochs = {epochs}
{train}
"""


def test_balanced_class_weights_find_more_of_the_rare_class(run_toml, tmp_path):
    recall = {}
    for weights in ("none", "balanced"):
        text = IMBALANCED.format(epochs=30, train=f'monitor = "val_loss"\n'
                                                  f'class_weights = "{weights}"')
        ctx = run_toml(text, out_dir=tmp_path / weights,
                       host=create_host(plugins={"imb": ImbalancedPlugin()})).ctx
        label = ctx.data.graph.ndata["label"]
        rest = ~ctx.data.graph.ndata["train_mask"] & (label == 1)  # rare nodes outside training
        recall[weights] = (ctx.artifacts.predictions[rest] == 1).float().mean().item()
    assert recall["balanced"] > recall["none"] + 0.3, recall


def test_monitor_val_f1_macro_keeps_the_best_macro_f1(run_toml):
    result = run_toml(IMBALANCED.format(epochs=12, train='monitor = "val_f1_macro"'),
                      host=create_host(plugins={"imb": ImbalancedPlugin()}))
    records = epochs_logged(result.out_dir)
    scores = [r["val_f1_macro"] for r in records]
    best = scores.index(max(scores)) + 1  # the first epoch of the highest
    assert result.ctx.metrics["best_epoch"] == best
    assert result.ctx.metrics["val_f1_macro"] == pytest.approx(max(scores))
