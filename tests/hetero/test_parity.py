"""One node type and one relation through the typed ``tables`` loader give exactly the
homogeneous graph of the ``parquet`` loader, and the same training figures."""

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import torch

TRAIN = """
[pipeline]
seed = 0
[[transform]]
type = "normalize_features"
[model]
type = "gcn"
hidden = 16
[train]
type = "node_classification"
epochs = 10
"""


def test_cora_through_typed_tables_matches_the_parquet_path(run_toml, planetoid_root, tmp_path):
    cora = run_toml(f'[load]\ntype = "planetoid"\nname = "cora"\nroot = "{planetoid_root}"\n',
                    name="cora.toml").ctx.data
    g = cora.graph
    src, dst = g.edges()
    ids = pa.array([f"paper{i}" for i in range(g.num_nodes())])  # string ids, as users have
    feat = g.ndata["feat"].numpy()
    nodes = {"id": ids, "feat": pa.FixedSizeListArray.from_arrays(pa.array(feat.reshape(-1)),
                                                                  feat.shape[1]),
             "label": pa.array(g.ndata["label"].numpy())}
    nodes.update({m: pa.array(g.ndata[m].numpy()) for m in ("train_mask", "val_mask",
                                                           "test_mask")})
    pq.write_table(pa.table(nodes), tmp_path / "papers.parquet")
    pq.write_table(pa.table({"src": ids.take(pa.array(src.numpy())),
                             "dst": ids.take(pa.array(dst.numpy()))}),
                   tmp_path / "cites.parquet")

    homogeneous = run_toml(f'[load]\ntype = "parquet"\nedges = "cites.parquet"\n'
                           f'nodes = "papers.parquet"\n{TRAIN}', name="parquet.toml")
    typed = run_toml('[load]\ntype = "tables"\n[[load.nodes]]\ntype = "paper"\n'
                     'path = "papers.parquet"\n[[load.edges]]\nrelation = "cites"\n'
                     'src_type = "paper"\ndst_type = "paper"\npath = "cites.parquet"\n'
                     f'{TRAIN}', name="tables.toml")
    a, b = homogeneous.ctx.data, typed.ctx.data
    assert not b.is_typed and b.typed_ids is None
    assert b.graph.ntypes == a.graph.ntypes and b.graph.etypes == a.graph.etypes
    assert torch.equal(torch.stack(a.graph.edges()), torch.stack(b.graph.edges()))
    assert sorted(a.graph.ndata) == sorted(b.graph.ndata)
    for key in a.graph.ndata:
        assert torch.equal(a.graph.ndata[key], b.graph.ndata[key]), key
    assert np.array_equal(a.ids.to_arrow().to_numpy(zero_copy_only=False),
                          b.ids.to_arrow().to_numpy(zero_copy_only=False))
    ma, mb = homogeneous.record["metrics"], typed.record["metrics"]
    assert ma == mb and ma["test_acc"] > 0.3
