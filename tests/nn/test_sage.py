import pytest
import torch

from graphflow.compat.dgl import dgl
from graphflow.nn import SAGEConv
from graphflow.sampling.block import Block
from graphflow.sparse import Adjacency, SparseFeatures, gemm


def pair(in_dim: int, out_dim: int, bias: bool = True, feat_drop: float = 0.0):
    ref = dgl.nn.SAGEConv(in_dim, out_dim, "mean", bias=bias, feat_drop=feat_drop).double()
    if bias:
        torch.nn.init.normal_(ref.fc_self.bias)
    ours = SAGEConv(in_dim, out_dim, bias=bias, feat_drop=feat_drop).double()
    ours.load_state_dict(ref.state_dict())  # same parameter names: fc_self, fc_neigh
    return ours, ref


def grads_of(ours, ref) -> dict:
    out = {"fc_self.weight": (ours.fc_self.weight, ref.fc_self.weight),
           "fc_neigh.weight": (ours.fc_neigh.weight, ref.fc_neigh.weight)}
    if ours.fc_self.bias is not None:
        out["fc_self.bias"] = (ours.fc_self.bias, ref.fc_self.bias)
    return out


@pytest.mark.parametrize("dims", [(5, 3), (3, 6)])  # linear before / after aggregation
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_matches_dgl_sageconv_mean(case, features, compare, dims, bias, weighted):
    ours, ref = pair(*dims, bias=bias)
    x = features(case.num_src, dims[0])
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    grads = {"x": (x1, x2), **grads_of(ours, ref)}
    if weighted:
        w = torch.rand(case.g.num_edges(), dtype=torch.float64) + 0.5
        w1, w2 = w.clone().requires_grad_(), w.clone().requires_grad_()
        out, expected = ours(case.adj, x1, case.to_csr(w1)), ref(case.g, x2, edge_weight=w2)
        grads["edge_weight"] = (w1, w2)
    else:
        out, expected = ours(case.adj, x1), ref(case.g, x2)
    assert out.shape == (case.num_dst, dims[1])
    compare(out, expected, grads)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("rows", [False, True])
def test_a_first_layer_with_its_bias_in_the_product_matches_dgl(case, features, compare,
                                                               weighted, rows):
    """Features that need no gradient (a first layer): the bias rides in the product as a
    column of ones; output and parameter gradients still equal DGL's, from a tensor or from
    rows read in place (IndexedRows)."""
    from graphflow.sparse.indexed_rows import IndexedRows

    ours, ref = pair(3, 6)
    x = features(case.num_src, 3)
    table = torch.cat([torch.zeros(2, 3, dtype=x.dtype), x])
    given = IndexedRows(table, torch.arange(2, 2 + case.num_src)) if rows else x
    w = torch.rand(case.g.num_edges(), dtype=torch.float64) + 0.5 if weighted else None
    out = ours(case.adj, given, None if w is None else case.to_csr(w))
    assert type(out.grad_fn).__name__ != "AddmmBackward0"  # no separate bias add
    expected = ref(case.g, x, edge_weight=w)
    compare(out, expected, grads_of(ours, ref))


def test_feat_drop_uses_one_mask_for_self_and_neighbours(case, features):
    ours, ref = pair(4, 3, feat_drop=0.5)
    x = features(case.num_src, 4)
    torch.manual_seed(5)
    out = ours(case.adj, x)
    torch.manual_seed(5)
    expected = ref(case.g, x)
    torch.testing.assert_close(out, expected)
    ours.eval()
    ref.eval()
    torch.testing.assert_close(ours(case.adj, x), ref(case.g, x))


@pytest.mark.parametrize("dims", [(6, 3), (3, 6)])
def test_sparse_features_match_dense(case, dims):
    gen = torch.Generator().manual_seed(3)
    x = torch.randn(case.num_src, dims[0], generator=gen, dtype=torch.float64)
    x = x * (torch.rand(x.shape, generator=gen) < 0.3)
    layer = SAGEConv(*dims).double()
    twin = SAGEConv(*dims).double()
    twin.load_state_dict(layer.state_dict())
    out_d, out_s = layer(case.adj, x), twin(case.adj, SparseFeatures.from_dense(x))
    torch.testing.assert_close(out_s, out_d)
    out_d.square().sum().backward()
    out_s.square().sum().backward()
    for name, p in layer.named_parameters():
        torch.testing.assert_close(dict(twin.named_parameters())[name].grad, p.grad)


@pytest.mark.skipif(not gemm.onednn_available(), reason="torch without oneDNN (mkldnn)")
def test_float32_batch_through_onednn_matches_dgl_sageconv():
    """A sampled-batch-sized float32 block (600 destinations: two oneDNN row buckets and a
    torch remainder) with the products in oneDNN against DGL's SAGEConv (torch's MKL)."""
    gen = torch.Generator().manual_seed(4)
    num_src, num_dst, per_row = 2000, 600, 10
    src = torch.randint(0, num_src, (num_dst * per_row,), generator=gen)
    dst = torch.arange(num_dst).repeat_interleave(per_row)
    blk = dgl.create_block((src, dst), num_src_nodes=num_src, num_dst_nodes=num_dst)
    indptr, indices, eids = blk.adj_tensors("csc")
    adj = Adjacency.from_block(Block(src_nodes=torch.arange(num_src), num_dst=num_dst,
                                     indptr=indptr, indices=indices, eids=eids))
    ref = dgl.nn.SAGEConv(128, 256, "mean")
    torch.nn.init.normal_(ref.fc_self.bias)
    ours = SAGEConv(128, 256)
    ours.load_state_dict(ref.state_dict())
    x = torch.randn(num_src, 128, generator=gen)
    x1, x2 = x.clone().requires_grad_(), x.clone().requires_grad_()
    with gemm.applied("onednn"):
        out = ours(adj, x1)
        assert type(out.grad_fn).__name__.startswith("_OneDNNLinear")
        up = torch.randn(num_dst, 256, generator=gen)
        (out * up).sum().backward()
    expected = ref(blk, x2)
    (expected * up).sum().backward()
    torch.testing.assert_close(out, expected, rtol=1e-4, atol=1e-4)
    theirs = dict(ref.named_parameters())
    assert len(theirs) == 3
    for name, a, b in [("x", x1, x2), *((n, p, theirs[n]) for n, p in ours.named_parameters())]:
        torch.testing.assert_close(a.grad, b.grad, rtol=1e-4, atol=1e-3, msg=name)
