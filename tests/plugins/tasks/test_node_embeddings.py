"""node_classification leaves an ``embeddings`` artifact: the last hidden layer's node
vectors (eval mode, full neighbourhoods), the output layer's input, exported with original
ids; per node type on a typed graph."""

from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest
import torch

from graphflow.nn.typed import TypedAdjacency
from graphflow.sparse import Adjacency

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"

PIPELINE = """
[pipeline]
name = "emb"
seed = 0

[load]
type = "synthetic"
kind = "sbm"
nodes = 120
classes = 3
features = 8

[model]
type = "{model}"
hidden = [16, 12]
layers = 3

[train]
type = "node_classification"
epochs = 3
{train}

[[export]]
type = "parquet"
what = "embeddings"
"""


@pytest.mark.parametrize("model, train", [("gcn", ""), ("sage", "inference_batch_size = 7")])
def test_embeddings_are_the_output_layers_input(run_toml, cli, tmp_path, model, train):
    ctx = run_toml(PIPELINE.format(model=model, train=train)).ctx
    net, data = ctx.artifacts.model, ctx.data
    emb = ctx.artifacts.embeddings
    assert emb.shape == (data.num_nodes, 12) == (data.num_nodes, net.dims[-2])
    table = pq.read_table(tmp_path / "out" / "embeddings.parquet")
    assert table.column("id").to_pylist() == data.ids.to_arrow().to_pylist()  # row i: node i
    stored = np.stack(table.column("embedding").to_numpy(zero_copy_only=False))
    assert np.array_equal(stored, emb.numpy())
    # the output layer of the trained model maps them to the run's logits
    adj = net.prepare(Adjacency.from_graph(data.graph))
    with torch.no_grad():
        logits = net.layers[-1](adj, emb)
    assert torch.allclose(logits, ctx.artifacts.logits, atol=1e-5)
    # graphflow predict writes the same vectors from the run's bundle
    code, _, err = cli("predict", tmp_path / "out", "--data", tmp_path / "pipeline.toml",
                       "--what", "embeddings")
    assert code == 0, err
    again = pq.read_table(tmp_path / "out" / "predict" / "embeddings.parquet")
    assert again.column("id").to_pylist() == table.column("id").to_pylist()
    assert np.allclose(np.stack(again.column("embedding").to_numpy(zero_copy_only=False)),
                       stored, atol=1e-5)


def test_typed_embeddings_cover_every_node_type(run_toml, cli):
    text = (EXAMPLES / "typed_tables.toml").read_text().replace(
        'path = "data/', f'path = "{EXAMPLES}/data/') + (
        '\n[[export]]\ntype = "parquet"\nwhat = "embeddings"\n\n'
        '[[export]]\ntype = "npy"\nwhat = "embeddings"\n')
    ctx = run_toml(text, overrides=["train.epochs=2"]).ctx
    data, net = ctx.data, ctx.artifacts.model
    g = data.graph
    emb = ctx.artifacts.embeddings
    assert emb.shape == (g.num_nodes(), net.dims[-2])
    types = ctx.artifacts.model_info["embedding_types"]
    assert types == [[t, g.num_nodes(t)] for t in g.ntypes]
    out = Path(ctx.out_dir)
    table = pq.read_table(out / "embeddings.parquet")
    assert table.column_names == ["id", "type", "embedding"]
    kinds = table.column("type").to_pylist()
    start = 0
    h = {}
    for t, n in types:
        assert kinds[start:start + n] == [t] * n
        ids = table.column("id").slice(start, n).to_pylist()
        assert ids == [str(v) for v in data.typed_ids[t].to_arrow().to_pylist()]
        h[t] = emb[start:start + n]
        start += n
    assert list(np.load(out / "embeddings.types.npy")) == kinds
    assert np.load(out / "embeddings.npy").shape == tuple(emb.shape)
    # the output layer maps the hidden vectors to the target type's logits
    with torch.no_grad():
        logits = net.layers[-1](TypedAdjacency.from_graph(g), h)["paper"]
    assert torch.allclose(logits, ctx.artifacts.logits, atol=1e-5)
    code, _, err = cli("predict", out, "--data", out.parent / "pipeline.toml", "--what",
                       "embeddings", "--format", "parquet")
    assert code == 0, err
    again = pq.read_table(out / "predict" / "embeddings.parquet")
    assert again.column("type").to_pylist() == kinds
    assert np.allclose(np.stack(again.column("embedding").to_numpy(zero_copy_only=False)),
                       emb.numpy(), atol=1e-5)
