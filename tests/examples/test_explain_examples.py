"""The explanation examples run as documented: a run trains, then its [explain] stage writes
OUT_DIR/explain/ (Cora shortened)."""

import json
from pathlib import Path

import pyarrow.csv as pcsv
import pyarrow.parquet as pq

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_cora_gcn_explain_runs(cli, tmp_path, planetoid_root):
    code, out, err = cli("run", EXAMPLES / "cora_gcn_explain.toml", "--out-dir", tmp_path,
                         "--set", f"load.root={planetoid_root}", "--set", "train.epochs=1",
                         "--set", "explain.epochs=5")
    assert code == 0, err
    nodes = [int(v) for v in (EXAMPLES / "data" / "cora_explain_nodes.txt").read_text().split()]
    edges = pq.read_table(tmp_path / "explain" / "edges.parquet").to_pydict()
    assert sorted(set(edges["target"])) == sorted(nodes)
    for node in nodes:  # its 6 most important edges (all of them when it has fewer)
        top = [k for t, k in zip(edges["target"], edges["top_k"]) if t == node]
        assert sum(top) == min(6, len(top)) > 0
    feats = pq.read_table(tmp_path / "explain" / "features.parquet")
    assert feats.num_rows == 1433 * len(nodes)  # one importance per word column
    record = json.loads((tmp_path / "run.json").read_text())
    assert record["stages"][-1]["section"] == "explain"
    assert record["reports"]["explain"]["targets"] == len(nodes)


def test_rings_paths_explain_finds_the_end_bonds_of_paths(cli, tmp_path):
    code, out, err = cli("run", EXAMPLES / "tu_rings_paths_explain.toml", "--out-dir",
                         tmp_path, "--set", "explain.epochs=30")
    assert code == 0, err
    edges = pcsv.read_csv(tmp_path / "explain" / "edges.csv").to_pydict()
    assert set(edges["target"]) == {1, 3, 13, 15}
    folder = EXAMPLES / "data" / "rings_paths"
    atoms = [tuple(int(v) - 1 for v in line.split(","))
             for line in (folder / "RP_A.txt").read_text().splitlines() if line.strip()]
    degree = {}
    for s, _ in atoms:
        degree[s] = degree.get(s, 0) + 1
    for path in (3, 15):  # graphs 3 and 15 are paths: the top bond ends at a degree-1 atom
        rows = [(imp, s, d) for t, s, d, imp in zip(edges["target"], edges["src"],
                                                    edges["dst"], edges["importance"])
                if t == path]
        _, s, d = max(rows)
        assert 1 in (degree[s], degree[d]), rows
    summary = json.loads((tmp_path / "explain" / "explain.json").read_text())
    assert summary["level"] == "graph" and summary["top_k"] == 4


def test_bond_types_explain_puts_the_double_bond_on_top(cli, tmp_path):
    """GINE reads bond types; each explained ring has one double bond (its class), and the
    mask ranks that bond's two directed edges above every single bond."""
    code, out, err = cli("run", EXAMPLES / "tu_bond_types_explain.toml", "--out-dir", tmp_path)
    assert code == 0, err
    folder = EXAMPLES / "data" / "bond_types"
    atoms = [tuple(int(v) - 1 for v in line.split(","))
             for line in (folder / "BT_A.txt").read_text().splitlines() if line.strip()]
    bond = dict(zip(atoms, (int(v) for v in (folder / "BT_edge_labels.txt").read_text().split())))
    edges = pcsv.read_csv(tmp_path / "explain" / "edges.csv").to_pydict()
    assert set(edges["target"]) == {2, 4, 14, 16}
    for ring in (2, 4, 14, 16):
        rows = sorted(((imp, s, d) for t, s, d, imp in zip(edges["target"], edges["src"],
                                                           edges["dst"], edges["importance"])
                       if t == ring), reverse=True)
        assert [bond[(s, d)] for _, s, d in rows[:2]] == [2, 2], rows
        assert all(bond[(s, d)] == 1 for _, s, d in rows[2:]), rows
    summary = json.loads((tmp_path / "explain" / "explain.json").read_text())
    assert summary["fidelity_plus"] > summary["fidelity_minus"]
