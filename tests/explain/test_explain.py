import pytest
import torch

from graphflow.explain.explanation import Explanation
from graphflow.explain.gnnexplainer import gnn_explainer
from graphflow.explain.metrics import characterization_score, fidelity, roc_auc
from graphflow.explain.subgraph import computation_graphs
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.sparse import Adjacency


def _one_layer():
    """logits = (5 s, -5 s) with s the sum of the in-neighbours' one feature."""
    conv = GCNConv(1, 2, norm="none", bias=False)
    with torch.no_grad():
        conv.weight.copy_(torch.tensor([[5.0, -5.0]]))
    return GNNStack([conv], [1, 2]).eval()


# node 0 reads 1 (feature 2), 2 (feature -1), 3 (feature 0); node 4 reads 0
SRC, DST = torch.tensor([1, 2, 3, 0]), torch.tensor([0, 0, 0, 4])
X = torch.tensor([[0.0], [2.0], [-1.0], [0.0], [0.0]])


def test_computation_graphs_give_the_full_graph_outputs():
    gen = torch.Generator().manual_seed(0)
    src, dst = torch.randint(40, (200,), generator=gen), torch.randint(40, (200,), generator=gen)
    adj = Adjacency.from_edges(src, dst, 40, 40)
    x = torch.randn(40, 3, generator=gen)
    torch.manual_seed(0)
    for loops in (True, False):
        model = GNNStack([GCNConv(3, 8), GCNConv(8, 4)], [3, 8, 4], self_loops=loops).eval()
        targets = torch.tensor([0, 7, 7, 39])
        cg = computation_graphs(adj, targets, 2)
        out = model(cg.adjacency(torch.ones(cg.num_edges)), x[cg.node])[cg.target_node]
        assert torch.allclose(out, model(adj, x)[targets], atol=1e-6)
        # each copy holds every in-edge of the target and of its in-neighbours
        first = adj.eids[adj.indptr[0]:adj.indptr[1]]
        assert set(first.tolist()) <= set(cg.edge_ids[cg.edge_target == 0].tolist())


def test_gnnexplainer_finds_the_one_edge_that_decides():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    exp = gnn_explainer(_one_layer(), adj, X, torch.tensor([0]), hops=1, epochs=300)
    assert exp.target_class.tolist() == [0]
    mask = dict(zip(exp.edge_ids.tolist(), exp.edge_mask.tolist()))
    assert set(mask) == {0, 1, 2}  # the in-edges of node 0 only
    assert mask[0] > 0.5 and mask[0] > mask[1] + 0.2 and mask[0] > mask[2] + 0.2
    assert exp.feature_mask.shape == (1, 1)


def test_gnnexplainer_batches_exactly():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    both = gnn_explainer(_one_layer(), adj, X, torch.tensor([0, 4]), hops=1, epochs=50,
                         feature_mask=False)
    one = gnn_explainer(_one_layer(), adj, X, torch.tensor([0]), hops=1, epochs=50,
                        feature_mask=False)
    first = both.edge_target == 0
    assert torch.equal(both.edge_ids[first], one.edge_ids)
    # the same initial draw for target 0's edges (they come first), the same trajectory
    assert torch.allclose(both.edge_mask[first], one.edge_mask, atol=1e-6)


def _hand_explanation(edge_mask):
    return Explanation(targets=torch.tensor([0]), target_class=torch.tensor([0]),
                       edge_target=torch.zeros(3, dtype=torch.int64),
                       edge_ids=torch.tensor([0, 1, 2]), edge_mask=torch.tensor(edge_mask),
                       feature_mask=None, method="hand")


def test_fidelity_on_a_hand_worked_example():
    adj = Adjacency.from_edges(SRC, DST, 5, 5)
    model = _one_layer()
    # full graph: s = 2 - 1 + 0 = 1 -> class 0
    assert model(adj, X)[0].argmax().item() == 0
    # explanation = edge 1->0: kept alone s = 2 (class 0, fid- = 0); removed s = -1 (class 1,
    # fid+ = 1)
    assert fidelity(model, adj, X, _hand_explanation([1.0, 0.0, 0.0]), 1) == (1.0, 0.0)
    # explanation = edge 2->0: kept alone s = -1 (class 1, fid- = 1); removed s = 2 (fid+ = 0)
    assert fidelity(model, adj, X, _hand_explanation([0.0, 1.0, 0.0]), 1) == (0.0, 1.0)
    # soft masks stay soft (as in PyG): 0.5 * 2 + 0.5 * -1 = 0.5 > 0 kept; complement too
    assert fidelity(model, adj, X, _hand_explanation([0.5, 0.5, 0.5]), 1) == (0.0, 0.0)


def test_characterization_score_is_the_weighted_harmonic_mean():
    assert characterization_score(1.0, 0.0) == 1.0
    assert characterization_score(0.5, 0.5) == pytest.approx(0.5)
    assert characterization_score(0.8, 0.2) == pytest.approx(0.8)
    assert characterization_score(0.6, 0.1, 0.25, 0.75) == pytest.approx(
        1 / (0.25 / 0.6 + 0.75 / 0.9))
    assert characterization_score(0.0, 0.3) == 0.0
    with pytest.raises(ValueError):
        characterization_score(0.5, 0.5, 0.5, 0.6)


def test_roc_auc_matches_scikit_learn():
    metrics = pytest.importorskip("sklearn.metrics")
    gen = torch.Generator().manual_seed(1)
    score = torch.randint(5, (300,), generator=gen).float()  # many ties
    truth = torch.rand(300, generator=gen) < 0.3
    assert roc_auc(score, truth) == pytest.approx(metrics.roc_auc_score(truth, score))


def test_top_k_per_target():
    exp = Explanation(targets=torch.tensor([5, 6]), target_class=torch.tensor([0, 0]),
                      edge_target=torch.tensor([0, 1, 0, 1, 0]),
                      edge_ids=torch.arange(5), edge_mask=torch.tensor([.1, .9, .8, .2, .5]),
                      feature_mask=None, method="hand")
    assert exp.top_k(1).tolist() == [False, True, True, False, False]
    assert exp.top_k(2).tolist() == [False, True, True, True, True]
