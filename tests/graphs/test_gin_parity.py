"""graphflow's GIN stack and read-out head against DGL's GIN example (dmlc/dgl,
``examples/pytorch/gin/train.py``), copied here as it is written there, on DGL's ``GINConv``
and ``SumPooling``, with graphflow's weights copied over: the same scores in eval mode, the
same scores and gradients in training mode with the dropout off, and the dropout on the same
tensors (each layer's scores) when both draw the same mask.

graphflow's side is what the graph tasks build by default: ``gin`` with ``norm = "batch"``
(``mlp_norm = "auto"``: batch norm inside the MLPs too), ``norm_last`` (the graph tasks'
default: the last layer normed and activated as the hidden ones), ``dropout = 0`` in the
stack, a sum read-out of every layer with the input's, ``readout_dropout = "scores"``.
"""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from graphflow.compat.dgl import dgl
from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.model import GraphModel
from graphflow.sparse import Adjacency
from graphflow_plugins.models.gin import GINModel, GINOptions

IN, HIDDEN, CLASSES, LAYERS = 5, 8, 3, 5  # LAYERS counts the input, as DGL's example does


# ---------------------------------------------------------------- DGL's example, as written
class MLP(nn.Module):
    """Construct two-layer MLP-type aggreator for GIN model"""

    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.linears = nn.ModuleList()
        # two-layer MLP
        self.linears.append(nn.Linear(input_dim, hidden_dim, bias=False))
        self.linears.append(nn.Linear(hidden_dim, output_dim, bias=False))
        self.batch_norm = nn.BatchNorm1d((hidden_dim))

    def forward(self, x):
        h = x
        h = F.relu(self.batch_norm(self.linears[0](h)))
        return self.linears[1](h)


class GIN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.ginlayers = nn.ModuleList()
        self.batch_norms = nn.ModuleList()
        num_layers = LAYERS
        # five-layer GCN with two-layer MLP aggregator and sum-neighbor-pooling scheme
        for layer in range(num_layers - 1):  # excluding the input layer
            if layer == 0:
                mlp = MLP(input_dim, hidden_dim, hidden_dim)
            else:
                mlp = MLP(hidden_dim, hidden_dim, hidden_dim)
            self.ginlayers.append(dgl.nn.GINConv(mlp, learn_eps=False))
            self.batch_norms.append(nn.BatchNorm1d(hidden_dim))
        # linear functions for graph sum poolings of output of each layer
        self.linear_prediction = nn.ModuleList()
        for layer in range(num_layers):
            if layer == 0:
                self.linear_prediction.append(nn.Linear(input_dim, output_dim))
            else:
                self.linear_prediction.append(nn.Linear(hidden_dim, output_dim))
        self.drop = nn.Dropout(0.5)
        self.pool = dgl.nn.SumPooling()

    def forward(self, g, h):
        # list of hidden representation at each layer (including the input layer)
        hidden_rep = [h]
        for i, layer in enumerate(self.ginlayers):
            h = layer(g, h)
            h = self.batch_norms[i](h)
            h = F.relu(h)
            hidden_rep.append(h)
        score_over_layer = 0
        # perform graph sum pooling over all nodes in each layer
        for i, h in enumerate(hidden_rep):
            pooled_h = self.pool(g, h)
            score_over_layer += self.drop(self.linear_prediction[i](pooled_h))
        return score_over_layer


# ---------------------------------------------------------------- the two sides
def graphs(self_loops: bool = False):
    """10 random undirected graphs of 2-9 nodes; (DGL's graphs, graphflow's batcher)."""
    gen = torch.Generator().manual_seed(7)
    sizes = torch.randint(2, 10, (10,), generator=gen)
    ones = []
    for n in sizes.tolist():  # ten tiny graphs
        src = torch.randint(n, (2 * n,), generator=gen)
        dst = (src + torch.randint(1, n, (2 * n,), generator=gen)) % n  # no loops
        g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=n)
        g.ndata["x"] = torch.randn(n, IN, generator=gen, dtype=torch.float64)
        ones.append(g)
    whole = dgl.batch(ones)
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, whole.ndata["x"])
    if self_loops:  # what DGL's example loads: GINDataset(self_loop=True)
        ones = [dgl.add_self_loop(g) for g in ones]
    return ones, batcher


def models(dropout_on="scores", eps=0.0):
    """(graphflow's GraphModel, DGL's example model), in float64, with DGL's weights (and
    batch-norm affine parameters, randomised) copied into graphflow's."""
    _, batcher = graphs()
    torch.manual_seed(0)
    encoder = GINModel(GINOptions(layers=LAYERS - 1, hidden=HIDDEN, norm="batch", dropout=0.0,
                                  norm_last=True, eps=eps)).build(IN, HIDDEN).double()
    ours = GraphModel.probe(encoder, batcher.batch(torch.arange(2)), "all", CLASSES,
                            pooling="sum", dropout=0.5, dropout_on=dropout_on).double()
    torch.manual_seed(1)
    theirs = GIN(IN, HIDDEN, CLASSES).double()
    with torch.no_grad():
        for p in theirs.modules():
            if isinstance(p, nn.BatchNorm1d):  # not the identity they start as
                p.weight.uniform_(0.5, 1.5)
                p.bias.uniform_(-0.5, 0.5)
        for ours_p, theirs_p in pairs(ours, theirs):
            ours_p.copy_(theirs_p)
        for layer in encoder.layers:  # DGL's MLPs have no biases (each precedes a batch norm)
            layer.mlp[0].bias.zero_()
            layer.mlp[3].bias.zero_()
        ours.weight.copy_(torch.cat([h.weight for h in theirs.linear_prediction], 1))
        ours.bias.copy_(torch.stack([h.bias for h in theirs.linear_prediction]))
    return ours, theirs


def pairs(ours, theirs):
    """(graphflow's, DGL's) tensor of every layer's weights, batch norms (their running
    statistics too) included; the head is copied separately (one weight, one bias)."""
    out = []
    enc = ours.encoder
    for i, (layer, dgl_layer) in enumerate(zip(enc.layers, theirs.ginlayers)):
        mlp, ref = layer.mlp, dgl_layer.apply_func
        outer = enc.norms[i] if i < len(enc.norms) else mlp[4]  # the last layer: norm_last
        assert isinstance(mlp[1], nn.BatchNorm1d) and isinstance(outer, nn.BatchNorm1d)
        out += [(mlp[0].weight, ref.linears[0].weight), (mlp[3].weight, ref.linears[1].weight)]
        for mine, theirs_bn in ((mlp[1], ref.batch_norm), (outer, theirs.batch_norms[i])):
            out += [(getattr(mine, n), getattr(theirs_bn, n))
                    for n in ("weight", "bias", "running_mean", "running_var")]
    return out


def run_both(ours, theirs, sel, self_loops=False):
    ones, batcher = graphs(self_loops)
    batch = batcher.batch(sel)
    g = dgl.batch([ones[i] for i in sel.tolist()])
    return ours(batch)[0], theirs(g, g.ndata["x"])


class FixedMask(nn.Dropout):
    """Dropout with given masks, one per call in order (``masks``), scaled by 1 / (1 - p):
    the same draw on both sides, whatever their random streams. Records the shapes it drops."""

    def __init__(self, p, masks):
        super().__init__(p)
        self.masks, self.calls = list(masks), []

    def forward(self, x):
        if not self.training:
            return x
        self.calls.append(tuple(x.shape))
        return x * self.masks.pop(0).to(x.dtype) / (1 - self.p)


# ---------------------------------------------------------------- the checks
SEL = torch.tensor([3, 0, 8, 5, 1, 9])


def test_eval_mode_scores_match_dgls_gin_example():
    ours, theirs = models()
    ours.train(), theirs.train()
    ours.drop.p = theirs.drop.p = 0.0
    run_both(ours, theirs, SEL)  # one training step's statistics into the running ones
    for mine, ref in pairs(ours, theirs):
        torch.testing.assert_close(mine, ref)
    ours.eval(), theirs.eval()
    mine, ref = run_both(ours, theirs, torch.arange(10))
    assert mine.shape == (10, CLASSES)
    torch.testing.assert_close(mine, ref)


def test_training_mode_gradients_match_with_the_dropout_off():
    ours, theirs = models()
    ours.train(), theirs.train()
    ours.drop.p = theirs.drop.p = 0.0
    target = torch.tensor([0, 2, 1, 1, 0, 2])
    mine, ref = run_both(ours, theirs, SEL)
    torch.testing.assert_close(mine, ref)
    F.cross_entropy(mine, target).backward()
    F.cross_entropy(ref, target).backward()
    for a, b in pairs(ours, theirs):
        if a.requires_grad:
            torch.testing.assert_close(a.grad, b.grad)
    torch.testing.assert_close(ours.weight.grad,
                               torch.cat([h.weight.grad for h in theirs.linear_prediction], 1))
    torch.testing.assert_close(ours.bias.grad,
                               torch.stack([h.bias.grad for h in theirs.linear_prediction]))
    for layer in ours.encoder.layers:  # the biases DGL lacks: a batch norm follows each
        for lin in (layer.mlp[0], layer.mlp[3]):
            torch.testing.assert_close(lin.bias.grad, torch.zeros_like(lin.bias), atol=1e-12,
                                       rtol=0)


def test_the_dropout_falls_on_each_layers_scores_as_in_dgls_example():
    ours, theirs = models()
    ours.train(), theirs.train()
    gen = torch.Generator().manual_seed(3)
    mask = torch.rand(len(SEL), LAYERS, CLASSES, generator=gen) > 0.5  # (B, L + 1, C)
    ours.drop = FixedMask(0.5, [mask])
    theirs.drop = FixedMask(0.5, [mask[:, i] for i in range(LAYERS)])  # one call a layer
    target = torch.tensor([0, 2, 1, 1, 0, 2])
    mine, ref = run_both(ours, theirs, SEL)
    assert ours.drop.calls == [(len(SEL), LAYERS, CLASSES)]  # the scores, not the read-outs
    assert theirs.drop.calls == [(len(SEL), CLASSES)] * LAYERS
    torch.testing.assert_close(mine, ref)
    F.cross_entropy(mine, target).backward()
    F.cross_entropy(ref, target).backward()
    torch.testing.assert_close(ours.weight.grad,
                               torch.cat([h.weight.grad for h in theirs.linear_prediction], 1))
    torch.testing.assert_close(ours.bias.grad,
                               torch.stack([h.bias.grad for h in theirs.linear_prediction]))
    for a, b in pairs(ours, theirs):
        if a.requires_grad:
            torch.testing.assert_close(a.grad, b.grad)


def test_features_placement_drops_the_read_out_vectors_instead():
    ours, theirs = models(dropout_on="features")
    ours.train(), theirs.train()
    width = IN + (LAYERS - 1) * HIDDEN
    mask = torch.rand(len(SEL), width, generator=torch.Generator().manual_seed(3)) > 0.5
    ours.drop = FixedMask(0.5, [mask])
    theirs.drop = FixedMask(0.0, [torch.ones(len(SEL), CLASSES)] * LAYERS)
    mine, ref = run_both(ours, theirs, SEL)
    assert ours.drop.calls == [(len(SEL), width)]
    assert not torch.allclose(mine, ref)  # a different regulariser
    ours.drop.p = 0.0  # without dropping, the two placements are the same head
    ours.eval(), theirs.eval()
    mine, ref = run_both(ours, theirs, SEL)
    torch.testing.assert_close(mine, ref)


def test_dgls_self_loops_are_eps_one():
    """DGL's example loads its sets with ``GINDataset(self_loop=True)``: every node's own
    vector then enters the sum twice, which is graphflow's GIN with ``eps = 1`` on the graphs
    as they are."""
    ours, theirs = models(eps=1.0)
    ours.eval(), theirs.eval()
    mine, ref = run_both(ours, theirs, SEL, self_loops=True)
    torch.testing.assert_close(mine, ref)
    plain, _ = models()
    plain.eval()
    other, _ = run_both(plain, theirs, SEL, self_loops=True)
    assert not torch.allclose(other, ref)  # GIN-0 on the same graphs is another network


@pytest.mark.parametrize("dropout_on", ["scores", "features"])
def test_a_last_batch_of_one_graph_trains_on_both_sides(dropout_on):
    """A last batch holding one graph: the batch norms normalise over its nodes (node-level
    statistics, as on DGL's side), so one graph of several nodes trains."""
    ours, theirs = models(dropout_on)
    ours.train(), theirs.train()
    ours.drop.p = theirs.drop.p = 0.0
    mine, ref = run_both(ours, theirs, torch.tensor([4]))
    assert mine.shape == (1, CLASSES)
    torch.testing.assert_close(mine, ref)
