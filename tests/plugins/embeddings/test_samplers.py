"""node2vec / deepwalk samplers: prepare once on the device, walks, backends, options, errors."""

from __future__ import annotations

import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.errors import ConfigError, DataError
from graphflow.graph import GraphData, NodeIds
from graphflow_plugins.embeddings.samplers import (
    DeepWalkSampler,
    Node2VecOptions,
    Node2VecSampler,
    WalkData,
    WalkOptions,
)

SBM = """
[pipeline]
seed = 3
[load]
type = "synthetic"
nodes = 200
classes = 2
features = 0
p_in = 0.08
p_out = 0.005
"""


def ring(n=10, weights=None):
    src = torch.arange(n)
    dst = (src + 1) % n
    g = dgl.graph((torch.cat([src, dst]), torch.cat([dst, src])), num_nodes=n)
    if weights is not None:
        g.edata["w"] = weights
    return GraphData(graph=g, ids=NodeIds.identity(n), name="ring")


def edges_of(data):
    src, dst = data.graph.edges()
    return set(zip(src.tolist(), dst.tolist()))


@pytest.mark.parametrize("backend", ["graphflow", "dgl"])
@pytest.mark.parametrize("cls,extra", [(Node2VecSampler, {"p": 0.5, "q": 2.0}),
                                       (DeepWalkSampler, {})])
def test_walks_follow_edges_with_both_backends(backend, cls, extra):
    data = ring(12)
    opts = cls.Options(walk_length=7, backend=backend, **extra)
    sampler = cls(opts)
    prepared = sampler.prepare(data, torch.device("cpu"))
    assert isinstance(prepared, WalkData) and prepared.num_nodes == 12
    walks = sampler.sample(prepared, torch.arange(12), generator=torch.Generator().manual_seed(0))
    assert walks.shape == (12, 8) and walks.dtype == torch.int64
    assert torch.equal(walks[:, 0], torch.arange(12))
    edges = edges_of(data)
    for row in walks.tolist():
        assert all((a, b) in edges for a, b in zip(row, row[1:]))


@pytest.mark.parametrize("backend", ["graphflow", "dgl"])
def test_same_generator_seed_same_walks(backend):
    sampler = Node2VecSampler(Node2VecOptions(walk_length=10, p=0.25, q=4.0, backend=backend))
    prepared = sampler.prepare(ring(30), torch.device("cpu"))
    runs = [sampler.sample(prepared, torch.arange(30), torch.Generator().manual_seed(s))
            for s in (1, 1, 2)]
    assert torch.equal(runs[0], runs[1]) and not torch.equal(runs[0], runs[2])


@pytest.mark.parametrize("column", [False, True])
@pytest.mark.parametrize("backend", ["graphflow", "dgl"])
def test_weight_option_uses_the_named_edge_data(backend, column):
    # Ring with weight 0 on the edges 0 <-> 1: walks from 0 must go to 9.
    n = 6
    w = torch.ones(2 * n)
    w[0] = 0.0  # 0 -> 1
    w[n] = 0.0  # 1 -> 0
    if column:  # (E, 1) edge data reads as (E,)
        w = w.unsqueeze(1)
    sampler = DeepWalkSampler(WalkOptions(walk_length=1, weight="w", backend=backend))
    prepared = sampler.prepare(ring(n, w), torch.device("cpu"))
    walks = sampler.sample(prepared, torch.zeros(500, dtype=torch.int64),
                           torch.Generator().manual_seed(0))
    assert set(walks[:, 1].tolist()) == {n - 1}


def test_missing_weight_is_a_data_error_naming_the_choices():
    sampler = Node2VecSampler(Node2VecOptions(weight="score"))
    with pytest.raises(DataError, match=r'weight = "score": the graph has no edge data "score" '
                                        r"\(edge data: w\); load edge weights or drop the "
                                        r"weight option"):
        sampler.prepare(ring(5, torch.ones(10)), torch.device("cpu"))


def _bad(value, at=3):
    w = torch.ones(10)
    w[at] = value
    return w


@pytest.mark.parametrize("weights,message", [
    (_bad(-1.0), r'weight = "w": edge 3 has weight -1.0; sampling weights must be finite '
                 r"and >= 0"),
    (_bad(float("nan"), at=0), r'weight = "w": edge 0 has weight nan; sampling weights'),
    (torch.ones(10, dtype=torch.bool), r'weight = "w": expected one real number per edge, '
                                       r"got bool of shape \(10,\)"),
    (torch.ones(10, 2), r'weight = "w": expected one real number per edge, got float32 of '
                        r"shape \(10, 2\)"),
])
def test_bad_weights_are_data_errors_naming_the_option(weights, message):
    with pytest.raises(DataError, match=message):
        DeepWalkSampler(WalkOptions(weight="w")).prepare(ring(5, weights), torch.device("cpu"))


def test_sample_needs_what_prepare_returned():
    sampler = DeepWalkSampler()
    with pytest.raises(ConfigError, match="needs what prepare\\(\\) returned"):
        sampler.sample(ring(4).graph, torch.tensor([0]))


@pytest.mark.parametrize("text,message", [
    ('type = "node2vec"\np = 0', r"sample\] node2vec: p = 0.0: must be a finite number > 0"),
    ('type = "node2vec"\nq = -1.5', r"q = -1.5: must be a finite number > 0"),
    ('type = "deepwalk"\nwalk_length = 0', r"walk_length = 0: must be >= 1"),
    ('type = "deepwalk"\nholdout_edges = 0.1', r"sample.holdout_edges: no longer an option of "
                                              r"'deepwalk'; hold edges out with a \[\[transform\]\] "
                                              r'type = "link_split"'),
    ('type = "deepwalk"\nthreads = -1', r"sample\] deepwalk: threads = -1: must be >= 0"),
    ('type = "deepwalk"\np = 0.5', r"sample.p: unknown option for 'deepwalk'"),
    ('type = "node2vec"\nbackend = "pyg"', r'sample.backend: expected "graphflow" \| "dgl"'),
])
def test_bad_options_name_the_key(host, tmp_path, text, message):
    from graphflow.config import load_config

    path = tmp_path / "p.toml"
    path.write_text(SBM + "[sample]\n" + text + "\n[train]\ntype = \"skipgram\"\n")
    with pytest.raises(ConfigError, match=message):
        load_config(path, host.registry)
