"""standard_units: per-target mean and standard deviation over the present entries."""

import torch

from graphflow.graphs.objective import GraphObjective, standard_units

NAN = float("nan")


def test_moments_leave_missing_entries_out_and_keep_flat_targets_at_one():
    y = torch.tensor([[1.0, 5.0, NAN, 7.0],
                      [3.0, NAN, NAN, 7.0],
                      [5.0, 9.0, NAN, 7.0]])
    mean, std = standard_units(y)
    torch.testing.assert_close(mean, torch.tensor([3.0, 7.0, 0.0, 7.0]))
    # population std of (1, 3, 5) and of (5, 9); no entries and a constant target: 1
    torch.testing.assert_close(std, torch.tensor([(8 / 3) ** 0.5, 2.0, 1.0, 1.0]))


def test_the_regression_loss_in_standard_units():
    scores = torch.tensor([[12.0, 1.0], [8.0, NAN]])
    y = torch.tensor([[10.0, 2.0], [9.0, NAN]])
    scale = torch.tensor([2.0, 4.0])
    mse = GraphObjective("regression", 2, "mse", scale=scale).loss(scores, y)
    torch.testing.assert_close(mse, torch.tensor(((2 / 2) ** 2 + (1 / 4) ** 2 + (1 / 2) ** 2) / 3))
    l1 = GraphObjective("regression", 2, "l1", scale=scale).loss(scores, y)
    torch.testing.assert_close(l1, torch.tensor((2 / 2 + 1 / 4 + 1 / 2) / 3))


def test_class_weights_and_positive_weights_in_the_graph_losses():
    scores = torch.tensor([[2.0, -1.0], [0.5, 0.3], [-1.0, 1.0]])
    labels = torch.tensor([0, 0, 1])
    w = torch.tensor([0.75, 1.5])
    got = GraphObjective("classes", 2, weight=w).loss(scores, labels)
    per_row = torch.nn.functional.cross_entropy(scores, labels, reduction="none") * w[labels]
    torch.testing.assert_close(got, per_row.sum() / w[labels].sum())
    y = torch.tensor([[1.0, NAN], [0.0, 1.0], [0.0, 0.0]])
    pos = torch.tensor([2.0, 1.0])
    got = GraphObjective("binary", 2, weight=pos).loss(scores, y)
    p = torch.sigmoid(scores)
    terms = -(pos * y * p.log() + (1 - y) * (1 - p).log())  # NaN where the target is missing
    torch.testing.assert_close(got, terms[~torch.isnan(y)].mean())


def test_figures_name_what_report_gives():
    gen = torch.Generator().manual_seed(0)
    scores = torch.randn(6, 3, generator=gen)
    cases = [GraphObjective("classes", 3), GraphObjective("classes", 2),
             GraphObjective("binary", 3), GraphObjective("regression", 3)]
    targets = [torch.tensor([0, 1, 2, 0, 1, 2]), torch.tensor([0, 1, 0, 1, 0, 1]),
               (torch.rand(6, 3, generator=gen) > 0.5).float(), torch.randn(6, 3, generator=gen)]
    for objective, y in zip(cases, targets):
        s = scores[:, :2] if objective.out_dim == 2 else scores
        assert set(objective.report(s, y)) == set(objective.figures), objective.kind
