"""The sampler contract: options, prepare, sample, iterate (batching, determinism, prefetch)."""

from __future__ import annotations

import pytest
import torch

from graphflow.errors import ConfigError, DataError, DeviceError
from graphflow.sampling.sampler import NeighborOptions, SampledGraph
from graphflow_plugins.samplers.neighbor import NeighborSampler

CPU = torch.device("cpu")


def sampler(**options) -> NeighborSampler:
    return NeighborSampler(NeighborOptions(**options))


@pytest.mark.parametrize("options,message", [
    ({"fanouts": []}, "fanouts = []: give one fanout per layer"),
    ({"fanouts": [5, 0]}, "each fanout must be > 0, or -1 for every neighbor (got 0)"),
    ({"fanouts": [-2]}, "got -2"),
    ({"batch_size": 0}, "batch_size = 0: must be > 0"),
    ({"prefetch": -1}, "prefetch = -1: must be >= 0"),
    ({"threads": -1}, "threads = -1: must be >= 0"),
    ({"workers": 0}, "workers = 0: must be >= 1 (prefetch = 0 samples without background"),
])
def test_bad_options(options, message):
    with pytest.raises(ValueError) as info:
        NeighborOptions(**options)
    assert message in str(info.value)


def test_check_layers():
    s = sampler(fanouts=[10, 10])
    s.check_layers(2)
    with pytest.raises(ConfigError, match=r"fanouts = \[10, 10\] has 2 entries but the model "
                                          r"has 3 message-passing layers"):
        s.check_layers(3)


def test_prepare_and_sample(tiny_graph):
    s = sampler(fanouts=[2, 2])
    graph = s.prepare(tiny_graph, CPU)
    assert isinstance(graph, SampledGraph) and graph.device == CPU
    mb = s.sample(graph, torch.tensor([4, 1]), torch.Generator().manual_seed(0))
    assert mb.seeds.tolist() == [4, 1]
    assert torch.equal(mb.input_nodes, mb.blocks[0].src_nodes)
    assert torch.equal(mb.features, tiny_graph.graph.ndata["feat"][mb.input_nodes])
    assert torch.equal(mb.labels, tiny_graph.graph.ndata["label"][mb.seeds])


class ElsewhereGenerator:
    """Stands in for a generator on another device (a CUDA one, on a machine without CUDA)."""

    device = torch.device("meta")


def test_sample_errors(tiny_graph):
    s = sampler(fanouts=[2])
    graph = s.prepare(tiny_graph, CPU)
    with pytest.raises(DataError, match="empty seed batch"):
        s.sample(graph, torch.zeros(0, dtype=torch.int64))
    with pytest.raises(DataError, match="seed id 6 is out of range for a graph of 6 nodes"):
        s.sample(graph, torch.tensor([0, 6]))
    with pytest.raises(DeviceError, match="seeds are on meta"):
        s.sample(graph, torch.tensor([0], device="meta"))
    with pytest.raises(DeviceError, match="the generator is on meta but sampling runs on cpu"):
        s.sample(graph, torch.tensor([0]), ElsewhereGenerator())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="needs what prepare\\(\\) returned"):
        s.sample(tiny_graph.graph, torch.tensor([0]))


def test_cuda_device_without_cuda_is_a_device_error(tiny_graph):
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    with pytest.raises(DeviceError, match='device "cuda" requested but CUDA is not available'):
        sampler(device="cuda").prepare(tiny_graph, CPU)
    with pytest.raises(DeviceError, match='features = "pinned"'):
        sampler(features="pinned").prepare(tiny_graph, CPU)


def batches_of(s: NeighborSampler, graph, seeds, seed: int, **kwargs):
    return list(s.iterate(graph, seeds, torch.Generator().manual_seed(seed), **kwargs))


def same(a, b) -> bool:
    return len(a) == len(b) and all(
        torch.equal(x.seeds, y.seeds) and torch.equal(x.input_nodes, y.input_nodes)
        and all(torch.equal(p.eids, q.eids) and torch.equal(p.indices, q.indices)
                for p, q in zip(x.blocks, y.blocks))
        for x, y in zip(a, b))


def sbm_data(nodes: int, blocks: int, seed: int):
    """An SBM graph with 8 features and labels: (the generated graph, its GraphData)."""
    from graphflow.compat.dgl import dgl
    from graphflow.io.synthetic import sbm
    from graphflow.graph import GraphData, NodeIds

    gen = sbm(nodes, blocks, 8, p_in=0.05, p_out=0.005, seed=seed)
    g = dgl.graph((gen.src, gen.dst), num_nodes=nodes)
    g.ndata["feat"], g.ndata["label"] = gen.feat, gen.label
    return gen, GraphData(g, NodeIds.identity(nodes))


def test_iterate_is_deterministic_and_prefetch_and_workers_change_nothing(tiny_graph):
    gen, data = sbm_data(400, 4, seed=0)
    seeds = torch.arange(0, 400, 3)
    inline = sampler(fanouts=[5, 5], batch_size=32, prefetch=0)
    graph = inline.prepare(data, CPU)
    a = batches_of(inline, graph, seeds, 7)
    assert same(a, batches_of(inline, graph, seeds, 7))
    for workers in (1, 2, 3):  # each batch has its own generator: who samples it is moot
        ahead = sampler(fanouts=[5, 5], batch_size=32, prefetch=2, workers=workers)
        assert same(a, batches_of(ahead, ahead.prepare(data, CPU), seeds, 7))
    assert not same(a, batches_of(inline, graph, seeds, 8))
    assert len(a) == inline.num_batches(seeds.numel()) == 5
    assert sorted(torch.cat([mb.seeds for mb in a]).tolist()) == seeds.tolist()
    for mb in a:
        assert torch.equal(mb.features, gen.feat[mb.input_nodes])
        assert torch.equal(mb.labels, gen.label[mb.seeds])


def test_iterate_accepts_a_mask_and_drops_the_last_batch(tiny_graph):
    s = sampler(fanouts=[1], batch_size=2, drop_last=True, shuffle=False)
    graph = s.prepare(tiny_graph, CPU)
    mask = torch.tensor([True, True, True, False, True, False])
    got = [mb.seeds.tolist() for mb in s.iterate(graph, mask)]
    assert got == [[0, 1], [2, 4]]


def test_intra_op_threads_are_restored():
    from graphflow.sampling.sampler import intra_op_threads

    before = torch.get_num_threads()
    with intra_op_threads(1):
        assert torch.get_num_threads() == 1
    assert torch.get_num_threads() == before
    with intra_op_threads(0):
        assert torch.get_num_threads() == before


def test_iterate_gives_indexed_rows_only_inline_and_when_asked(tiny_graph):
    from graphflow.sparse.indexed_rows import IndexedRows

    gen, data = sbm_data(300, 3, seed=1)
    seeds = torch.arange(0, 300, 2)
    s = sampler(fanouts=[4, 4], batch_size=40)
    graph = s.prepare(data, CPU)
    eager = batches_of(s, graph, seeds, 3, workers=0)
    rows = list(s.iterate(graph, seeds, torch.Generator().manual_seed(3), workers=0, rows=True))
    assert len(rows) == len(eager)
    for a, b in zip(eager, rows):  # the same batches; only the features are left ungathered
        assert isinstance(b.features, IndexedRows) and b.features.table is graph.store.feat
        assert torch.equal(b.features.materialize(), a.features)
        assert torch.equal(b.labels, a.labels) and torch.equal(b.input_nodes, a.input_nodes)
    ahead = list(s.iterate(graph, seeds, torch.Generator().manual_seed(3), workers=1, rows=True))
    assert all(isinstance(mb.features, torch.Tensor) for mb in ahead)  # a worker gathers
