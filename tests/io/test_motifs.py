import networkx as nx
import pytest
import torch

from graphflow.io.motifs import ba_shapes, barabasi_albert, binary_tree, tree_cycles, tree_grid


def _nx(g):
    G = nx.Graph()
    G.add_nodes_from(range(g.num_nodes))
    G.add_edges_from(zip(g.src.tolist(), g.dst.tolist()))
    return G


def test_ba_shapes_is_the_papers_graph():
    g = ba_shapes(seed=3)
    assert g.num_nodes == 700 and g.num_classes == 4
    assert torch.bincount(g.label).tolist() == [300, 160, 160, 80]
    assert torch.equal(g.feat, torch.ones(700, 10))
    # every undirected edge both ways, no self-loops, no duplicates
    key = g.src * 700 + g.dst
    assert key.unique().numel() == key.numel() and not (g.src == g.dst).any()
    assert torch.equal((g.dst * 700 + g.src).sort().values, key.sort().values)
    # 80 houses of 6 edges are the ground truth, in both directions
    assert int(g.motif_edge.sum()) == 2 * 80 * 6
    ms, md = g.src[g.motif_edge], g.dst[g.motif_edge]
    assert torch.equal(g.motif[ms], g.motif[md]) and (g.motif[ms] >= 0).all()
    # each house is a 5-cycle... a square with a roof: roof degree 2 inside, floor 2, middle 3
    G = _nx(g)
    house = nx.Graph([(int(a), int(b)) for a, b in zip(ms, md) if g.motif[a] == 0])
    assert sorted(d for _, d in house.degree()) == [2, 2, 2, 3, 3]
    roof = 300 + 4
    assert g.label[roof] == 3 and house.degree(roof) == 2
    # the first node of motif k hangs off base node k * floor(300 / 80)
    assert G.has_edge(300 + 5 * 7, 7 * 3)
    # 10% random edges on top of base + motifs + anchors
    base = G.subgraph(range(300)).number_of_edges()
    assert nx.is_connected(G)
    assert G.number_of_edges() == pytest.approx(1.1 * (base + 480 + 80), abs=base * 0.1 + 10)


def test_seeded_and_noise_free():
    a, b = ba_shapes(seed=1), ba_shapes(seed=1)
    assert torch.equal(a.src, b.src) and torch.equal(a.motif_edge, b.motif_edge)
    assert not torch.equal(a.src, ba_shapes(seed=2).src)
    clean = tree_cycles(noise=0.0, seed=0)
    G = _nx(clean)
    assert nx.is_connected(G) and G.number_of_edges() == 510 + 80 * 6 + 80


def test_barabasi_albert_degrees_follow_preferential_attachment():
    gen = torch.Generator().manual_seed(0)
    lo, hi = barabasi_albert(2000, 3, gen)
    assert (lo < hi).all()
    deg = torch.bincount(torch.cat([lo, hi]), minlength=2000)
    assert (deg[4:] >= 1).all()
    # every later node attaches to earlier ones: up to m edges towards smaller ids
    up = torch.bincount(hi, minlength=2000)[4:]
    assert up.max() == 3 and up.float().mean() > 2.9
    # old nodes collect far more edges than young ones (a power-law tail, not uniform)
    assert deg[:100].float().mean() > 4 * deg[-1000:].float().mean()


def test_trees_cycles_and_grids():
    p, c = binary_tree(2)
    assert p.tolist() == [0, 0, 1, 1, 2, 2] and c.tolist() == [1, 2, 3, 4, 5, 6]
    g = tree_cycles(noise=0.0)
    assert g.num_nodes == 511 + 480 and g.num_classes == 2
    ms, md = g.src[g.motif_edge], g.dst[g.motif_edge]
    cyc = nx.Graph([(int(a), int(b)) for a, b in zip(ms, md) if g.motif[a] == 5])
    assert nx.cycle_basis(cyc) and len(cyc) == 6 and all(d == 2 for _, d in cyc.degree())
    grid = tree_grid(noise=0.0)
    assert grid.num_nodes == 511 + 720 and int(grid.motif_edge.sum()) == 2 * 80 * 12
    gs, gd = grid.src[grid.motif_edge], grid.dst[grid.motif_edge]
    one = nx.Graph([(int(a), int(b)) for a, b in zip(gs, gd) if grid.motif[a] == 0])
    assert nx.is_isomorphic(one, nx.grid_2d_graph(3, 3))
