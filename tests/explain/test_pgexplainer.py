"""PGExplainer: one trained mask generator explains every target in one pass."""

import pytest
import torch

from graphflow.errors import DataError
from graphflow.explain.metrics import roc_auc
from graphflow.explain.pgexplainer import MaskGenerator, pg_explain, pg_explainer
from graphflow.explain.subgraph import computation_graphs
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency


def _planted(targets=30, motif=2, base=3):
    """Each target reads ``motif`` in-edges from motif nodes (feature 1: they make its class
    0) and ``base`` from base nodes (feature -0.5: they pull it towards class 1); the
    model's logits are ``(3 s - 1, 0)`` with ``s`` the sum of the in-neighbours' feature 0."""
    gen = torch.Generator().manual_seed(0)
    n_motif, n_base = 10, 20
    n = targets + n_motif + n_base
    t = torch.arange(targets)
    ms = targets + torch.randint(n_motif, (targets, motif), generator=gen)
    bs = targets + n_motif + torch.randint(n_base, (targets, base), generator=gen)
    src = torch.cat([ms.reshape(-1), bs.reshape(-1)])
    dst = torch.cat([t.repeat_interleave(motif), t.repeat_interleave(base)])
    truth = torch.arange(src.numel()) < targets * motif  # by edge id
    x = torch.zeros(n, 2)
    x[targets:targets + n_motif, 0] = 1.0
    x[targets + n_motif:, 0] = -0.5
    x[:, 1] = torch.rand(n, generator=gen)  # a distractor
    conv = GCNConv(2, 2, norm="none")
    with torch.no_grad():
        conv.weight.copy_(torch.tensor([[3.0, 0.0], [0.0, 0.0]]))
        conv.bias.copy_(torch.tensor([-1.0, 0.0]))
    model = GNNStack([conv], [2, 2]).eval()
    for p in model.parameters():
        p.requires_grad_(False)
    return model, Adjacency.from_edges(src, dst, n, n), x, truth, t


@pytest.fixture
def one_thread():
    """Tiny tensors: one intra-op thread (no pool wake-ups on a shared 2-core runner)."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def test_pgexplainer_ranks_the_planted_motif_edges_first(one_thread):
    model, adj, x, truth, targets = _planted()
    assert (model(adj, x)[targets].argmax(-1) == 0).all()
    exp = pg_explainer(model, adj, x, targets, hops=1, embeddings=x)  # PyG's defaults
    assert exp.method == "pgexplainer" and exp.feature_mask is None
    assert torch.equal(exp.targets, targets) and (exp.target_class == 0).all()
    # every in-edge of every target, once per target, listed with its target
    assert exp.edge_mask.shape == exp.edge_ids.shape == exp.edge_target.shape == (150,)
    assert sorted(exp.edge_ids.tolist()) == list(range(150))
    assert torch.equal(adj.row_index[torch.argsort(adj.eids)][exp.edge_ids],
                       targets[exp.edge_target])
    assert ((exp.edge_mask >= 0) & (exp.edge_mask <= 1)).all()
    assert roc_auc(exp.edge_mask, truth[exp.edge_ids]) > 0.95


def test_the_trained_generator_explains_new_targets_in_one_pass():
    model, adj, x, truth, targets = _planted()
    exp = pg_explainer(model, adj, x, targets[:3], hops=1, embeddings=x, epochs=2)
    net = MaskGenerator(2, node_level=True)
    later = pg_explain(net, model, adj, x, x, targets[3:9], hops=1, batch=4)
    assert later.targets.tolist() == list(range(3, 9)) and later.edge_mask.numel() == 30
    assert exp.edge_mask.numel() == 15
    # the mask of an edge is the MLP of (source, destination, target) embeddings, so the
    # same edge of the same target gets the same mask however the targets are batched
    cg = computation_graphs(adj, targets[3:9], 1)
    with torch.no_grad():
        alone = net(x, cg).sigmoid()
    assert torch.allclose(later.edge_mask, alone)


def test_pgexplainer_is_repeatable():
    model, adj, x, truth, targets = _planted(targets=6)
    a = pg_explainer(model, adj, x, targets, hops=1, embeddings=x, epochs=3, seed=4)
    b = pg_explainer(model, adj, x, targets, hops=1, embeddings=x, epochs=3, seed=4)
    assert torch.equal(a.edge_mask, b.edge_mask)
    with pytest.raises(DataError, match=r"embeddings of shape \(1, 36\) for a graph of 36 "
                                        r"nodes; give one row per node"):
        pg_explainer(model, adj, x, targets, hops=1, embeddings=x[:, :1].T, epochs=1)


def test_the_plugin_reads_the_embeddings_and_refuses_a_model_without_them(host):
    from graphflow.errors import ConfigError
    from graphflow.explain import GraphInputs

    model, adj, x, truth, targets = _planted(targets=8)
    info = host.registry.get("explainer", "pgexplainer")
    explainer = info.cls(info.cls.Options(epochs=1, train=3))
    exp = explainer.explain(model, GraphInputs(adj=adj, x=x, hops=1, embeddings=x), targets)
    assert exp.targets.tolist() == targets.tolist() and exp.edge_mask.numel() == 8 * 5
    with pytest.raises(ConfigError, match="pgexplainer reads the model's hidden node "
                                          "embeddings.*use gnnexplainer"):
        explainer.explain(model, GraphInputs(adj=adj, x=x, hops=1), targets)
    with pytest.raises(ValueError, match="train = -1"):
        info.cls.Options(train=-1)
