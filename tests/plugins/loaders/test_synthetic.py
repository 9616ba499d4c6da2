import pytest
import torch

from graphflow.errors import ConfigError

SBM = """
[pipeline]
name = "syn"
seed = {seed}
[load]
type = "synthetic"
nodes = 400
classes = 4
features = 8
p_in = 0.05
p_out = 0.002
{extra}
"""


def test_sbm_is_ready_for_node_classification(run_toml):
    data = run_toml(SBM.format(seed=1, extra="")).ctx.data
    g = data.graph
    assert data.num_nodes == 400 and data.num_classes == 4
    assert g.ndata["feat"].shape == (400, 8) and g.ndata["feat"].dtype == torch.float32
    assert g.ndata["label"].dtype == torch.int64
    train, val, test = (g.ndata[m] for m in ("train_mask", "val_mask", "test_mask"))
    assert [int(m.sum()) for m in (train, val, test)] == [240, 80, 80]
    assert torch.bincount(g.ndata["label"][train]).tolist() == [60, 60, 60, 60]
    assert not (train & val).any() and not (val & test).any()
    assert data.ids.is_identity


def test_seed_defaults_to_the_pipeline_seed_and_the_option_wins(run_toml):
    a = run_toml(SBM.format(seed=1, extra="")).ctx.data.graph
    b = run_toml(SBM.format(seed=1, extra="")).ctx.data.graph
    c = run_toml(SBM.format(seed=2, extra="")).ctx.data.graph
    d = run_toml(SBM.format(seed=2, extra="seed = 1")).ctx.data.graph
    assert torch.equal(a.edges()[0], b.edges()[0])
    assert torch.equal(a.ndata["train_mask"], b.ndata["train_mask"])
    assert not torch.equal(a.ndata["feat"], c.ndata["feat"])
    assert torch.equal(a.ndata["feat"], d.ndata["feat"])


def test_powerlaw_graph(run_toml):
    text = """
[load]
type = "synthetic"
kind = "powerlaw"
nodes = 2000
edges = 30000
features = 4
"""
    data = run_toml(text).ctx.data
    assert data.num_nodes == 2000 and data.num_edges == 30000
    assert data.graph.ndata["feat"].shape == (2000, 4)
    assert "label" not in data.graph.ndata
    indeg = data.graph.in_degrees().float()
    assert indeg.max() > 10 * indeg.mean()


@pytest.mark.parametrize(("override", "message"), [
    ("load.p_in=1.5", r"\[load\] synthetic: p_in = 1.5: a probability must lie in \[0, 1\]"),
    ("load.classes=0", r"classes = 0: must be >= 1"),
    ("load.train=0.9", r"fractions train \(0.9\) \+ val \(0.2\) \+ test \(0.2\) add up to "
                       r"more than 1"),
    ("load.train=500", r"\[load\] synthetic: the train/val/test split: the split asks for 500 "
                       r"nodes but only 400"),
])
def test_bad_options_are_named(run_toml, override, message):
    with pytest.raises(ConfigError, match=message):
        run_toml(SBM.format(seed=0, extra=""), overrides=[override])


@pytest.mark.parametrize("kind, nodes, classes", [("ba_shapes", 700, 4), ("tree_cycles", 991, 2)])
def test_explanation_benchmarks_carry_their_motif_edges(run_toml, kind, nodes, classes):
    toml = f"""
[pipeline]
name = "motifs"
seed = 0
[load]
type = "synthetic"
kind = "{kind}"
features = 10
train = 0.8
val = 0.1
test = 0.1
"""
    data = run_toml(toml).ctx.data
    g = data.graph
    assert data.num_nodes == nodes and data.num_classes == classes
    assert g.edata["motif"].dtype == torch.bool and int(g.edata["motif"].sum()) > 0
    assert g.ndata["feat"].shape == (nodes, 10)
    assert int(g.ndata["train_mask"].sum()) == pytest.approx(0.8 * nodes, abs=classes)
