"""largest_component and reorder: node data, ids and edge data follow the nodes."""

import pytest
import torch

from graphflow.errors import ConfigError, DataError


def test_largest_component_keeps_ids_and_data(transformed, triples):
    data = transformed('[[transform]]\ntype = "largest_component"')
    assert data.ids.to_arrow().to_pylist() == ["a", "b", "c"]
    assert data.graph.ndata["feat"][:, 0].tolist() == [0.0, 1.0, 2.0]
    assert data.meta["classes"] == ["x", "y"]
    assert triples(data) == [("a", "b", 1.0), ("b", "a", 2.0), ("b", "c", 3.0),
                             ("c", "c", 4.0), ("a", "b", 5.0)]


@pytest.mark.parametrize("method", ["rcm", "degree"])
def test_reorder_renumbers_but_keeps_every_fact(transformed, triples, method):
    before = transformed()
    after = transformed(f'[[transform]]\ntype = "reorder"\nmethod = "{method}"')
    assert sorted(triples(after)) == sorted(triples(before))
    ids_before = before.ids.to_arrow().to_pylist()
    ids_after = after.ids.to_arrow().to_pylist()
    assert sorted(ids_after) == sorted(ids_before)
    for name in ("feat", "label"):
        by_id = dict(zip(ids_before, before.graph.ndata[name].tolist()))
        assert [by_id[i] for i in ids_after] == after.graph.ndata[name].tolist()
    if method == "degree":
        degree = after.graph.in_degrees() + after.graph.out_degrees()
        assert torch.all(degree[:-1] >= degree[1:])
        assert ids_after[0] == "b"
    dst = after.graph.edges()[1]
    assert torch.all(dst[:-1] <= dst[1:])  # edges sorted by destination


def test_split_is_seeded_stratified_and_keeps_existing_masks(transformed):
    split = '[[transform]]\ntype = "split"\ntrain = 2\nval = 2\ntest = 2\n'
    a, b = transformed(split, seed=1), transformed(split, seed=1)
    c = transformed(split + "seed = 5", seed=1)
    g = a.graph
    assert [int(g.ndata[m].sum()) for m in ("train_mask", "val_mask", "test_mask")] == [2, 2, 2]
    assert g.ndata["label"][g.ndata["train_mask"]].tolist() in ([0, 1], [1, 0])
    assert torch.equal(g.ndata["train_mask"], b.graph.ndata["train_mask"])
    assert any(not torch.equal(g.ndata[m], c.graph.ndata[m]) for m in ("train_mask",
                                                                       "val_mask"))
    again = transformed(split + '[[transform]]\ntype = "split"\ntrain = 0.5\nval = 0.0\n'
                                'test = 0.5', seed=1)
    assert torch.equal(again.graph.ndata["train_mask"], g.ndata["train_mask"])  # kept
    redone = transformed(split + '[[transform]]\ntype = "split"\ntrain = 0.5\nval = 0.0\n'
                                 'test = 0.5\noverwrite = true', seed=1)
    assert int(redone.graph.ndata["val_mask"].sum()) == 0


def test_split_errors_are_named(transformed):
    with pytest.raises(ConfigError, match=r"\[transform.0\] split: the split asks for 9 nodes "
                                          r"but only 6 labelled nodes are available"):
        transformed('[[transform]]\ntype = "split"\ntrain = 3\nval = 3\ntest = 3')
    with pytest.raises(ConfigError, match=r"train_per_class = 4, but class 0 has only 3"):
        transformed('[[transform]]\ntype = "split"\ntrain_per_class = 4')


def test_normalize_features(transformed):
    row = transformed('[[transform]]\ntype = "normalize_features"').graph.ndata["feat"]
    assert torch.allclose(row.abs().sum(1), torch.ones(6))
    std = transformed('[[transform]]\ntype = "normalize_features"\nmethod = "standard"')
    x = std.graph.ndata["feat"]
    assert torch.allclose(x[:, 0].mean(), torch.tensor(0.0), atol=1e-6)
    assert torch.allclose(x[:, 0].std(unbiased=False), torch.tensor(1.0), atol=1e-5)
    assert torch.all(x[:, 1] == 0)  # a constant column stays finite


def test_normalize_without_features(run_toml, tmp_path):
    (tmp_path / "e.txt").write_text("a b\n")
    with pytest.raises(DataError, match=r"\[transform.0\] normalize_features: the graph has no "
                                        r"node features"):
        run_toml('[load]\ntype = "edgelist"\npath = "e.txt"\n[[transform]]\n'
                 'type = "normalize_features"')
