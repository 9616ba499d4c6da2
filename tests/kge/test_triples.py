"""The triples reader and the ``triples`` loader: names kept, bad input in one line."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from graphflow.errors import DataError
from graphflow.kge.triples import read_triples


def write(folder: Path, train: str, valid: str = "a\tr\tb\n", test: str = "b\tr\tc\n",
          **extra: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.txt").write_text(train)
    (folder / "valid.txt").write_text(valid)
    (folder / "test.txt").write_text(test)
    for name, text in extra.items():
        (folder / name.replace("_", ".")).write_text(text)
    return folder


def test_reads_names_and_indices(tmp_path):
    kg = read_triples(write(tmp_path, "a\tr\tb\nb\ts\tc\n\n"))
    assert list(kg.entities) == ["a", "b", "c"] and list(kg.relations) == ["r", "s"]
    assert kg.splits["train"].tolist() == [[0, 0, 1], [1, 1, 2]]
    assert kg.splits["test"].tolist() == [[1, 0, 2]]
    assert len(kg.known()) == 3  # the valid triple repeats a training one


def test_dicts_set_the_order(tmp_path):
    folder = write(tmp_path, "a\tr\tb\nb\tr\tc\n", entities_dict="0\tc\n1\tb\n2\ta\n",
                   relations_dict="0\tr\n")
    kg = read_triples(folder)
    assert list(kg.entities) == ["c", "b", "a"]
    assert kg.splits["train"].tolist() == [[2, 0, 1], [1, 0, 0]]


@pytest.mark.parametrize("train, message", [
    ("a\tr\tb\na\tr\n", "train.txt, line 2: expected 3 tab-separated fields"),
    ("a\tr\tb\na\tr\tb\tc\n", "train.txt, line 2: expected 3"),
    ("a\tr\tb\na\tr\tb\tc\td\n", "train.txt, line 2: expected 3"),
    ("\n\n", "train.txt: the train split is empty"),
])
def test_bad_lines(tmp_path, train, message):
    with pytest.raises(DataError, match=message):
        read_triples(write(tmp_path, train))


def test_dict_that_disagrees(tmp_path):
    folder = write(tmp_path, "a\tr\tb\nb\tr\tc\n", entities_dict="0\ta\n1\tb\n")
    with pytest.raises(DataError, match=r"train.txt, line 2: the entity 'c' is not in .*"
                                        r"entities.dict"):
        read_triples(folder)
    folder = write(tmp_path / "x", "a\tr\tb\n", entities_dict="0\ta\n0\tb\n")
    with pytest.raises(DataError, match="entities.dict, line 2: index 0 repeats"):
        read_triples(folder)


def test_unseen_error_drop_keep(tmp_path):
    folder = write(tmp_path, "a\tr\tb\nb\tr\tc\n", test="a\tr\tz\nb\tr\tc\n")
    with pytest.raises(DataError, match=r'test.txt, line 1: 1 test triples .* unseen = "drop"'):
        read_triples(folder)
    said = []
    kg = read_triples(folder, unseen="drop", info=said.append)
    assert kg.splits["test"].tolist() == [[1, 0, 2]] and "dropped 1 test" in said[0]
    kg = read_triples(folder, unseen="keep")
    assert len(kg.splits["test"]) == 2 and "z" in list(kg.entities)


def test_loader_builds_a_typed_graph(tmp_path):
    from graphflow_plugins.loaders.triples import kg_graph

    kg = read_triples(write(tmp_path, "a\tr\tb\nb\ts\tc\nc\tr\ta\n"))
    data = kg_graph(kg)
    assert data.is_typed and data.graph.num_nodes() == 3
    assert data.graph.num_edges(("entity", "r", "entity")) == 2
    assert data.typed_ids["entity"].to_arrow().to_pylist() == ["a", "b", "c"]
    assert data.meta["kg"] is kg
    assert torch.equal(kg.splits["train"][:, 1], torch.tensor([0, 1, 0]))
