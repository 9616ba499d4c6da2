"""GraphModel: the per-layer heads as one product equal the GIN paper's sum of per-layer
scores, dropout included (on the scores: one draw over every layer's scores; on the
features: one draw over the concatenated read-outs)."""

import pytest
import torch
import torch.nn.functional as F

from graphflow.compat.dgl import dgl
from graphflow.graphs.batch import GraphBatcher
from graphflow.graphs.model import GraphModel
from graphflow.graphs.readout import segment_sum
from graphflow.sparse import Adjacency
from graphflow_plugins.models.gin import GINModel, GINOptions


def setup(dropout_on="scores"):
    gen = torch.Generator().manual_seed(3)
    sizes = torch.randint(2, 9, (12,), generator=gen)  # 12 graphs of 2-8 nodes
    ptr = torch.cat([torch.zeros(1, dtype=torch.int64), sizes.cumsum(0)])
    owner = torch.repeat_interleave(torch.arange(12), sizes).repeat(2)  # 2 edges a node
    src = ptr[owner] + (torch.rand(owner.shape[0], generator=gen) * sizes[owner]).long()
    dst = ptr[owner] + (torch.rand(owner.shape[0], generator=gen) * sizes[owner]).long()
    whole = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=int(ptr[-1]))
    x = torch.randn(int(ptr[-1]), 3, generator=gen)
    batcher = GraphBatcher(Adjacency.from_graph(whole), ptr, x)
    batch = batcher.batch(torch.tensor([4, 0, 7, 11, 2]))
    torch.manual_seed(0)
    encoder = GINModel(GINOptions(layers=3, hidden=8, norm="batch", dropout=0.0)).build(3, 8)
    model = GraphModel.probe(encoder, batch, "all", 4, pooling="sum", dropout=0.5,
                             dropout_on=dropout_on).double()
    batch.x = batch.x.double()
    return model, batch


def per_layer_scores(model, batch):
    """The formula as written: each layer read out and scored by its own map; the dropout on
    every layer's scores after its map (one draw over the (B, L + 1, C) stack of them), or
    with ``dropout_on = "features"`` one draw over the concatenated read-outs before the maps
    (split back per layer)."""
    seg = batch.segment()
    outs = model.encoder.layer_outputs(batch.adj, batch.x)
    pooled = [segment_sum(h, seg, batch.num_graphs) for h in outs]
    maps = model.weight.split(model.widths, dim=1)  # W_l: (out_dim, w_l)
    if model.dropout_on == "scores":
        each = torch.stack([F.linear(p, w, b) for p, w, b in zip(pooled, maps, model.bias)], 1)
        return model.drop(each).sum(1), torch.cat(pooled, 1)
    dropped = model.drop(torch.cat(pooled, 1)).split(model.widths, dim=1)
    score = sum(F.linear(p, w, b) for p, w, b in zip(dropped, maps, model.bias))
    return score, torch.cat(pooled, 1)


def test_one_product_equals_the_sum_of_per_layer_scores():
    model, batch = setup()
    model.eval()
    score, emb = model(batch)
    ref_score, ref_emb = per_layer_scores(model, batch)
    assert model.widths == [3, 8, 8, 8] and score.shape == (5, 4)
    torch.testing.assert_close(score, ref_score)
    torch.testing.assert_close(emb, ref_emb)


@pytest.mark.parametrize("dropout_on", ["scores", "features"])
def test_training_draws_the_same_dropout_masks_and_gradients(dropout_on):
    model, batch = setup(dropout_on)
    model.train()
    target = torch.tensor([0, 3, 1, 2, 0])
    scores, grads = [], []
    for forward in (lambda: model(batch)[0], lambda: per_layer_scores(model, batch)[0]):
        torch.manual_seed(5)  # the same generator state: the same mask
        model.zero_grad()
        score = forward()
        F.cross_entropy(score, target).backward()
        scores.append(score.detach())
        grads.append({n: p.grad.clone() for n, p in model.named_parameters()})
    torch.testing.assert_close(scores[0], scores[1])
    for name in grads[0]:
        torch.testing.assert_close(grads[0][name], grads[1][name], msg=name)


def test_the_maps_start_as_per_layer_linear_maps_and_old_state_dicts_load():
    model, batch = setup()
    torch.manual_seed(0)
    heads = [torch.nn.Linear(w, 4).double() for w in model.widths]
    torch.manual_seed(0)
    fresh = GraphModel(model.encoder, model.widths, 4, pooling="sum", layers="all",
                       dropout=0.5).double()
    torch.manual_seed(0)
    ref = [torch.nn.Linear(w, 4).double() for w in model.widths]  # the same draws, in order
    torch.testing.assert_close(fresh.weight, torch.cat([h.weight for h in ref], 1))
    torch.testing.assert_close(fresh.bias, torch.stack([h.bias for h in ref]))
    # A state dict of the per-layer form (heads.<l>.weight / .bias) loads into the two maps.
    state = {k: v for k, v in model.state_dict().items() if k not in ("weight", "bias")}
    for i, h in enumerate(heads):
        state[f"heads.{i}.weight"], state[f"heads.{i}.bias"] = h.weight, h.bias
    fresh.load_state_dict(state)
    torch.testing.assert_close(fresh.weight, torch.cat([h.weight for h in heads], 1))
    torch.testing.assert_close(fresh.bias, torch.stack([h.bias for h in heads]))


def test_target_scaling_maps_the_head_back_and_folds_into_it():
    """scale_targets: the scores are the head's output times the scale plus the shift;
    head() and absorb_target_scaling() give those scores from the weights alone."""
    model, batch = setup()
    model.eval()
    plain, _ = model(batch)
    shift = torch.tensor([10.0, -3.0, 0.0, 1e3], dtype=torch.float64)
    scale = torch.tensor([2.0, 0.5, 1.0, 250.0], dtype=torch.float64)
    model.scale_targets(shift, scale)
    scaled, emb = model(batch)
    torch.testing.assert_close(scaled, plain * scale + shift)
    weight, bias = model.head()  # what the portable twins take
    torch.testing.assert_close(emb @ weight.T + bias.sum(0), scaled)
    model.absorb_target_scaling()
    torch.testing.assert_close(model(batch)[0], scaled)
    assert torch.equal(model.target_scale, torch.ones(4, dtype=torch.float64))
    assert torch.equal(model.target_shift, torch.zeros(4, dtype=torch.float64))
    # a state dict with a scaling (a checkpoint mid-training) restores it on load; one from
    # an earlier version, without the two buffers, loads as unscaled
    other, _ = setup()
    other.eval()
    model.scale_targets(shift, scale)
    other.load_state_dict(model.state_dict())
    torch.testing.assert_close(other(batch)[0], model(batch)[0])
    old = {k: v for k, v in model.state_dict().items() if not k.startswith("target_")}
    other.load_state_dict(old)
    scores, emb = other(batch)
    torch.testing.assert_close(scores, emb @ model.weight.T + model.bias.sum(0))  # no map
    assert torch.equal(other.target_scale, torch.ones(4, dtype=torch.float64))
