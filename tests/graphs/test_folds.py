"""Splits of graphs: stratified folds, the validation hold-out, fold files."""

import json

import pyarrow as pa
import pytest
import torch

from graphflow.errors import DataError
from graphflow.graphs.folds import fold_parts, read_fold_file, stratified_folds


def test_folds_partition_the_graphs_and_keep_class_shares():
    labels = torch.tensor([0] * 60 + [1] * 30)
    folds = stratified_folds(labels, 90, 10, seed=0)
    assert sorted(torch.cat(folds).tolist()) == list(range(90))
    for f in folds:
        assert f.numel() == 9
        assert int(labels[f].sum()) == 3  # a third positive, as in the whole set
    again = stratified_folds(labels, 90, 10, seed=0)
    assert all(torch.equal(a, b) for a, b in zip(folds, again))
    assert not all(torch.equal(a, b) for a, b in
                   zip(folds, stratified_folds(labels, 90, 10, seed=1)))


def test_fold_parts_hold_out_a_stratified_validation_share():
    labels = torch.tensor([0] * 60 + [1] * 40)
    test = stratified_folds(labels, 100, 10, seed=0)[0]
    fold = fold_parts(test, 100, labels, val_fraction=0.1, seed=0)
    parts = [fold.train, fold.val, fold.test]
    assert sum(p.numel() for p in parts) == 100
    assert len(set(torch.cat(parts).tolist())) == 100
    assert fold.val.numel() == 9 and 3 <= int(labels[fold.val].sum()) <= 4


def write(tmp_path, folds):
    path = tmp_path / "folds.json"
    path.write_text(json.dumps(folds))
    return path


def test_fold_file_by_position_and_by_id(tmp_path):
    ids = pa.array(["g1", "g2", "g3", "g4"])
    by_pos = read_fold_file(write(tmp_path, [{"train": [0, 1], "test": [2, 3]}]), ids,
                            index="position")
    by_id = read_fold_file(write(tmp_path, [{"train": ["g1", "g2"], "test": ["g3", "g4"]}]),
                           ids, index="id")
    for (a, b), (c, d) in zip(by_pos, by_id):
        assert torch.equal(a, c) and torch.equal(b, d)


@pytest.mark.parametrize("folds, message", [
    ([{"train": [0, 1, 2], "test": [2, 3]}], "fold 0: graph 2 is in both train and test"),
    ([{"train": [0, 1], "test": [2, 9]}], "fold 0: test position 9 is out of range (0..3)"),
    ([{"train": [0, 0], "test": [2]}], "fold 0: train lists graph 0 more than once"),
    ([{"train": [0]}], 'fold 0: needs "train" and "test" lists'),
])
def test_fold_file_errors_name_the_fold(tmp_path, folds, message):
    path = write(tmp_path, folds)
    with pytest.raises(DataError) as err:
        read_fold_file(path, pa.array([1, 2, 3, 4]), index="position")
    assert message in str(err.value) and str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_fold_file_unknown_id(tmp_path):
    path = write(tmp_path, [{"train": [1, 2], "test": [7]}])
    with pytest.raises(DataError, match="graph id 7, which the collection does not have"):
        read_fold_file(path, pa.array([1, 2, 3, 4]), index="id")
