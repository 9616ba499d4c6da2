"""The N-Triples reader and the ``rdf`` loader: hand-made files for the rules, AIFB against
the statistics of DGL's ``AIFBDataset``."""

import gzip

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphflow.errors import DataError
from graphflow.hetero.ntriples import BLANK, IRI, LITERAL, read_ntriples
from graphflow.hetero.rdf import relation_names

EX = "http://ex.org/"
NT = f"""# a comment line

<{EX}Person/alice> <{EX}knows> <{EX}Person/bob> .
<{EX}Person/alice> <{EX}knows> <{EX}Person/bob> .
<{EX}Person/bob> <{EX}worksAt> <{EX}Org/acme> .
<{EX}Person/alice> <{EX}name> "Alice"@en .
<{EX}Person/bob> <{EX}name> "Alice"^^<http://www.w3.org/2001/XMLSchema#string> .
<{EX}Org/acme> <{EX}motto> "say \\"hi\\"\\n\\u00e9t\\u00e9" .
<{EX}Person/carol> <{EX}knows> _:b1 .
_:b1 <{EX}worksAt> <{EX}Org/acme> .
<{EX}Org/acme> <http://other.org/ns#knows> <http://elsewhere.org/x> .
<{EX}Person/carol> <{EX}worksAt> <{EX}Org/acme> .   # trailing comment
"""


def _nt(tmp_path, text=NT, name="g.nt"):
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    else:
        path.write_text(text)
    return path


def test_reader_splits_terms_and_decodes_literals(tmp_path):
    t = read_ntriples(_nt(tmp_path, name="g.nt.gz"))
    assert len(t) == 10 and t.line.tolist() == [3, 4, 5, 6, 7, 8, 9, 10, 11, 12]
    assert t.subject[0].as_py() == f"{EX}Person/alice"
    assert t.predicate[0].as_py() == f"{EX}knows"
    assert t.object.to_pylist()[3:6] == ["Alice", "Alice", 'say "hi"\nété']
    assert t.object_kind.tolist()[3:7] == [LITERAL, LITERAL, LITERAL, BLANK]
    assert t.subject_kind.tolist()[7] == BLANK and t.object_kind[0] == IRI


def test_reader_names_the_bad_line(tmp_path):
    path = _nt(tmp_path, NT + f"<{EX}a> <{EX}b> oops .\n")
    with pytest.raises(DataError, match=r"g.nt:13: not an N-Triples statement: .*oops"):
        read_ntriples(path)
    (tmp_path / "latin1.nt").write_bytes(f'<{EX}a> <{EX}b> "caf\xe9" .\n'.encode("latin-1"))
    with pytest.raises(DataError, match=r"latin1.nt:1: not UTF-8 text \(byte 40 of the file\)"):
        read_ntriples(tmp_path / "latin1.nt")
    bad = tmp_path / "bad.nt.gz"
    bad.write_bytes(b"not gzip")
    with pytest.raises(DataError, match="bad.nt.gz: cannot read it"):
        read_ntriples(bad)


def test_a_control_character_in_a_literal_is_read_all_the_same(tmp_path):
    t = read_ntriples(_nt(tmp_path, f'<{EX}a> <{EX}b> "x\x01y" .\n\n<{EX}a> <{EX}c> <{EX}d> .\n'))
    assert t.object.to_pylist() == ["x\x01y", f"{EX}d"] and t.line.tolist() == [1, 3]


def test_relation_names_are_local_names_made_unique_and_valid_keys():
    names = relation_names([f"{EX}knows", "http://other.org/ns#knows",
                            "http://www.w3.org/1999/02/22-rdf-syntax-ns#type", f"{EX}a.b"])
    assert names == {f"{EX}knows": "ex_org_knows", "http://other.org/ns#knows": "ns_knows",
                     "http://www.w3.org/1999/02/22-rdf-syntax-ns#type": "rdf_type",
                     f"{EX}a.b": "a_b"}


def _load(run_toml, path, extra=""):
    return run_toml(f'[load]\ntype = "rdf"\npath = "{path}"\nentity_prefix = "{EX}"\n'
                    f"{extra}").ctx.data


def test_rdf_rules(run_toml, tmp_path):
    data = _load(run_toml, _nt(tmp_path))
    g = data.graph
    assert sorted(g.ntypes) == ["Org", "Person", "_Literal"]
    # repeated statement once; blank node and foreign IRI dropped; literals by value
    assert data.typed_ids["Person"].to_arrow().to_pylist() == [
        f"{EX}Person/alice", f"{EX}Person/bob", f"{EX}Person/carol"]
    assert sorted(data.typed_ids["_Literal"].to_arrow().to_pylist()) == [
        "Alice", 'say "hi"\nété']
    assert g.num_edges(("Person", "knows", "Person")) == 1
    assert g.num_edges(("Person", "name", "_Literal")) == 2
    assert g.num_edges(("_Literal", "rev-name", "Person")) == 2
    assert g.num_edges(("Person", "worksAt", "Org")) == 2
    assert len(g.canonical_etypes) == 8


def test_rdf_options(run_toml, tmp_path):
    path = _nt(tmp_path)
    data = _load(run_toml, path, 'node_types = "single"\nliterals = "drop"\n'
                                 'blank_nodes = "nodes"\nreverse = false\n'
                                 'remove_relations = ["name"]\n')
    g = data.graph
    assert sorted(g.ntypes) == ["_BNode", "entity"]
    # no literals (motto, name removed); the blank node kept: knows and worksAt twice each
    assert sorted(c[1] for c in g.canonical_etypes) == ["knows", "knows", "worksAt", "worksAt"]
    assert g.num_edges(("entity", "knows", "_BNode")) == 1


def _labels(tmp_path, train="person\tid\tlabel\n{EX}Person/alice\t1\tx\n{EX}Person/bob\t2\ty\n",
            test="person\tid\tlabel\n{EX}Person/carol\t3\tx\n"):
    (tmp_path / "train.tsv").write_text(train.format(EX=EX))
    (tmp_path / "test.tsv").write_text(test.format(EX=EX))
    return 'train = "train.tsv"\ntest = "test.tsv"\n'


def test_labels_and_splits_from_tsv(run_toml, tmp_path):
    data = _load(run_toml, _nt(tmp_path), _labels(tmp_path))
    frame = data.graph.nodes["Person"].data
    assert frame["label"].tolist() == [0, 1, 0] and data.meta["classes"] == ["x", "y"]
    assert frame["train_mask"].tolist() == [True, True, False]
    assert frame["test_mask"].tolist() == [False, False, True]
    assert data.meta["target"] == "Person" and data.num_classes == 2


def test_label_file_errors(run_toml, tmp_path):
    path = _nt(tmp_path)
    extra = _labels(tmp_path, test="person\tlabel\n{EX}Person/dave\tx\n")
    with pytest.raises(DataError, match=r"test.tsv:2: entity 'http://ex.org/Person/dave' is "
                                        r"not a node of the graph"):
        _load(run_toml, path, extra)
    extra = _labels(tmp_path, test="person\tlabel\n{EX}Person/alice\tx\n")
    with pytest.raises(DataError, match="already labelled by another split file"):
        _load(run_toml, path, extra)
    extra = _labels(tmp_path, test="person\tlabel\n{EX}Org/acme\tx\n")
    with pytest.raises(DataError, match="labelled entities of type 'Org'"):
        _load(run_toml, path, extra)


AIFB = """
[load]
type = "rdf"
path = "{root}/aifb_stripped.nt.gz"
entity_prefix = "http://www.aifb.uni-karlsruhe.de/"
remove_relations = ["affiliation", "employs"]
train = "{root}/trainingSet.tsv"
test = "{root}/testSet.tsv"
entity_column = "person"
label_column = "label_affiliation"
val_fraction = 0.2
"""


def test_aifb_matches_dgl_aifb_dataset(run_toml, shared_data):
    root = shared_data("aifb")
    data = run_toml(AIFB.format(root=root)).ctx.data
    g = data.graph
    # DGL's AIFBDataset (dgl/data/rdf.py, run on this file): 7 node types, 48,810 edges with
    # reverses, 104 canonical edge types over 78 names, 4 classes, 140 train / 36 test.
    assert g.num_edges() == 48810
    assert len(g.canonical_etypes) == 104 and len(set(g.etypes)) == 78
    counts = {t: g.num_nodes(t) for t in g.ntypes}
    assert counts == {"Forschungsgebiete": 146, "Forschungsgruppen": 5, "Kooperationen": 28,
                      "Personen": 237, "Projekte": 78, "Publikationen": 2053,
                      "_Literal": 5450}
    # DGL has 1,318 Publikationen (7,262 nodes in all): it names an entity by its type and
    # its last IRI segment, which merges external authors (viewExternerAutorOWL/idN) with the
    # publications of the same N. Each IRI is one node here: 1,232 + 821.
    ids = data.typed_ids["Publikationen"].to_arrow().to_pylist()
    assert len({i.rsplit("/", 1)[1] for i in ids}) == 1318
    assert sum("viewExternerAutorOWL" in i for i in ids) == 821
    frame = g.nodes["Personen"].data
    assert data.meta["target"] == "Personen" and data.num_classes == 4
    assert int(frame["train_mask"].sum()) == 112 and int(frame["val_mask"].sum()) == 28
    assert int(frame["test_mask"].sum()) == 36
    assert int((frame["label"] >= 0).sum()) == 176


def test_one_type_and_one_relation_gives_the_homogeneous_graph_with_labels(run_toml, tmp_path):
    _nt(tmp_path, f"<{EX}P/a> <{EX}knows> <{EX}P/b> .\n<{EX}P/b> <{EX}knows> <{EX}P/c> .\n")
    (tmp_path / "train.tsv").write_text(f"entity\tlabel\n{EX}P/a\tx\n{EX}P/c\ty\n")
    data = _load(run_toml, tmp_path / "g.nt", 'reverse = false\ntrain = "train.tsv"\n')
    assert not data.is_typed and data.graph.num_edges() == 2
    assert data.graph.ndata["label"].tolist() == [0, -1, 1]
    assert data.graph.ndata["train_mask"].tolist() == [True, False, True]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.text(alphabet='<>"_:@^\\ .#abc\t\x01é', max_size=30), max_size=6))
def test_any_text_is_read_or_refused_in_one_line(tmp_path_factory, lines):
    path = tmp_path_factory.mktemp("nt") / "f.nt"
    path.write_text("\n".join(lines), encoding="utf-8")
    try:
        read_ntriples(path)
    except DataError as exc:
        assert "\n" not in str(exc) and str(path) in str(exc)
