"""The portable twins compute graphflow's own outputs (in process, eval mode)."""

from __future__ import annotations

import pytest
import torch

from graphflow.portable import portable_model
from portable_cases import blocks, build, graph, reference_blocks, reference_full

CASES = [
    ("gcn", {}),
    ("gcn", {"gcn_norm": "right", "self_loops": False, "layers": 3, "hidden": 6}),
    ("gcn", {"gcn_norm": "none", "bias": False}),
    ("gcn", {"norm": "batch", "residual": True, "hidden": 5, "layers": 3}),
    ("sage", {}),
    ("sage", {"norm": "layer", "residual": True, "activation": "prelu", "layers": 3}),
    ("gin", {"learn_eps": True, "eps": 0.3}),
    ("sgc", {"k": 1}),
    ("gat", {"heads": 2, "hidden": 4}),
    ("gat", {"heads": 3, "out_heads": 2, "hidden": 2, "self_loops": False}),
]


@pytest.mark.parametrize("kind,options", CASES, ids=lambda v: str(v))
def test_full_graph_twin_matches(kind, options):
    model = build(kind, **options)
    x, src, dst, weight = graph()
    expected = reference_full(model, x, src, dst, weight)
    got = portable_model(model, "full")(x, src, dst, weight)
    assert got.shape == expected.shape
    assert (got - expected).abs().max().item() < 1e-5


@pytest.mark.parametrize("kind,options", CASES, ids=lambda v: str(v))
def test_block_twin_matches(kind, options):
    model = build(kind, **options)
    x, blks = blocks(model.num_layers)
    expected = reference_blocks(model, x, blks)
    got = portable_model(model, "block")(x, blks)
    assert got.shape == expected.shape == (int(blks[-1][3]), 3)
    assert (got - expected).abs().max().item() < 1e-5


def test_sgc_propagates_k_times_on_the_full_graph():
    model = build("sgc", k=3)
    x, src, dst, weight = graph(seed=1)
    expected = reference_full(model, x, src, dst, weight)
    assert (portable_model(model)(x, src, dst, weight) - expected).abs().max() < 1e-5


def test_unweighted_model_takes_ones():
    model = build("gcn")
    x, src, dst, _ = graph(seed=2)
    expected = reference_full(model, x, src, dst, None, weighted=False)
    got = portable_model(model)(x, src, dst, torch.ones(src.shape[0]))
    assert (got - expected).abs().max() < 1e-5


def test_twin_copies_the_weights():
    """The twin holds copies: changing the trained model afterwards changes nothing."""
    model = build("sage")
    x, src, dst, weight = graph()
    twin = portable_model(model)
    before = twin(x, src, dst, weight)
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
    assert torch.equal(twin(x, src, dst, weight), before)
    assert not any(p.requires_grad for p in twin.parameters())


def test_full_inputs_of_an_adjacency():
    from graphflow.portable.inputs import full_inputs
    from graphflow.sparse import Adjacency

    model = build("gcn")
    x, src, dst, weight = graph(seed=5)
    adj = Adjacency.from_edges(src, dst, x.shape[0], x.shape[0], values=weight)
    with torch.no_grad():
        expected = model(adj, x)
    assert (portable_model(model)(*full_inputs(adj, x)) - expected).abs().max() < 1e-5


@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.script's notice
@pytest.mark.parametrize("scripted", [False, True])
def test_ids_out_of_range_raise(scripted):
    model = portable_model(build("gcn"))
    if scripted:
        model = torch.jit.script(model)
    x, src, dst, weight = graph()
    bad = src.clone()
    bad[3] = x.shape[0]
    with pytest.raises(Exception, match=r"src holds ids outside \[0, 9\)"):
        model(x, bad, dst, weight)
