"""The first-party explainers through the registry, a third-party one, and their docs."""

import dataclasses
from pathlib import Path

import pytest
import torch

from graphflow.components import Explainer
from graphflow.explain import Explanation, GraphInputs
from graphflow.explain.run import check_method
from graphflow.manager import create_host
from graphflow.nn.gcn import GCNConv
from graphflow.nn.stack import GNNStack
from graphflow.plugin import hookimpl
from graphflow.sparse import Adjacency

DOC = (Path(__file__).resolve().parents[3] / "docs" / "explain.md").read_text()


def _inputs():
    gen = torch.Generator().manual_seed(0)
    src, dst = torch.randint(20, (60,), generator=gen), torch.randint(20, (60,), generator=gen)
    adj = Adjacency.from_edges(src, dst, 20, 20)
    torch.manual_seed(0)
    model = GNNStack([GCNConv(3, 4), GCNConv(4, 2)], [3, 4, 2], self_loops=True).eval()
    return model, GraphInputs(adj=adj, x=torch.randn(20, 3, generator=gen), hops=2)


@pytest.mark.parametrize("name", ["gnnexplainer", "saliency", "ig"])
def test_each_method_explains_through_the_registry(host, name):
    if name != "gnnexplainer":
        pytest.importorskip("captum")
    info = host.registry.get("explainer", name)
    options = {"gnnexplainer": {"epochs": 3}, "ig": {"steps": 4}}.get(name, {})
    explainer = info.cls(info.cls.Options(**options))
    model, inputs = _inputs()
    exp = explainer.explain(model, inputs, torch.tensor([1, 4]))
    assert exp.method == name and exp.targets.tolist() == [1, 4]
    assert exp.edge_mask.shape == exp.edge_ids.shape == exp.edge_target.shape
    assert exp.feature_mask.shape == (2, 3)
    assert set(exp.edge_target.tolist()) <= {0, 1}


class Occlusion(Explainer):
    """Importance of an edge: the drop of the explained logit when that edge alone is
    removed (a third-party method, one forward pass per edge of a tiny graph)."""

    name = "occlusion"
    summary = "edge occlusion"
    explains = ("node", "graph")

    def explain(self, model, inputs, targets):
        from graphflow.explain.subgraph import computation_graphs

        cg = computation_graphs(inputs.adj, targets, inputs.hops)
        x = inputs.x[cg.node]
        full = model(cg.adjacency(torch.ones(cg.num_edges)), x)[cg.target_node]
        y = full.argmax(-1)
        drops = torch.stack([
            full.gather(1, y[:, None])[cg.edge_target[e], 0]
            - model(cg.adjacency((torch.arange(cg.num_edges) != e).float()), x)[
                cg.target_node].gather(1, y[:, None])[cg.edge_target[e], 0]
            for e in range(cg.num_edges)])
        return Explanation(targets=targets, target_class=y, edge_target=cg.edge_target,
                           edge_ids=cg.edge_ids, edge_mask=drops.detach(), feature_mask=None,
                           method=self.name)


class OcclusionPlugin:
    @hookimpl
    def graphflow_register_explainers(self, register):
        register(Occlusion)


def test_a_third_party_explainer_plugs_in():
    host = create_host(plugins={"occlusion": OcclusionPlugin()})
    assert check_method(host.registry, "occlusion", "graph") is Occlusion
    model, inputs = _inputs()
    exp = Occlusion().explain(model, inputs, torch.tensor([3]))
    assert exp.edge_mask.numel() == exp.edge_ids.numel() > 0


def test_every_explainer_and_option_is_documented(host):
    for info in host.registry.by_kind("explainer"):
        if info.plugin != "explainers":
            continue
        assert f"`{info.name}`" in DOC
        for field in dataclasses.fields(info.cls.Options):
            assert f"`{field.name}`" in DOC, f"explainer {info.name}: option {field.name}"
