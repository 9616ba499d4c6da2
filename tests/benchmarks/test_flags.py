"""Benchmark flags that take bad values stop in one argparse line, before any work."""

import importlib.util

import pytest


def test_node2vec_step_walks_must_be_positive(refused):
    code, err = refused("node2vec.py", "--step-walks", "0")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "node2vec.py: error: --step-walks must be at least 1, got 0"


def test_node2vec_walk_repetitions_must_be_positive(refused):
    code, err = refused("node2vec.py", "--walk-reps", "0")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "node2vec.py: error: --walk-reps must be at least 1, got 0"


@pytest.mark.skipif(importlib.util.find_spec("torch_geometric") is not None,
                    reason="PyTorch Geometric is installed: the flag is valid here")
def test_gcn_pyg_peer_names_the_missing_package(refused):
    code, err = refused("gcn.py", "--peer", "pyg")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "gcn.py: error: --peer pyg needs PyTorch Geometric: pip install torch_geometric"


def test_graph_classification_workers_must_not_be_negative(refused):
    code, err = refused("graph_classification.py", "--workers", "-1")
    assert code == 2
    assert err.strip().splitlines()[-1] == \
        "graph_classification.py: error: --workers must be at least 0, got -1"


@pytest.mark.skipif(importlib.util.find_spec("gensim") is not None
                    and importlib.util.find_spec("pecanpy") is not None,
                    reason="the bench extra is installed: the end-to-end cases run here")
def test_node2vec_end_to_end_names_the_missing_peers(refused):
    code, err = refused("node2vec.py", "--quick", "--skip-walks")
    assert code == 2
    last = err.strip().splitlines()[-1]
    assert last.startswith("node2vec.py: error: the end-to-end cases need ")
    assert last.endswith("--skip-e2e runs the walks alone")
    assert "Traceback" not in err
