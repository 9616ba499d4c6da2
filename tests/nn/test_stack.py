"""GNNStack: full graph vs blocks, layer-wise inference, self-loops, row blocks, errors."""

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.io.synthetic import sbm
from graphflow.nn.gcn import GCNConv
from graphflow.nn.gin import GINConv
from graphflow.nn.sage import SAGEConv
from graphflow.nn.stack import GNNStack, add_self_loops, row_block
from graphflow.sampling.csc import CSCGraph
from graphflow.sampling.neighbor import sample_blocks
from graphflow.sparse import Adjacency, SparseFeatures


@pytest.fixture(scope="module")
def graph():
    g = sbm(120, 3, 12, p_in=0.1, p_out=0.02, seed=3)
    adj = Adjacency.from_edges(g.src, g.dst, 120, 120)
    return g, adj


def gcn_stack(residual=False, norm="none", self_loops=True):
    dims = [12, 16, 16, 3]
    return GNNStack([GCNConv(dims[i], dims[i + 1]) for i in range(3)], dims, residual=residual,
                    norm=norm, self_loops=self_loops)


@pytest.mark.parametrize("norm", ["none", "batch", "layer"])
@pytest.mark.parametrize("residual", [False, True])
def test_layerwise_inference_equals_full_forward(graph, norm, residual):
    g, adj = graph
    torch.manual_seed(0)
    stack = gcn_stack(residual, norm)
    stack.train()
    stack(adj, g.feat).sum().backward()  # batch norm running statistics move away from init
    stack.eval()
    full = stack(adj, g.feat)  # (N, 3)
    layerwise = stack.inference(adj, g.feat, batch_size=17)
    assert torch.allclose(full, layerwise, atol=1e-5)
    assert stack.training is False


def test_layerwise_inference_on_sparse_features_and_restores_train_mode(graph):
    g, adj = graph
    x = torch.where(g.feat > 1.0, g.feat, torch.zeros(()))  # ~16% nonzero
    sx = SparseFeatures.from_dense(x)
    torch.manual_seed(0)
    stack = gcn_stack(residual=True)
    stack.train()
    out = stack.inference(adj, sx, batch_size=50)
    assert stack.training is True
    stack.eval()
    assert torch.allclose(out, stack(adj, x), atol=1e-5)
    assert torch.allclose(stack(adj, sx), stack(adj, x), atol=1e-5)


def test_blocks_with_every_neighbor_equal_the_full_graph(graph):
    g, adj = graph
    torch.manual_seed(0)
    dims = [12, 16, 3]
    stack = GNNStack([SAGEConv(12, 16), GINConv(torch.nn.Linear(16, 3))], dims).eval()
    csc = CSCGraph.from_dgl(dgl.graph((g.src, g.dst), num_nodes=120))
    seeds = torch.tensor([5, 0, 77, 31])
    blocks = sample_blocks(csc, seeds, [-1, -1])
    adjs = [Adjacency.from_block(b) for b in blocks]
    out = stack(adjs, g.feat[blocks[0].src_nodes])  # (4, 3)
    assert torch.allclose(out, stack(adj, g.feat)[seeds], atol=1e-5)
    with pytest.raises(ConfigError, match="the model has 2 layers but got 1 blocks"):
        stack(adjs[:1], g.feat)


def test_dropout_is_random_in_training_only(graph):
    g, adj = graph
    stack = gcn_stack()
    stack.train()
    assert not torch.equal(stack(adj, g.feat), stack(adj, g.feat))
    stack.eval()
    assert torch.equal(stack(adj, g.feat), stack(adj, g.feat))


def test_every_parameter_gets_a_gradient(graph):
    g, adj = graph
    stack = gcn_stack(residual=True, norm="layer")
    stack(adj, g.feat).pow(2).sum().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in stack.parameters())


def test_row_block_holds_full_rows_with_global_degrees():
    src = torch.tensor([0, 1, 2, 3, 3, 4, 0])
    dst = torch.tensor([1, 2, 1, 2, 0, 2, 4])
    adj = Adjacency.from_edges(src, dst, 5, 5)
    sub, ids = row_block(adj, 1, 3)  # destinations 1 and 2
    assert ids[:2].tolist() == [1, 2] and sorted(ids.tolist()) == [0, 1, 2, 3, 4]
    assert (sub.num_dst, sub.num_src, sub.nnz) == (2, 5, 5)
    # Every in-edge of 1 and 2, in global ids.
    got = sorted(zip(ids[sub.indices].tolist(), (sub.row_index + 1).tolist()))
    assert got == [(0, 1), (1, 2), (2, 1), (3, 2), (4, 2)]
    assert torch.equal(sub.out_degrees(), adj.out_degrees()[ids])  # node 3 has 2 out-edges
    assert torch.equal(adj.eids[adj.indptr[1]:adj.indptr[3]], sub.eids)


def test_add_self_loops_adds_only_missing_loops_once():
    src = torch.tensor([0, 1, 2, 2])
    dst = torch.tensor([1, 2, 0, 2])  # node 2 already has a loop
    adj = Adjacency.from_edges(src, dst, 3, 3, values=torch.tensor([1.0, 2.0, 3.0, 4.0]))
    looped = add_self_loops(adj)
    assert looped is add_self_loops(adj)  # cached on adj
    pairs = sorted(zip(looped.indices.tolist(), looped.row_index.tolist(),
                       looped.values.tolist(), looped.eids.tolist()))
    assert pairs == [(0, 0, 1.0, -1), (0, 1, 1.0, 0), (1, 1, 1.0, -1), (1, 2, 2.0, 1),
                     (2, 0, 3.0, 2), (2, 2, 4.0, 3)]
    # A block: destinations are the first sources, so loops go to local ids 0..num_dst-1.
    block = Adjacency.from_edges(torch.tensor([2, 3]), torch.tensor([0, 1]), 4, 2)
    assert sorted(zip(add_self_loops(block).indices.tolist(),
                      add_self_loops(block).row_index.tolist())) == [(0, 0), (1, 1), (2, 0),
                                                                      (3, 1)]


def test_bad_widths_and_batch_size(graph):
    g, adj = graph
    with pytest.raises(ValueError, match="2 layers need 3 widths"):
        GNNStack([GCNConv(12, 3), GCNConv(3, 3)], [12, 3])
    with pytest.raises(ConfigError, match="inference batch size must be >= 1"):
        gcn_stack().inference(adj, g.feat, batch_size=0)
    with pytest.raises(ConfigError, match='unknown activation "rleu"'):
        GNNStack([GCNConv(12, 3)], [12, 3], activation="rleu")


def test_unknown_norm_and_non_square_inference(graph):
    g, adj = graph
    with pytest.raises(ConfigError, match='unknown norm "group"; choices: none, batch, layer'):
        GNNStack([GCNConv(12, 3)], [12, 3], norm="group")
    block, _ = row_block(adj, 0, 10)
    with pytest.raises(DataError, match=r"needs the full \(square\) graph, got 10 x"):
        gcn_stack().inference(block, g.feat, batch_size=4)


@pytest.mark.parametrize("make", ["sage", "gin"])
@pytest.mark.parametrize("norm, residual", [("none", False), ("batch", False), ("none", True)])
def test_in_place_activation_only_where_safe_and_same_gradients(graph, make, norm, residual):
    """relu runs in place on layers that return a fresh tensor (``fresh_output``), after a
    norm and after a skip sum, and the forward and every gradient equal the out-of-place
    stack's; a GIN layer (its MLP's output may be saved) keeps the out-of-place relu."""
    g, adj = graph
    dims = [12, 16, 16, 3]

    def build():
        torch.manual_seed(0)
        layer = (lambda a, b: SAGEConv(a, b)) if make == "sage" else \
            (lambda a, b: GINConv(torch.nn.Sequential(torch.nn.Linear(a, b), torch.nn.Tanh())))
        return GNNStack([layer(dims[i], dims[i + 1]) for i in range(3)], dims, dropout=0.0,
                        norm=norm, residual=residual)

    fast, plain = build(), build()
    plain.acts = torch.nn.ModuleList(torch.nn.ReLU() for _ in plain.acts)
    expect_inplace = make == "sage" or norm != "none" or residual
    assert all(a.inplace == expect_inplace for a in fast.acts)
    outs = []
    for stack in (fast, plain):
        out = stack(adj, g.feat)
        out.square().sum().backward()  # GIN's tanh output would fail an in-place relu here
        outs.append((out.detach(), [p.grad for p in stack.parameters()]))
    torch.testing.assert_close(outs[0][0], outs[1][0])
    for a, b in zip(outs[0][1], outs[1][1]):
        torch.testing.assert_close(a, b)


def test_dropout_at_output_drops_each_layers_output_the_last_too(graph, monkeypatch):
    """``dropout_at = "output"`` (OGB's molecule GNNs): no dropout on the layers' inputs (the
    features at ``input_dropout`` only), one on every layer's output after its norm and
    activation; eval mode and layer-wise inference unchanged."""
    import graphflow.nn.stack as stack_module

    g, adj = graph
    torch.manual_seed(0)
    stack = GNNStack([GCNConv(12, 16), GCNConv(16, 3)], [12, 16, 3], norm="batch",
                     dropout=0.5, dropout_at="output", self_loops=True)
    assert stack.drops == [0.0, 0.0] and stack.out_drops == [0.5, 0.5]
    seen = []

    def record(x, p, training):
        seen.append((tuple(x.shape), p, bool((x >= 0).all())))
        return x

    monkeypatch.setattr(stack_module, "dropout", record)
    stack.train()
    stack(adj, g.feat)
    assert seen == [((120, 16), 0.5, True), ((120, 3), 0.5, False)]  # after the ReLU; logits
    stack.eval()
    assert torch.allclose(stack(adj, g.feat), stack.inference(adj, g.feat, batch_size=50),
                          atol=1e-5)
    with pytest.raises(ConfigError, match="unknown dropout placement"):
        GNNStack([GCNConv(12, 3)], [12, 3], dropout_at="outputs")
