import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
import torch

from graphflow.errors import DataError


@pytest.fixture
def blogcatalog_like(tmp_path):
    """A BlogCatalog-shaped .mat: symmetric sparse 'network', sparse multi-label 'group'."""
    a = sp.random(40, 40, density=0.1, format="csc", random_state=0)
    a = ((a + a.T) > 0).astype(np.float64)
    a.setdiag(0)
    a.eliminate_zeros()
    group = sp.random(40, 5, density=0.3, format="csc", random_state=1)
    group.data[:] = 1
    scipy.io.savemat(tmp_path / "blog.mat", {"network": a, "group": group})
    return a, group


def test_blogcatalog_layout(run_toml, blogcatalog_like):
    a, group = blogcatalog_like
    data = run_toml('[load]\ntype = "mat"\npath = "blog.mat"\n').ctx.data
    g = data.graph
    assert data.num_nodes == 40 and data.num_edges == a.nnz
    src, dst = g.edges()
    assert np.array_equal(a.toarray()[src.numpy(), dst.numpy()], np.ones(a.nnz))
    assert g.ndata["label"].dtype == torch.float32 and data.multilabel
    assert np.array_equal(g.ndata["label"].numpy(), group.toarray())
    assert "weight" not in g.edata and data.ids.is_identity


def test_weights_features_and_single_label(run_toml, tmp_path):
    a = sp.csr_matrix(np.array([[0, 2.0, 0], [2.0, 0, 0.5], [0, 0.5, 0]]))
    scipy.io.savemat(tmp_path / "w.mat", {"A": a, "y": np.array([[0], [1], [1]]),
                                          "X": np.eye(3)})
    data = run_toml('[load]\ntype = "mat"\npath = "w.mat"\nadjacency = "A"\nlabels = "y"\n'
                    'features = "X"').ctx.data
    assert sorted(data.graph.edata["weight"].tolist()) == [0.5, 0.5, 2.0, 2.0]
    assert data.graph.ndata["label"].tolist() == [0, 1, 1]
    assert torch.equal(data.graph.ndata["feat"], torch.eye(3))


def test_errors(run_toml, tmp_path, blogcatalog_like):
    with pytest.raises(DataError, match=r"blog.mat has no variable 'adj'; its variables: "
                                        r"network, group \(set adjacency / labels / features"):
        run_toml('[load]\ntype = "mat"\npath = "blog.mat"\nadjacency = "adj"\n')
    with pytest.raises(DataError, match=r"\.mat file not found: .*none.mat"):
        run_toml('[load]\ntype = "mat"\npath = "none.mat"\n')
    (tmp_path / "junk.mat").write_bytes(b"not a matlab file at all" * 10)
    with pytest.raises(DataError, match=r"junk.mat is not a readable MATLAB file"):
        run_toml('[load]\ntype = "mat"\npath = "junk.mat"\n')


def test_bytes_that_crashed_scipy_get_one_line_from_the_cli(tmp_path):
    """The .mat bytes that made scipy's reader segfault the whole process (exported to CSV):
    now exit 1, one line naming the file, nothing written but the failed run's record."""
    import json
    import subprocess
    import sys

    from fuzzing.found import scipy_segfault_mat

    (tmp_path / "graph.mat").write_bytes(scipy_segfault_mat())
    (tmp_path / "pipeline.toml").write_text(
        '[load]\ntype = "mat"\npath = "graph.mat"\nlabels = ""\n'
        '[[export]]\ntype = "csv"\nwhat = "graph"\n')
    proc = subprocess.run([sys.executable, "-m", "graphflow", "run", "pipeline.toml",
                           "--out-dir", "out"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert "graph.mat is not a readable MATLAB file (element type 78 at byte 208" in lines[0]
    written = sorted(p.name for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert all(not name.endswith(".csv") and not name.endswith(".partial") for name in written)
    if "run.json" in written:
        assert json.loads((tmp_path / "out" / "run.json").read_text())["status"] == "failed"
