"""AtomEncoder / BondEncoder against OGB's (ogb.graphproppred.mol_encoder), and as the input
layer and edge maps of the graph models."""

import os

os.environ.setdefault("OUTDATED_IGNORE", "1")  # ogb's import would ask PyPI for its version

import pytest
import torch

from graphflow.graphs.encoders import AtomEncoder, BondEncoder

mol_encoder = pytest.importorskip("ogb.graphproppred.mol_encoder")


@pytest.mark.parametrize("ours, theirs, k", [(AtomEncoder, "AtomEncoder", 9),
                                             (BondEncoder, "BondEncoder", 3)])
def test_same_sums_and_gradients_as_ogbs(ours, theirs, k):
    torch.manual_seed(0)
    ref = getattr(mol_encoder, theirs)(8)
    enc = ours(8)
    assert [e.num_embeddings for e in ref.__dict__["_modules"][
        "atom_embedding_list" if k == 9 else "bond_embedding_list"]] == enc.dims
    tables = ref.atom_embedding_list if k == 9 else ref.bond_embedding_list
    with torch.no_grad():
        enc.weight.copy_(torch.cat([t.weight for t in tables]))
    codes = torch.stack([torch.randint(0, d, (50,)) for d in enc.dims], 1)  # (50, k)
    out = enc(codes.float())  # codes as a collection holds them
    want = ref(codes)
    torch.testing.assert_close(out, want)
    g = torch.randn(50, 8)
    (out * g).sum().backward()
    (want * g).sum().backward()
    torch.testing.assert_close(enc.weight.grad, torch.cat([t.weight.grad for t in tables]))


def test_a_wrong_width_names_the_featurization():
    from graphflow.errors import DataError

    with pytest.raises(DataError, match='featurization = "ogb"'):
        AtomEncoder(4)(torch.zeros(3, 174))


def test_models_take_the_atom_encoder_and_gine_the_bond_encoder():
    from graphflow.manager import create_host
    from graphflow.options import parse_options
    from graphflow.graphs.encoders import Encoded
    from graphflow.sparse import Adjacency

    registry = create_host().registry

    def build(name, **values):
        info = registry.get("model", name)
        options = parse_options(info.cls.Options, values, section="model", component=name,
                                source="test.toml", base_dir=".")
        return info.cls(options).build(9, 16)

    torch.manual_seed(0)
    src = torch.tensor([0, 1, 1, 2])
    dst = torch.tensor([1, 0, 2, 1])
    x = torch.stack([torch.randint(0, d, (3,)) for d in AtomEncoder(1).dims], 1).float()
    e = torch.stack([torch.randint(0, d, (4,)) for d in BondEncoder(1).dims], 1).float()
    from graphflow.compat.dgl import dgl

    g = dgl.graph((src, dst), num_nodes=3)
    g.edata["edge_feat"] = e
    adj = Adjacency.from_graph(g, feat="edge_feat")
    for name, extra in (("gin", {}), ("gcn", {}), ("gine", {"edge_encoder": "bond"})):
        model = build(name, hidden=16, layers=2, input_encoder="atom", **extra)
        assert isinstance(model, Encoded) and isinstance(model.input_encoder, AtomEncoder)
        outs = model.layer_outputs(adj, x)
        assert [o.shape[1] for o in outs] == [16, 16, 16]
    edge_maps = [m for m in model.modules() if isinstance(m, BondEncoder)]
    assert len(edge_maps) == 2
