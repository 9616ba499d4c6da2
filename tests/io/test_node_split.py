import pytest
import torch

from graphflow.io.node_split import check_sizes, stratified_split


def _labels() -> torch.Tensor:
    return torch.tensor([0] * 50 + [1] * 30 + [2] * 20)


def test_fractions_are_stratified_disjoint_and_seeded():
    labels = _labels()
    m = stratified_split(labels, 100, train=0.6, val=0.2, test=0.2, seed=3)
    assert not (m.train & m.val).any() and not (m.train & m.test).any()
    assert not (m.val & m.test).any()
    assert torch.bincount(labels[m.train], minlength=3).tolist() == [30, 18, 12]
    assert torch.bincount(labels[m.val], minlength=3).tolist() == [10, 6, 4]
    assert int((m.train | m.val | m.test).sum()) == 100
    again = stratified_split(labels, 100, train=0.6, val=0.2, test=0.2, seed=3)
    assert torch.equal(again.train, m.train) and torch.equal(again.test, m.test)
    other = stratified_split(labels, 100, train=0.6, val=0.2, test=0.2, seed=4)
    assert not torch.equal(other.train, m.train)


def test_per_class_train_and_total_counts():
    labels = _labels()
    m = stratified_split(labels, 100, train=0, val=30, test=10, seed=0, train_per_class=5)
    assert torch.bincount(labels[m.train], minlength=3).tolist() == [5, 5, 5]
    assert int(m.val.sum()) == 30 and int(m.test.sum()) == 10
    assert not (m.train & (m.val | m.test)).any()


def test_unlabelled_nodes_get_no_mask_and_no_labels_means_one_group():
    labels = torch.tensor([0, 1, -1, 0, 1, -1, 0, 1])
    m = stratified_split(labels, 8, train=0.5, val=0.25, test=0.25, seed=0)
    assert not (m.train | m.val | m.test)[labels < 0].any()
    m = stratified_split(None, 10, train=4, val=3, test=3, seed=0)
    assert [int(x.sum()) for x in (m.train, m.val, m.test)] == [4, 3, 3]


def test_impossible_sizes_are_named():
    with pytest.raises(ValueError, match=r"train \(0.7\) \+ val \(0.3\) \+ test \(0.2\)"):
        check_sizes(0.7, 0.3, 0.2)
    with pytest.raises(ValueError, match="val = -3"):
        check_sizes(0.5, -3, 0.2)
    with pytest.raises(ValueError, match="class 2 has only 20"):
        stratified_split(_labels(), 100, train=0, val=0, test=0, seed=0, train_per_class=25)
    with pytest.raises(ValueError, match="asks for 120 nodes but only 100"):
        stratified_split(_labels(), 100, train=100, val=10, test=10, seed=0)
