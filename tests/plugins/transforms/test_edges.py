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
