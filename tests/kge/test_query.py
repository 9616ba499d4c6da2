"""Completion queries: top-k answers with names, scores and known flags."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from graphflow.errors import DataError
from graphflow.kge.models import DistMult
from graphflow.kge.query import answer, read_queries
from graphflow.kge.triples import KnowledgeGraph


@pytest.fixture
def kg():
    tri = torch.tensor([[0, 0, 1], [1, 0, 2], [2, 1, 0]])
    return KnowledgeGraph(entities=np.array(["a", "b", "c"], dtype=object),
                          relations=np.array(["r", "s"], dtype=object),
                          splits={"train": tri, "valid": tri[:1], "test": tri[1:2]})


def test_answers_tail_and_head_queries(kg, tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("a\tr\t?\n?\ts\ta\n")
    queries, side = read_queries(path, kg)
    assert queries.tolist() == [[0, 0, -1], [-1, 1, 0]] and side.tolist() == [True, False]
    torch.manual_seed(0)
    model = DistMult(3, 2, 4)
    table = answer(model, kg, queries, side, k=3)
    assert len(table) == 6 and table["rank"].tolist() == [1, 2, 3, 1, 2, 3]
    first = table[table["query"] == 0]
    with torch.no_grad():
        expected = model.score_t(torch.tensor([0]), torch.tensor([0]))[0]
    assert sorted(first["tail"]) == ["a", "b", "c"]
    for _, row in first.iterrows():
        assert row["score"] == pytest.approx(float(expected[["a", "b", "c"].index(row["tail"])]))
        assert row["known"] == (row["tail"] == "b")
    second = table[table["query"] == 1]
    assert set(second["tail"]) == {"a"} and second["known"].sum() == 1  # (c, s, a)
    assert second[second["known"]]["head"].tolist() == ["c"]


@pytest.mark.parametrize("text, message", [
    ("a\tr\tb\n", "line 1: put \\? in exactly one"),
    ("a\tr\t?\nz\tr\t?\n", "line 2: unknown entity 'z'"),
    ("a\tq\t?\n", "line 1: unknown relation 'q'"),
])
def test_bad_queries(kg, tmp_path, text, message):
    path = tmp_path / "q.txt"
    path.write_text(text)
    with pytest.raises(DataError, match=message):
        read_queries(path, kg)
