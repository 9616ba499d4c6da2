"""The samplers plugin: registration, TOML errors, neighbor vs dgl_neighbor, Cora end to end."""

from __future__ import annotations

import statistics

import pytest
import torch

from graphflow.errors import DataError, DeviceError
from graphflow.sampling.sampler import NeighborOptions
from graphflow.testing import REPO_ROOT
from graphflow_plugins.samplers.dgl_neighbor import DGLNeighborSampler
from graphflow_plugins.samplers.neighbor import NeighborSampler

CPU = torch.device("cpu")

PIPELINE = """
[pipeline]
name = "s"
[load]
type = "synthetic"
nodes = 200
classes = 3
features = 4
p_in = 0.05
p_out = 0.005
[sample]
type = "{sampler}"
{options}
"""


def test_both_samplers_are_registered_by_the_plugin(host):
    for name in ("neighbor", "dgl_neighbor"):
        info = host.registry.get("sampler", name)
        assert info.plugin == "samplers"
        assert issubclass(info.cls, (NeighborSampler, DGLNeighborSampler))


def test_bad_fanouts_in_toml_name_file_section_and_fix(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(sampler="neighbor", options="fanouts = [10, 0]"))
    code, _, err = cli("validate", path)
    assert code == 1
    assert "p.toml" in err and "[sample] neighbor" in err
    assert "each fanout must be > 0, or -1 for every neighbor (got 0)" in err


def test_wrong_option_type_in_toml(cli, tmp_path):
    path = tmp_path / "p.toml"
    path.write_text(PIPELINE.format(sampler="neighbor", options='fanouts = "10,10"'))
    code, _, err = cli("validate", path)
    assert code == 1 and "sample.fanouts: expected list[int]" in err


def test_missing_weight_data_fails_the_sample_stage(run_toml):
    with pytest.raises(DataError, match=r'\[sample\] neighbor: weight = "weight": the graph has '
                                        r'no edge data "weight"'):
        run_toml(PIPELINE.format(sampler="neighbor", options='weight = "weight"'))


def test_sample_stage_prepares_the_csc(run_toml):
    result = run_toml(PIPELINE.format(sampler="neighbor", options="fanouts = [3, 3]"))
    graph = result.ctx.sampler_graph
    assert graph.structure.num_nodes == 200 and graph.device == CPU
    assert graph.structure.num_edges == result.ctx.data.num_edges


def test_dgl_neighbor_refuses_cuda(tiny_graph):
    s = DGLNeighborSampler(NeighborOptions(device="cuda"))
    with pytest.raises(DeviceError, match='device = "cuda": dgl_neighbor samples on the CPU only'):
        s.prepare(tiny_graph, CPU)


def test_dgl_neighbor_iterates_in_the_callers_thread_and_stays_deterministic(run_toml):
    # DGL's random state lives in the calling thread's OpenMP team: in a background thread
    # its batches changed from run to run.
    data = run_toml(PIPELINE.format(sampler="neighbor", options="")).ctx.data
    seeds = torch.arange(200)

    def eids(sampler: DGLNeighborSampler) -> list[list[int]]:
        graph = sampler.prepare(data, CPU)
        return [mb.blocks[0].eids.tolist()
                for mb in sampler.iterate(graph, seeds, torch.Generator().manual_seed(3))]

    four = DGLNeighborSampler(NeighborOptions(fanouts=[4], batch_size=16, workers=4))
    assert four.num_workers() == 0
    assert eids(four) == eids(four) == eids(DGLNeighborSampler(NeighborOptions(fanouts=[4], batch_size=16,
                                                                 prefetch=0)))


def test_neighbor_and_dgl_neighbor_deliver_the_same_contract(run_toml):
    data = run_toml(PIPELINE.format(sampler="neighbor", options="")).ctx.data
    seeds = torch.arange(0, 200, 9)
    batches = []
    for cls in (NeighborSampler, DGLNeighborSampler):
        s = cls(NeighborOptions(fanouts=[4, 3]))
        batches.append(s.sample(s.prepare(data, CPU), seeds, torch.Generator().manual_seed(0)))
    ours, ref = batches
    src, dst = data.graph.edges()
    for mb in batches:
        assert torch.equal(mb.seeds, seeds) and torch.equal(mb.blocks[-1].dst_nodes, seeds)
        assert torch.equal(mb.input_nodes, mb.blocks[0].src_nodes)
        assert torch.equal(mb.features, data.graph.ndata["feat"][mb.input_nodes])
        assert torch.equal(mb.labels, data.graph.ndata["label"][seeds])
        for b in mb.blocks:
            assert torch.equal(src[b.eids], b.src_nodes[b.indices])
            assert torch.equal(dst[b.eids], b.dst_nodes[b.dst_local()])
    counts = [mb.blocks[-1].indptr.diff() for mb in batches]
    assert torch.equal(counts[0], counts[1])  # min(in-degree, 3) for each seed, in seed order


@pytest.mark.slow
def test_cora_sage_minibatch_reaches_80_percent(planetoid_root, run_toml, tmp_path):
    """Acceptance: GraphSAGE (hidden 64), fanouts [10, 10], batch 64, mean test acc >= 0.80."""
    text = (REPO_ROOT / "examples" / "cora_sage_minibatch.toml").read_text()
    accs = []
    for seed in range(5):
        result = run_toml(text, [f"pipeline.seed={seed}", f"load.root={planetoid_root}"],
                          name="cora.toml", out_dir=tmp_path / f"seed{seed}")
        accs.append(result.record["metrics"]["test_acc"])
    assert statistics.mean(accs) >= 0.80, accs


def test_weighted_sampling_in_both_samplers_skips_zero_weights(run_toml):
    data = run_toml(PIPELINE.format(sampler="neighbor", options="")).ctx.data
    w = torch.rand(data.num_edges, generator=torch.Generator().manual_seed(0))
    w[::2] = 0.0
    data.graph.edata["weight"] = w
    seeds = torch.arange(0, 200, 5)
    for cls in (NeighborSampler, DGLNeighborSampler):
        s = cls(NeighborOptions(fanouts=[3, 3], weight="weight"))
        mb = s.sample(s.prepare(data, CPU), seeds, torch.Generator().manual_seed(0))
        for b in mb.blocks:
            assert (w[b.eids] > 0).all(), cls.name
