"""self_loops, bidirected, dedup: edge data stays with its edge."""

ORIGINAL = [("a", "b", 1.0), ("b", "a", 2.0), ("b", "c", 3.0), ("c", "c", 4.0), ("a", "b", 5.0),
            ("d", "e", 6.0)]


def test_loaded_graph(transformed, triples):
    assert triples(transformed()) == ORIGINAL


def test_self_loops_add_and_remove(transformed, triples):
    added = transformed('[[transform]]\ntype = "self_loops"\nfill = 0.5')
    assert triples(added) == ORIGINAL + [(n, n, 0.5) for n in "abdef"]
    assert added.graph.ndata["feat"][:, 0].tolist() == [0, 1, 2, 3, 4, 5]
    removed = transformed('[[transform]]\ntype = "self_loops"\nmode = "remove"')
    assert triples(removed) == [t for t in ORIGINAL if t[0] != t[1]]
    assert removed.graph.ndata["feat"][:, 0].tolist() == [0, 1, 2, 3, 4, 5]
    assert removed.ids.to_arrow().to_pylist() == ["a", "b", "c", "d", "e", "f"]


def test_bidirected_adds_missing_reverses_once(transformed, triples):
    data = transformed('[[transform]]\ntype = "bidirected"')
    assert triples(data) == ORIGINAL + [("c", "b", 3.0), ("e", "d", 6.0)]


def test_dedup_weights(transformed, triples):
    first = triples(transformed('[[transform]]\ntype = "dedup"'))
    assert first == [t for i, t in enumerate(ORIGINAL) if i != 4]
    summed = triples(transformed('[[transform]]\ntype = "dedup"\nweights = "sum"'))
    assert summed[0] == ("a", "b", 6.0) and summed[1:] == first[1:]
    top = triples(transformed('[[transform]]\ntype = "dedup"\nweights = "max"'))
    assert top[0] == ("a", "b", 5.0)


def test_chained_transforms(transformed, triples):
    data = transformed('[[transform]]\ntype = "dedup"\n[[transform]]\ntype = "bidirected"\n'
                       '[[transform]]\ntype = "self_loops"')
    g = data.graph
    assert (g.in_degrees() >= 1).all()
    pairs = {(s, d) for s, d, _ in triples(data)}
    assert all((d, s) in pairs for s, d in pairs)
    assert len(pairs) == g.num_edges()


def test_self_loops_fill_edge_features_with_the_incoming_mean(run_toml):
    """edge_data = "mean": each added loop's edge features are the mean of its node's incoming
    edges (PyG's fill_value="mean"); the default leaves them zero. On a collection of graphs,
    whose edges carry one-hot bond types."""
    from pathlib import Path

    import torch
    path = Path(__file__).resolve().parents[3] / "examples" / "data" / "bond_types"
    base = f'[pipeline]\nseed = 0\n[load]\ntype = "tu"\npath = "{path.as_posix()}"\nname = "BT"\n'
    plain = run_toml(base).ctx.data.graph
    for mode in ("zeros", "mean"):
        g = run_toml(base + f'[[transform]]\ntype = "self_loops"\nedge_data = "{mode}"'
                     ).ctx.data.graph
        old, feat = plain.num_edges(), g.edata["edge_feat"]
        assert g.num_edges() == old + plain.num_nodes()
        assert torch.equal(feat[:old], plain.edata["edge_feat"])  # old edges keep theirs
        loops = g.edges()[1][old:]
        if mode == "zeros":
            assert not feat[old:].any()
            continue
        _, dst = plain.edges()
        for k in (0, 7, len(loops) - 1):  # a few loops, against their node's in-edges
            want = plain.edata["edge_feat"][dst == loops[k]].mean(0)
            torch.testing.assert_close(feat[old + k], want)
        assert (feat[old:].sum(1) - 1).abs().max() < 1e-6  # a mean of one-hot rows sums to 1


def test_incoming_means_on_a_hand_built_frame():
    """Loops on nodes 0, 2 and 3 after edges into 0 (twice) and 2; node 3 has no in-edge."""
    import torch

    from graphflow_plugins.transforms.self_loops import incoming_means
    dst = torch.tensor([0, 0, 2])
    feat = torch.tensor([[1.0, 0.0], [3.0, 2.0], [5.0, 5.0]])
    frame = {"feat": torch.cat([feat, torch.zeros(3, 2)]), "weight": torch.ones(6),
             "kind": torch.tensor([1, 2, 3, 0, 0, 0])}
    incoming_means(frame, dst, torch.tensor([0, 2, 3]), 4)
    assert frame["feat"][3:].tolist() == [[2.0, 1.0], [5.0, 5.0], [0.0, 0.0]]
    assert frame["weight"].tolist() == [1.0] * 6  # weight takes fill, integers stay
    assert frame["kind"].tolist() == [1, 2, 3, 0, 0, 0]
