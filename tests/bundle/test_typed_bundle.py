"""Bundles of typed models: what they record, and the data they refuse (one line each)."""

from pathlib import Path

import pyarrow as pa
import pytest
import torch

from graphflow.bundle import load_bundle
from graphflow.compat.dgl import dgl
from graphflow.errors import DataError
from graphflow.graph import GraphData, NodeIds

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def typed_run(tmp_path_factory):
    from graphflow.config import load_config
    from graphflow.manager import create_host
    from graphflow.runner import run_pipeline

    folder = tmp_path_factory.mktemp("typed_bundle")
    path = folder / "pipeline.toml"
    path.write_text((EXAMPLES / "typed_tables.toml").read_text().replace(
        'path = "data/', f'path = "{EXAMPLES}/data/'))
    host = create_host()
    config = load_config(path, host.registry, overrides=["train.epochs=1"],
                         out_dir=folder / "out")
    return run_pipeline(config, host, quiet=True).ctx


def test_typed_bundle_records_types_relations_widths_and_ids(typed_run):
    bundle = load_bundle(typed_run.out_dir)
    g = typed_run.data.graph
    assert bundle.target == "paper" and bundle.kind == "node"
    assert bundle.typed["ntypes"] == list(g.ntypes)
    assert [tuple(r) for r in bundle.typed["relations"]] == list(g.canonical_etypes)
    assert bundle.in_dim == {"author": 4, "paper": 6, "venue": None}
    assert bundle.ids.to_arrow().equals(typed_run.data.typed_ids["paper"].to_arrow())
    # the rebuilt model gives the run's logits on the run's graph
    from graphflow.bundle.infer import node_outputs

    assert torch.allclose(node_outputs(bundle, typed_run.data), typed_run.artifacts.logits,
                          atol=1e-6)


def _with(data: GraphData, g, **ids) -> GraphData:
    typed = {**data.typed_ids, **ids}
    return GraphData(graph=g, ids=NodeIds.identity(g.num_nodes()), name="new",
                     meta=dict(data.meta), typed_ids=typed)


def test_typed_bundle_refuses_data_of_another_shape(typed_run):
    bundle = load_bundle(typed_run.out_dir)
    data = typed_run.data
    g = data.graph
    homogeneous = GraphData(graph=dgl.graph(([0], [1])), ids=NodeIds.identity(2), name="flat")
    with pytest.raises(DataError, match=r"trained on a typed graph \(3 node types, 8 "
                                        r"relations\), but the new data has one node type"):
        bundle.check_data(homogeneous)
    rels = [r for r in g.canonical_etypes if r[1] != "cites"]
    with pytest.raises(DataError, match=r"has no relation \('paper', 'cites', 'paper'\)"):
        bundle.check_data(_with(data, dgl.edge_type_subgraph(g, rels)))
    wide = g.clone()
    wide.nodes["author"].data["feat"] = torch.zeros(g.num_nodes("author"), 5)
    with pytest.raises(DataError, match="node type 'author' of the new data has 5 feature "
                                        "columns, but the model was trained on 4"):
        bundle.check_data(_with(data, wide))
    more = dgl.add_nodes(g.clone(), 1, ntype="venue")
    venues = pa.concat_arrays([data.typed_ids["venue"].to_arrow(), pa.array(["new-venue"])])
    with pytest.raises(DataError, match="node type 'venue' is featureless: the model learnt a "
                                        "row for each of its"):
        bundle.check_data(_with(data, more, venue=NodeIds(len(venues), venues)))
