import pytest
import torch

from graphflow.io.synthetic import rmat, sbm


def test_sbm_is_simple_undirected_and_seeded():
    g = sbm(300, 3, 8, p_in=0.1, p_out=0.005, seed=1)
    assert g.num_nodes == 300 and g.feat.shape == (300, 8) and g.label.shape == (300,)
    assert torch.bincount(g.label).tolist() == [100, 100, 100]
    assert (g.src != g.dst).all()
    keys = g.src * 300 + g.dst
    assert keys.unique().numel() == keys.numel()  # no duplicate edges
    reverse = set((g.dst * 300 + g.src).tolist())
    assert set(keys.tolist()) == reverse  # both directions present
    same = sbm(300, 3, 8, p_in=0.1, p_out=0.005, seed=1)
    assert torch.equal(same.src, g.src) and torch.equal(same.feat, g.feat)
    assert not torch.equal(sbm(300, 3, 8, p_in=0.1, p_out=0.005, seed=2).src, g.src)


def test_sbm_links_follow_the_blocks():
    g = sbm(600, 4, 0, p_in=0.05, p_out=0.002, seed=0)
    intra = (g.label[g.src] == g.label[g.dst]).float().mean().item()
    # expected intra share: 4 * C(150,2) * .05 / (that + 6 * 150^2 * .002) ~ 0.799
    assert 0.7 < intra < 0.9
    assert g.feat is None


def test_sbm_features_carry_the_class():
    g = sbm(400, 2, 16, p_in=0.02, p_out=0.02, seed=0, signal=3.0)
    centroid = torch.stack([g.feat[g.label == c].mean(0) for c in (0, 1)])
    nearest = torch.cdist(g.feat, centroid).argmin(1)
    assert (nearest == g.label).float().mean() > 0.95


def test_rmat_sizes_range_and_skew():
    g = rmat(5000, 60000, seed=3, chunk=7000)  # several chunks
    assert g.src.numel() == g.dst.numel() == 60000
    assert 0 <= g.src.min() and g.src.max() < 5000 and g.dst.max() < 5000
    indeg = torch.bincount(g.dst, minlength=5000).float()
    assert indeg.max() > 20 * indeg.mean()  # heavy tail
    again = rmat(5000, 60000, seed=3, chunk=7000)
    assert torch.equal(again.src, g.src) and torch.equal(again.dst, g.dst)


def test_generators_reject_bad_arguments():
    import pytest

    with pytest.raises(ValueError, match="nodes > 0"):
        sbm(0, 2, 2, p_in=0.1, p_out=0.1)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        sbm(10, 2, 2, p_in=1.5, p_out=0.1)
    with pytest.raises(ValueError, match="a \\+ b \\+ c < 1"):
        rmat(10, 10, a=0.5, b=0.3, c=0.3)


def test_overlapping_communities_are_undirected_multilabel_and_dense():
    from graphflow.io.synthetic import overlapping_communities

    g = overlapping_communities(600, 12, 40.0, seed=3)
    assert g.label.shape == (600, 12) and set(g.label.unique().tolist()) <= {0.0, 1.0}
    assert (g.label.sum(1) >= 1).all() and g.label.sum(1).mean() > 1.2  # overlapping
    sizes = g.label.sum(0)
    assert sizes[0] > 3 * sizes[-1]  # popularity-skewed
    key = g.src * 600 + g.dst
    assert torch.equal(torch.sort(key).values, torch.sort(g.dst * 600 + g.src).values)
    assert key.unique().numel() == key.numel() and not (g.src == g.dst).any()
    assert 30 < g.src.numel() / 600 <= 40  # mean degree near the target
    again = overlapping_communities(600, 12, 40.0, seed=3)
    assert torch.equal(again.src, g.src) and torch.equal(again.label, g.label)
    with pytest.raises(ValueError, match="within in"):
        overlapping_communities(600, 12, 40.0, within=1.5)


def test_powerlaw_communities_have_hubs_planted_classes_and_no_duplicates():
    from graphflow.io.synthetic import powerlaw_communities

    g = powerlaw_communities(2000, 4, 10.0, across=0.2, seed=5)
    assert g.label.shape == (2000,) and g.label.dtype == torch.int64
    key = g.src * 2000 + g.dst
    assert torch.equal(torch.sort(key).values, torch.sort(g.dst * 2000 + g.src).values)
    assert key.unique().numel() == key.numel() and not (g.src == g.dst).any()
    degree = torch.bincount(g.src, minlength=2000)
    assert 7 < degree.float().mean() <= 10  # near the target, below it (duplicates dropped)
    assert degree.max() > 10 * degree.float().median()  # hubs: a heavy tail
    inside = (g.label[g.src] == g.label[g.dst]).float().mean()
    assert 0.75 < inside < 0.9  # 80% drawn inside a class, plus chance meetings
    again = powerlaw_communities(2000, 4, 10.0, across=0.2, seed=5)
    assert torch.equal(again.src, g.src) and torch.equal(again.label, g.label)
    with pytest.raises(ValueError, match="exponent > 1"):
        powerlaw_communities(100, 2, 5.0, across=0.2, exponent=1.0)
