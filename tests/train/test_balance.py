"""class_weights = "balanced": scikit-learn's class weights, BCE's pos_weight per column, and
the node objective's weighted losses."""

import torch
import torch.nn.functional as F

from graphflow.train.balance import balanced, balanced_class_weights, balanced_pos_weight
from graphflow.train.objective import Objective

NAN = float("nan")


def test_class_weights_are_n_over_classes_times_count():
    labels = torch.tensor([0, 0, 0, 0, 0, 0, 1, 1, 2, 0])  # 7, 2, 1 of 10; class 3 absent
    w = balanced_class_weights(labels, 4)
    torch.testing.assert_close(w, torch.tensor([10 / 28, 10 / 8, 10 / 4, 10 / 4]))
    assert torch.equal(balanced(labels, 4), w)


def test_pos_weight_is_negatives_over_positives_of_the_present_entries():
    y = torch.tensor([[1.0, 0.0, 1.0, NAN],
                      [0.0, 0.0, 1.0, NAN],
                      [0.0, NAN, 1.0, 1.0],
                      [0.0, 1.0, NAN, 0.0]])
    # column 0: 3 neg / 1 pos; 1: 2 / 1; 2: no negative -> 1; 3: 1 / 1
    torch.testing.assert_close(balanced_pos_weight(y), torch.tensor([3.0, 2.0, 1.0, 1.0]))
    torch.testing.assert_close(balanced(y, 4), balanced_pos_weight(y))


def test_the_node_objective_weighs_its_losses():
    gen = torch.Generator().manual_seed(0)
    logits = torch.randn(6, 3, generator=gen)
    labels = torch.tensor([0, 0, 0, 0, 1, 2])
    w = balanced(labels, 3)
    got = Objective.for_nodes(3, False, w).loss(logits, labels)
    per_row = F.cross_entropy(logits, labels, reduction="none") * w[labels]
    torch.testing.assert_close(got, per_row.sum() / w[labels].sum())
    multi = (torch.rand(6, 3, generator=gen) > 0.7).float()
    pw = balanced(multi, 3)
    got = Objective.for_nodes(3, True, pw).loss(logits, multi)
    p = torch.sigmoid(logits)
    manual = -(pw * multi * p.log() + (1 - multi) * (1 - p).log()).mean()
    torch.testing.assert_close(got, manual)
    # float64 logits take the weights in float64
    assert Objective.for_nodes(3, False, w).loss(logits.double(), labels).dtype == torch.float64
